/// A schema prepared once for the parser and encoder, which run it for every input: what each
/// field needs at run time is worked out here (byte order, text check, checksum start, user
/// type, the roles the encoder's spans report), and fields are shared references, so reading
/// one costs no copy of its many optional parts.
final class SchemaPlan: Sendable {
    let id: String
    let root: TypePlan
    let types: [String: TypePlan]
    let enums: [String: [Int128: String]]
    let allowsTrailingBytes: Bool
    /// What a record of an unknown type is written as: nothing.
    let emptyType: TypePlan

    init(_ schema: BinarySchema) {
        id = schema.id
        root = TypePlan(schema.root, schema: schema)
        types = schema.types.mapValues { TypePlan($0, schema: schema) }
        enums = schema.enums
        allowsTrailingBytes = schema.allowsTrailingBytes
        emptyType = TypePlan(TypeDefinition(seq: []), schema: schema)
    }
}

/// A record type prepared for reading and writing.
final class TypePlan: Sendable {
    let definition: TypeDefinition
    let fields: [FieldPlan]
    let instances: [FieldPlan]
    /// The fields' ids, in order, for resolving names in expressions.
    let ids: [String]
    /// Whether a field is a checksum whose span starts at another field, so that the parser
    /// must note where fields start.
    let notesFieldStarts: Bool

    init(_ definition: TypeDefinition, schema: BinarySchema) {
        self.definition = definition
        let ids = definition.seq.map(\.id)
        self.ids = ids
        fields = definition.seq.map { FieldPlan($0, in: definition, ids: ids, schema: schema) }
        instances = definition.instances.map { FieldPlan($0, in: definition, ids: ids, schema: schema) }
        notesFieldStarts = definition.seq.contains { $0.checksum != nil }
    }

    /// The index of the first field named `name`.
    func index(of name: String) -> Int? { ids.firstIndex(of: name) }
}

/// A field prepared for reading and writing.
final class FieldPlan: Sendable {
    enum TextCheck {
        case utf8
        case ascii
        case none
    }

    let field: Field
    let id: String
    /// The byte order of an integer or float field, the schema's default applied.
    let bigEndian: Bool
    /// What the field's `encoding` asks the parser to check.
    let textCheck: TextCheck
    /// For a checksum: the index of the field its span starts at (nil: the start of the file).
    let checksumFrom: Int?
    /// A string read up to a zero byte, rather than for a size.
    let readsToZero: Bool
    /// Whether the field's `size` names a sibling that the encoder sets from the data (rather
    /// than a size the data must follow, such as `len % 2`).
    let sizeIsDerived: Bool
    /// The roles a span of this field reports.
    let isCount: Bool
    let isLength: Bool
    let isOffset: Bool

    init(_ field: Field, in definition: TypeDefinition, ids: [String], schema: BinarySchema) {
        self.field = field
        id = field.id
        switch field.type {
        case .integer(_, _, let endian), .float(_, let endian): bigEndian = (endian ?? schema.endian) == .big
        default: bigEndian = schema.endian == .big
        }
        switch field.encoding.uppercased() {
        case "UTF-8", "UTF8": textCheck = .utf8
        case "ASCII": textCheck = .ascii
        default: textCheck = .none
        }
        checksumFrom = field.checksum?.from.flatMap { ids.firstIndex(of: $0) }
        if case .string(true) = field.type, field.size == nil, !field.sizeEOS { readsToZero = true } else { readsToZero = false }
        sizeIsDerived = field.size?.referencedSibling != nil
        isOffset = definition.instances.contains { $0.position?.referencedSibling == field.id }
        isCount = definition.seq.contains {
            if case .count(let e)? = $0.repetition { return e.referencedSibling == field.id } else { return false }
        }
        isLength = definition.seq.contains { $0.size?.referencedSibling == field.id }
    }
}
