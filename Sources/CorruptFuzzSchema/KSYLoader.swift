import Foundation
import Yams

/// Loads a ``BinarySchema`` from Kaitai Struct YAML (`.ksy`).
///
/// Supported KSY: `meta` (`id`, `endian`, `file-extension`), `seq`, `types`, `enums`; per field
/// `id`, `type` (`u1`…`u8`, `s1`…`s8` with optional `le`/`be`, `f4`, `f8`, `str`, `strz`, a user
/// type, or `switch-on`/`cases`), `contents`, `size`, `size-eos`, `repeat` (`expr`, `eos`,
/// `until`) with `repeat-expr`/`repeat-until`, `if`, `enum`, `encoding`, and `valid` (a value,
/// or `eq`, `min`, `max`, `any-of`, `expr`).
///
/// Extension keys fuzzing needs, `-` prefixed as KSY reserves for extensions:
/// - `-checksum: {algorithm: crc32 | adler32, from: FIELD}` on an integer: a checksum over the
///   bytes from FIELD (default: the start of the file) to just before this field.
/// - `-version: {current: N}` on an integer: the format version; values above N are
///   `unsupported-version` (a file from a newer app), not corrupt.
/// - `-order: increasing | strictly-increasing` on a repeated integer.
/// - `meta/-allow-trailing: true`: bytes after the last field are allowed (by default they
///   are a violation).
///
/// A type may contain itself (a tree of nodes) when something on the way can end the
/// recursion (an `if`, a repeat that can be empty, a switch-on case of another type); one that
/// contains itself through fields that are always there is an error at load
/// (``BinarySchema/unendingRecursion()``). Files nested deeper than
/// ``SchemaParser/maxNesting`` records are violations, never a stack overflow.
///
/// `instances` with `pos` are read at their offset and validated; the encoder writes the bytes
/// they cover back as read. Not supported yet: value instances, bit-sized integers, `process`,
/// `terminator` other than zero, `params`.
public enum KSYLoader {
    /// Loads the schema in the file at `path`.
    /// - Throws: ``SchemaError`` naming the file and what is wrong.
    public static func load(contentsOf path: String) throws(SchemaError) -> BinarySchema {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SchemaError("cannot read schema \(path)")
        }
        do {
            return try load(yaml: String(decoding: data, as: UTF8.self))
        } catch {
            throw SchemaError("\(path): \(error.message)")
        }
    }

    /// Loads a schema from KSY text.
    public static func load(yaml: String) throws(SchemaError) -> BinarySchema {
        let node: Any?
        do {
            node = try Yams.load(yaml: yaml)
        } catch {
            throw SchemaError("not valid YAML: \(error)")
        }
        guard let top = node as? [String: Any] else { throw SchemaError("the top level must be a mapping with meta and seq") }
        let meta = top["meta"] as? [String: Any] ?? [:]
        let endian = try parseEndian(meta["endian"], path: "meta.endian") ?? .little
        var enums: [String: [Int128: String]] = [:]
        for (name, raw) in top["enums"] as? [String: Any] ?? [:] {
            guard let table = raw as? [AnyHashable: Any] else { throw SchemaError("enums.\(name) must be a mapping") }
            var values: [Int128: String] = [:]
            for (key, label) in table {
                guard let number = integer(key) else { throw SchemaError("enums.\(name): key \(key) is not an integer") }
                values[number] = (label as? [String: Any])?["id"] as? String ?? "\(label)"
            }
            enums[name] = values
        }
        var typeNames = Set((top["types"] as? [String: Any] ?? [:]).keys)
        typeNames.formUnion([])
        let root = try parseType(top, path: "", typeNames: typeNames)
        var types: [String: TypeDefinition] = [:]
        for (name, raw) in top["types"] as? [String: Any] ?? [:] {
            guard let mapping = raw as? [String: Any] else { throw SchemaError("types.\(name) must be a mapping") }
            types[name] = try parseType(mapping, path: "types.\(name).", typeNames: typeNames)
        }
        let schema = BinarySchema(
            id: meta["id"] as? String ?? "schema", endian: endian, fileExtension: meta["file-extension"] as? String ?? "",
            root: root, types: types, enums: enums, allowsTrailingBytes: meta["-allow-trailing"] as? Bool ?? false)
        try check(schema)
        return schema
    }

    // MARK: - Parts

    private static func parseType(_ mapping: [String: Any], path: String, typeNames: Set<String>) throws(SchemaError) -> TypeDefinition {
        var instances: [Field] = []
        if let raw = mapping["instances"] {
            guard let table = raw as? [String: Any] else { throw SchemaError("\(path)instances must be a mapping") }
            for name in table.keys.sorted() {
                guard var entry = table[name] as? [String: Any] else { throw SchemaError("\(path)instances.\(name) must be a mapping") }
                guard let pos = entry.removeValue(forKey: "pos") else {
                    throw SchemaError("\(path)instances.\(name): only instances with pos are supported (value instances are not)")
                }
                entry["id"] = name
                var field = try parseField(entry, path: "\(path)instances.\(name)", typeNames: typeNames)
                field.position = try expression(pos, path: "\(path)instances.\(name).pos")
                instances.append(field)
            }
        }
        guard let seq = mapping["seq"] else { return TypeDefinition(seq: [], instances: instances) }
        guard let list = seq as? [Any] else { throw SchemaError("\(path)seq must be a list") }
        var fields: [Field] = []
        for (index, raw) in list.enumerated() {
            guard let entry = raw as? [String: Any] else { throw SchemaError("\(path)seq[\(index)] must be a mapping") }
            fields.append(try parseField(entry, path: "\(path)seq[\(index)]", typeNames: typeNames))
        }
        if let duplicate = Dictionary(grouping: fields, by: \.id).first(where: { $0.value.count > 1 })?.key {
            throw SchemaError("\(path)seq: field id '\(duplicate)' appears twice")
        }
        return TypeDefinition(seq: fields, instances: instances)
    }

    private static func parseField(_ entry: [String: Any], path: String, typeNames: Set<String>) throws(SchemaError) -> Field {
        guard let id = entry["id"] as? String, !id.isEmpty else { throw SchemaError("\(path): every field needs an id") }
        let at = "\(path) (\(id))"
        let known: Set<String> = [
            "id", "type", "size", "size-eos", "repeat", "repeat-expr", "repeat-until", "if", "enum", "valid", "contents",
            "encoding", "doc", "-checksum", "-version", "-order", "terminator", "include", "consume", "doc-ref",
        ]
        if let unknown = entry.keys.first(where: { !known.contains($0) }) {
            throw SchemaError("\(at): unsupported key '\(unknown)'")
        }
        let type: FieldType
        if let contents = entry["contents"] {
            type = .contents(try parseContents(contents, path: at))
        } else if let switchOn = entry["type"] as? [String: Any] {
            guard let selectorText = switchOn["switch-on"].map({ "\($0)" }), let cases = switchOn["cases"] as? [AnyHashable: Any] else {
                throw SchemaError("\(at): a type mapping needs switch-on and cases")
            }
            var table: [Int128: String] = [:]
            var fallback: String?
            for (key, value) in cases {
                guard let typeName = value as? String, typeNames.contains(typeName) else {
                    throw SchemaError("\(at): case \(key) names unknown type \(value)")
                }
                if "\(key)" == "_" { fallback = typeName; continue }
                guard let number = integer(key) else { throw SchemaError("\(at): case key \(key) is not an integer") }
                table[number] = typeName
            }
            type = .switchOn(try Expression(parsing: selectorText), cases: table, defaultType: fallback)
        } else if let name = entry["type"] as? String {
            type = try parseTypeName(name, path: at, typeNames: typeNames)
        } else if entry["type"] == nil {
            guard entry["size"] != nil || entry["size-eos"] as? Bool == true else {
                throw SchemaError("\(at): a field without a type needs size or size-eos")
            }
            type = .bytes
        } else {
            throw SchemaError("\(at): type must be a name or a switch-on mapping")
        }
        var field = Field(id: id, type: type)
        if let size = entry["size"] { field.size = try expression(size, path: "\(at).size") }
        field.sizeEOS = entry["size-eos"] as? Bool ?? false
        if case .string(let z) = type, !z, field.size == nil, !field.sizeEOS {
            throw SchemaError("\(at): a str needs size or size-eos (or use strz)")
        }
        if let condition = entry["if"] { field.condition = try expression(condition, path: "\(at).if") }
        if let repetition = entry["repeat"] as? String {
            switch repetition {
            case "expr":
                guard let count = entry["repeat-expr"] else { throw SchemaError("\(at): repeat: expr needs repeat-expr") }
                field.repetition = .count(try expression(count, path: "\(at).repeat-expr"))
            case "eos": field.repetition = .untilEnd
            case "until":
                guard let until = entry["repeat-until"] else { throw SchemaError("\(at): repeat: until needs repeat-until") }
                field.repetition = .until(try expression(until, path: "\(at).repeat-until"))
            default: throw SchemaError("\(at): repeat must be expr, eos or until, not \(repetition)")
            }
        }
        field.enumName = entry["enum"] as? String
        if let valid = entry["valid"] { field.valid = try parseValid(valid, path: "\(at).valid") }
        if let encoding = entry["encoding"] as? String { field.encoding = encoding }
        if let version = entry["-version"] {
            guard let mapping = version as? [String: Any], let current = integer(mapping["current"] as Any) else {
                throw SchemaError("\(at): -version needs {current: N}")
            }
            field.version = VersionRule(current: current)
        }
        if let checksum = entry["-checksum"] {
            guard let mapping = checksum as? [String: Any], let name = mapping["algorithm"] as? String,
                let algorithm = ChecksumRule.Algorithm(rawValue: name)
            else {
                throw SchemaError("\(at): -checksum needs {algorithm: crc32 | adler32, from: FIELD}")
            }
            field.checksum = ChecksumRule(algorithm: algorithm, from: mapping["from"] as? String)
        }
        if let order = entry["-order"] {
            guard let text = order as? String, let ordering = Ordering(rawValue: text) else {
                throw SchemaError("\(at): -order must be increasing or strictly-increasing")
            }
            field.order = ordering
        }
        if field.checksum != nil || field.version != nil || field.order != nil {
            guard case .integer = type else { throw SchemaError("\(at): -checksum, -version and -order apply to integers") }
        }
        return field
    }

    private static func parseTypeName(_ name: String, path: String, typeNames: Set<String>) throws(SchemaError) -> FieldType {
        switch name {
        case "str": return .string(zeroTerminated: false)
        case "strz": return .string(zeroTerminated: true)
        default: break
        }
        if let first = name.first, "usf".contains(first) {
            var rest = name.dropFirst()
            var endian: Endian?
            if rest.hasSuffix("le") { endian = .little; rest = rest.dropLast(2) }
            if rest.hasSuffix("be") { endian = .big; rest = rest.dropLast(2) }
            if let width = Int(rest) {
                if first == "f", width == 4 || width == 8 { return .float(width: width, endian: endian) }
                if first != "f", [1, 2, 4, 8].contains(width) { return .integer(width: width, signed: first == "s", endian: endian) }
            }
        }
        guard typeNames.contains(name) else { throw SchemaError("\(path): unknown type '\(name)'") }
        return .user(name)
    }

    private static func parseContents(_ raw: Any, path: String) throws(SchemaError) -> [UInt8] {
        if let text = raw as? String { return Array(text.utf8) }
        if let list = raw as? [Any] {
            var bytes: [UInt8] = []
            for item in list {
                if let text = item as? String { bytes += Array(text.utf8); continue }
                guard let value = integer(item), (0...255).contains(value) else { throw SchemaError("\(path): contents item \(item) is not a byte") }
                bytes.append(UInt8(value))
            }
            return bytes
        }
        throw SchemaError("\(path): contents must be a string or a list of bytes")
    }

    private static func parseValid(_ raw: Any, path: String) throws(SchemaError) -> Constraint {
        if let value = integer(raw) { return Constraint(equals: value) }
        guard let mapping = raw as? [String: Any] else { throw SchemaError("\(path): must be a value or a mapping") }
        var constraint = Constraint()
        for (key, value) in mapping {
            switch key {
            case "eq": constraint.equals = try number(value, path: "\(path).eq")
            case "min": constraint.min = try number(value, path: "\(path).min")
            case "max": constraint.max = try number(value, path: "\(path).max")
            case "any-of":
                guard let list = value as? [Any] else { throw SchemaError("\(path).any-of must be a list") }
                var values: [Int128] = []
                for item in list { values.append(try number(item, path: "\(path).any-of")) }
                constraint.anyOf = values
            case "expr": constraint.expression = try expression(value, path: "\(path).expr")
            default: throw SchemaError("\(path): unsupported key '\(key)'")
            }
        }
        return constraint
    }

    private static func parseEndian(_ raw: Any?, path: String) throws(SchemaError) -> Endian? {
        guard let raw else { return nil }
        guard let text = raw as? String, let endian = Endian(rawValue: text) else { throw SchemaError("\(path) must be le or be") }
        return endian
    }

    private static func expression(_ raw: Any, path: String) throws(SchemaError) -> Expression {
        if let value = integer(raw) { return .literal(value) }
        guard let text = raw as? String else { throw SchemaError("\(path): not an expression: \(raw)") }
        do {
            return try Expression(parsing: text)
        } catch {
            throw SchemaError("\(path): \(error.message)")
        }
    }

    private static func number(_ raw: Any, path: String) throws(SchemaError) -> Int128 {
        guard let value = integer(raw) else { throw SchemaError("\(path): \(raw) is not an integer") }
        return value
    }

    static func integer(_ raw: Any) -> Int128? {
        switch raw {
        case let v as Int: return Int128(v)
        case let v as UInt64: return Int128(v)
        case let v as Int64: return Int128(v)
        case let v as Bool: return v ? 1 : 0
        case let v as String:
            return ExpressionParser.integer(v.trimmingCharacters(in: .whitespaces))
                ?? (v.hasPrefix("-") ? ExpressionParser.integer(String(v.dropFirst())).map { -$0 } : nil)
        case let v as AnyHashable: return integer(v.base)
        default: return nil
        }
    }

    /// Checks cross-references: sizes and counts name existing fields, checksums name fields;
    /// and that no type contains itself with nothing that can end the recursion
    /// (``BinarySchema/unendingRecursion()``).
    private static func check(_ schema: BinarySchema) throws(SchemaError) {
        if let recursion = schema.unendingRecursion() { throw SchemaError(recursion) }
        for (name, definition) in [("", schema.root)] + schema.types.map({ ($0.key, $0.value) }) {
            let ids = Set(definition.seq.map(\.id))
            for field in definition.seq {
                let where_ = name.isEmpty ? field.id : "types.\(name).\(field.id)"
                if let from = field.checksum?.from, !ids.contains(from) {
                    throw SchemaError("\(where_): -checksum from '\(from)' is not a field of the same type")
                }
                if let enumName = field.enumName, schema.enums[enumName] == nil {
                    throw SchemaError("\(where_): unknown enum '\(enumName)'")
                }
                for expression in [field.size, field.condition].compactMap({ $0 }) {
                    if let sibling = expression.referencedSibling, !ids.contains(sibling) {
                        throw SchemaError("\(where_): '\(sibling)' is not a field of the same type")
                    }
                }
                if case .count(let expression)? = field.repetition, let sibling = expression.referencedSibling, !ids.contains(sibling) {
                    throw SchemaError("\(where_): repeat-expr '\(sibling)' is not a field of the same type")
                }
            }
        }
    }
}
