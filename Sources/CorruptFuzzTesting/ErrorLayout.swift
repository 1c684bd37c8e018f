import CorruptFuzzCore
import Foundation

/// How the errors of one type are described: the reason word and `String(describing:)`.
///
/// The common shape of an app's error is a plain struct of Strings, Ints and Bools
/// (`HabitLoadError(reason: "corrupt", message: "…")`). For that shape the type's stored
/// properties are listed once, from the first error's `Mirror`, with their offsets worked out
/// as a struct of those fields is laid out (in declaration order, each at its alignment) and
/// then checked: the struct's size must be that layout's, and every field read at its offset
/// must equal what the mirror shows. Each error is then written from its fields read in place,
/// as the standard library's printing writes it. Any other error (an enum, a class, a struct
/// with other properties, one that describes itself, a layout that did not check out) is
/// described by the standard library: reflecting a value costs microseconds, more than most
/// loaders spend on a corrupt file, and a campaign meets a new error value (a new offset in
/// its message) every few dozen inputs.
///
/// `CORRUPT_FUZZ_PLAIN_ERRORS=1` turns the fields off: every error is then described by the
/// standard library (the tests compare both paths on every shape of error and string).
struct ErrorLayout: Sendable {
    enum Kind: Sendable {
        case string
        case int
        case bool
    }

    struct Field: Sendable {
        var name: String
        var offset: Int
        var kind: Kind
    }

    /// The type the layout is of.
    let type: ObjectIdentifier
    /// `String(describing: type(of: error))` (it demangles the name every time).
    let typeName: String
    /// The stored properties of a plain struct, in order; nil for any other error.
    let fields: [Field]?

    /// - Parameter readingFields: Whether a plain struct's fields are read in place (false: the
    ///   standard library describes every error, as `CORRUPT_FUZZ_PLAIN_ERRORS=1` makes it).
    init(of error: any Error, readingFields: Bool = readsFields) {
        let type = Swift.type(of: error)
        self.type = ObjectIdentifier(type)
        typeName = String(describing: type)
        fields = Self.plainFields(of: error, enabled: readingFields)
    }

    /// The reason word and the message of `error`, which is of this layout's type.
    func describe(_ error: any Error) -> (reason: Reason, message: String) {
        if let fields, let read = Self.read(error, fields, of: type, typeName: typeName) {
            return (Reason(read.reason ?? typeName), read.message)
        }
        return (reasonWord(for: error), String(describing: error))
    }

    /// Whether fields are read in place (unless `CORRUPT_FUZZ_PLAIN_ERRORS` is set).
    static let readsFields = ProcessInfo.processInfo.environment["CORRUPT_FUZZ_PLAIN_ERRORS"].map { $0.isEmpty || $0 == "0" } ?? true

    /// The fields of `error`, when its type is a plain struct of Strings, Ints and Bools that
    /// `String(describing:)` reflects, and their offsets check out.
    static func plainFields(of error: any Error, enabled: Bool = readsFields) -> [Field]? {
        // `String(describing:)` prefers these to reflection; a custom mirror changes what
        // reflection shows; a class or an enum prints differently.
        guard enabled, !describesItself(error) else { return nil }
        let mirror = Mirror(reflecting: error)
        guard mirror.displayStyle == .struct, mirror.superclassMirror == nil else { return nil }
        var fields: [Field] = []
        var end = 0
        for child in mirror.children {
            guard let name = child.label else { return nil }
            let kind: Kind
            let size: Int
            let alignment: Int
            // The field's own type (`is String` would also hold for an Optional holding one).
            let type = Swift.type(of: child.value)
            if type == String.self {
                (kind, size, alignment) = (.string, MemoryLayout<String>.size, MemoryLayout<String>.alignment)
            } else if type == Int.self {
                (kind, size, alignment) = (.int, MemoryLayout<Int>.size, MemoryLayout<Int>.alignment)
            } else if type == Bool.self {
                (kind, size, alignment) = (.bool, MemoryLayout<Bool>.size, MemoryLayout<Bool>.alignment)
            } else {
                return nil
            }
            let offset = (end + alignment - 1) / alignment * alignment
            fields.append(Field(name: name, offset: offset, kind: kind))
            end = offset + size
        }
        return checks(error, fields, size: end, against: mirror) ? fields : nil
    }

