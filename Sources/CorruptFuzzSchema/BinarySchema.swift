/// A binary user-data layout: what a Kaitai Struct `.ksy` file describes, plus what fuzzing
/// needs (checksums, version fields, orderings), as Swift values.
///
/// Build one in Swift for the test-support module, or load a `.ksy` file with ``KSYLoader``;
/// both give the same model, and from it a generator, a parser, a reference validator, an
/// encoder and structure-aware mutations.
public struct BinarySchema: Sendable {
    /// The schema's name (`meta/id`).
    public var id: String
    /// The default byte order of integers (`meta/endian`).
    public var endian: Endian
    /// The usual file extension (`meta/file-extension`), without the dot.
    public var fileExtension: String
    /// The top-level fields, in order.
    public var root: TypeDefinition
    /// Named user types (`types`).
    public var types: [String: TypeDefinition]
    /// Named enums (`enums`): value → name.
    public var enums: [String: [Int128: String]]
    /// Whether bytes after the last top-level field are allowed (`-allow-trailing`); they are not
    /// by default, since trailing garbage in user data means something went wrong.
    public var allowsTrailingBytes: Bool

    public init(
        id: String, endian: Endian = .little, fileExtension: String = "", root: TypeDefinition,
        types: [String: TypeDefinition] = [:], enums: [String: [Int128: String]] = [:], allowsTrailingBytes: Bool = false
    ) {
        self.id = id
        self.endian = endian
        self.fileExtension = fileExtension
        self.root = root
        self.types = types
        self.enums = enums
        self.allowsTrailingBytes = allowsTrailingBytes
    }
}

public enum Endian: String, Sendable, Hashable {
    case little = "le"
    case big = "be"
}

/// A record type: a sequence of fields, and instances read at computed offsets.
public struct TypeDefinition: Sendable {
    public var seq: [Field]
    /// `instances` with `pos`: fields read at an offset (from the start of the type's stream)
    /// that a `seq` field gives, such as a table of contents pointing at its data.
    public var instances: [Field]

    public init(seq: [Field], instances: [Field] = []) {
        self.seq = seq
        self.instances = instances
    }
}

/// One field of a record.
public struct Field: Sendable {
    public var id: String
    public var type: FieldType
    /// `size`: the byte length of a string, byte array or sized user type.
    public var size: Expression?
    /// `size-eos`: the field runs to the end of its stream.
    public var sizeEOS = false
    /// `repeat`.
    public var repetition: Repetition?
    /// `if`: the field is present only when this holds.
    public var condition: Expression?
    /// `enum`: the name of the enum an integer field takes its values from.
    public var enumName: String?
    /// `valid`: constraints on the value (on each element, for repeated fields).
    public var valid: Constraint?
    /// `-version`: this integer is the format version; values above `current` mean a file from
    /// a newer app (reason `unsupported-version`), not a corrupt one.
    public var version: VersionRule?
    /// `-checksum`: this integer is a checksum over earlier bytes.
    public var checksum: ChecksumRule?
    /// `-order`: elements of a repeated integer field must increase.
    public var order: Ordering?
    /// `encoding` of a string (UTF-8 and ASCII are checked).
    public var encoding: String = "UTF-8"
    /// `pos`, for instances: where the field starts, from the start of its type's stream.
    public var position: Expression?

    public init(id: String, type: FieldType) {
        self.id = id
        self.type = type
    }
}

/// What a field holds.
public indirect enum FieldType: Sendable {
    /// An integer of 1, 2, 4 or 8 bytes.
    case integer(width: Int, signed: Bool, endian: Endian?)
    /// An IEEE float of 4 or 8 bytes.
    case float(width: Int, endian: Endian?)
    /// Fixed bytes (`contents`), e.g. a magic number.
    case contents([UInt8])
    /// Raw bytes (`size` or `size-eos`).
    case bytes
    /// A string (`type: str` with `size`, or `strz` terminated by a zero byte).
    case string(zeroTerminated: Bool)
    /// A user type from `types`.
    case user(String)
    /// A type chosen by another field's value (`switch-on`); unknown values read raw bytes.
    case switchOn(Expression, cases: [Int128: String], defaultType: String?)

    /// The byte width of fixed-size scalars.
    public var fixedWidth: Int? {
        switch self {
        case .integer(let width, _, _), .float(let width, _): width
        case .contents(let bytes): bytes.count
        default: nil
        }
    }
}

public enum Repetition: Sendable {
    /// `repeat: expr`: exactly this many elements.
    case count(Expression)
    /// `repeat: eos`: elements until the stream ends.
    case untilEnd
    /// `repeat: until`: elements until the condition holds for the last one (`_`).
    case until(Expression)
}

/// `valid`: equality, bounds or a set of allowed values.
public struct Constraint: Sendable {
    public var equals: Int128?
    public var min: Int128?
    public var max: Int128?
    public var anyOf: [Int128]?
    /// `expr`: an expression over `_` that must hold.
    public var expression: Expression?

    public init(equals: Int128? = nil, min: Int128? = nil, max: Int128? = nil, anyOf: [Int128]? = nil, expression: Expression? = nil) {
        self.equals = equals
        self.min = min
        self.max = max
        self.anyOf = anyOf
        self.expression = expression
    }
}

public struct VersionRule: Sendable {
    /// The newest version the app understands.
    public var current: Int128

    public init(current: Int128) { self.current = current }
}

public struct ChecksumRule: Sendable {
    public enum Algorithm: String, Sendable, CaseIterable {
        case crc32
        case adler32
    }

    public var algorithm: Algorithm
    /// The field where the checksummed span starts (nil: the start of the file); it ends just
    /// before the checksum field.
    public var from: String?

    public init(algorithm: Algorithm, from: String? = nil) {
        self.algorithm = algorithm
        self.from = from
    }
}

public enum Ordering: String, Sendable {
    case increasing
    case strictlyIncreasing = "strictly-increasing"
}