    /// Whether `error`'s size is `size` and each field read at its offset is what the mirror
    /// shows: the scalars are compared first (read as plain integers, any bits are safe), so a
    /// String is read only where the layout is known to hold one.
    private static func checks<E: Error>(_ error: E, _ fields: [Field], size: Int, against mirror: Mirror) -> Bool {
        guard MemoryLayout<E>.size == size else { return false }
        let values = mirror.children.map(\.value)
        return withUnsafeBytes(of: error) { raw in
            for (field, value) in zip(fields, values) {
                switch field.kind {
                case .int: if raw.loadUnaligned(fromByteOffset: field.offset, as: Int.self) != value as? Int { return false }
                case .bool: if raw.load(fromByteOffset: field.offset, as: UInt8.self) != ((value as? Bool) == true ? 1 : 0) { return false }
                case .string: continue
                }
            }
            for (field, value) in zip(fields, values) where field.kind == .string {
                if raw.load(fromByteOffset: field.offset, as: String.self) != value as? String { return false }
            }
            return true
        }
    }

    /// A hash of `error`'s fields, for a plain struct of this layout's type (nil otherwise):
    /// errors with equal hashes are taken to be equal (64 bits: see ``RejectionDescriber``).
    func key(_ error: any Error) -> Int? {
        guard let fields else { return nil }
        return Self.key(error, fields, of: type)
    }

    private static func key<E: Error>(_ error: E, _ fields: [Field], of type: ObjectIdentifier) -> Int? {
        guard ObjectIdentifier(E.self) == type else { return nil }
        return withUnsafeBytes(of: error) { raw in
            var hash = WordHash()
            for field in fields {
                switch field.kind {
                case .string: hash.add(raw.load(fromByteOffset: field.offset, as: String.self))
                case .int: hash.add(raw.load(fromByteOffset: field.offset, as: Int.self))
                case .bool: hash.add(raw.load(fromByteOffset: field.offset, as: Bool.self) ? 1 : 0)
                }
            }
            return Int(truncatingIfNeeded: hash.value)
        }
    }

    /// Whether `String(describing:)` would ask the value rather than reflect it. Generic over
    /// any type, as the standard library's printing is, so the casts ask what the error's own
    /// type conforms to.
    private static func describesItself<T>(_ value: T) -> Bool {
        value is any CustomStringConvertible || value is any CustomDebugStringConvertible || value is any TextOutputStreamable
            || value is any CustomReflectable
    }

    /// `error`'s fields read in place (the error is opened as its own type: its bytes are the
    /// struct's), written as `Name(label: "text", count: 3, fatal: true)`; nil if `error` is
    /// not of the type the fields were listed for.
    private static func read<E: Error>(
        _ error: E, _ fields: [Field], of type: ObjectIdentifier, typeName: String
    ) -> (reason: String?, message: String)? {
        guard ObjectIdentifier(E.self) == type else { return nil }
        return withUnsafeBytes(of: error) { raw -> (reason: String?, message: String)? in
            var reason: String?
            var message = typeName + "("
            for (index, field) in fields.enumerated() {
                if index > 0 { message += ", " }
                message += field.name + ": "
                switch field.kind {
                case .string:
                    let text = raw.load(fromByteOffset: field.offset, as: String.self)
                    if field.name == "reason" { reason = text }
                    message += quoted(text)
                case .int:
                    message += String(raw.load(fromByteOffset: field.offset, as: Int.self))
                case .bool:
                    message += raw.load(fromByteOffset: field.offset, as: Bool.self) ? "true" : "false"
                }
            }
            return (reason, message + ")")
        }
    }

    /// `string.debugDescription`: in quotes, with quotes, backslashes and what is not printable
    /// ASCII escaped. Most messages are printable ASCII with nothing to escape, and are quoted
    /// here at once (the standard library walks the Unicode scalars of every string).
    static func quoted(_ string: String) -> String {
        let plain = string.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        return plain ? "\"" + string + "\"" : string.debugDescription
    }
}
