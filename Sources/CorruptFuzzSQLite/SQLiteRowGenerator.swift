import CorruptFuzzCore
import CorruptFuzzGenerators
import Foundation

/// Values of one column of generated rows.
public struct SQLiteColumnGenerator: Sendable {
    let draw: @Sendable (inout FuzzRNG) -> SQLiteValue

    public init(_ draw: @escaping @Sendable (inout FuzzRNG) -> SQLiteValue) { self.draw = draw }

    public static func constant(_ value: SQLiteValue) -> Self { Self { _ in value } }
    public static func integer(_ range: ClosedRange<Int64>) -> Self {
        Self { rng in
            let span = UInt64(bitPattern: range.upperBound &- range.lowerBound)
            let offset = span == .max ? rng.next() : rng.next(upperBound: span &+ 1)
            return .integer(range.lowerBound &+ Int64(bitPattern: offset))
        }
    }
    public static func real(_ range: ClosedRange<Double>) -> Self {
        Self { rng in .real(range.lowerBound + Double(rng.next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)) }
    }
    /// Text of a length in `length`, with characters beyond ASCII and quotes.
    public static func text(length: ClosedRange<Int>) -> Self {
        Self { rng in .text(SQLiteRowGenerator.text(length: length.lowerBound + rng.below(length.count), rng: &rng)) }
    }
    public static func blob(length: ClosedRange<Int>) -> Self {
        Self { rng in .blob((0..<(length.lowerBound + rng.below(length.count))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) }
    }
    public static func oneOf(_ values: [SQLiteValue]) -> Self { Self { rng in values[rng.below(values.count)] } }
}

/// Rows of one table drawn by the app's own generator, e.g. `Arbitrary` values of a Codable
/// model (``arbitrary(_:overrides:)``); columns it leaves out get the defaults.
public struct SQLiteRowGenerator: Sendable {
    let draw: @Sendable (inout FuzzRNG) -> [String: SQLiteValue]?

    /// A generator of rows as column name → value; nil skips the row.
    public init(_ draw: @escaping @Sendable (inout FuzzRNG) -> [String: SQLiteValue]?) { self.draw = draw }

    /// Rows from random instances of a Codable model (``Arbitrary``), one property per column:
    /// integers and booleans as INTEGER, floating point as REAL, strings, URLs and UUIDs as TEXT,
    /// `Data` as BLOB, dates as INTEGER seconds since 1970, nested values as JSON TEXT.
    public static func arbitrary<Model: Codable & Sendable>(_ model: Model.Type, overrides: [String: ArbitraryOverride] = [:]) -> Self {
        Self { rng in
            guard let value = try? Arbitrary.value(Model.self, using: &rng, overrides: overrides) else { return nil }
            return try? RowEncoder.encode(value)
        }
    }

    static func text(length: Int, rng: inout FuzzRNG) -> String {
        let pool: [Character] = Array("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789-'\"éü✓水🧘")
        return String((0..<length).map { _ in pool[rng.below(pool.count)] })
    }
}

/// A Codable value as one row: each top-level property a column.
enum RowEncoder {
    static func encode(_ value: some Encodable) throws -> [String: SQLiteValue] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.dataEncodingStrategy = .base64
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(value)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        var row: [String: SQLiteValue] = [:]
        let mirror = Mirror(reflecting: value)
        let raw = Dictionary(mirror.children.compactMap { child in child.label.map { ($0, child.value) } }, uniquingKeysWith: { a, _ in a })
        for (key, json) in object {
            row[key] = sqliteValue(json, original: raw[key])
        }
        return row
    }

    private static func sqliteValue(_ json: Any, original: Any?) -> SQLiteValue {
        if let data = original as? Data { return .blob([UInt8](data)) }
        if let date = original as? Date { return .integer(Int64(date.timeIntervalSince1970.rounded(.down))) }
        if let flag = original as? Bool { return .integer(flag ? 1 : 0) }
        switch json {
        case is NSNull: return .null
        case let text as String: return .text(text)
        case let number as NSNumber:
            if let original, original is Double || original is Float { return .real(number.doubleValue) }
            if ["d", "f"].contains(String(cString: number.objCType)) { return .real(number.doubleValue) }
            return .integer(number.int64Value)
        default:
            let nested = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])) ?? Data()
            return .text(String(decoding: nested, as: UTF8.self))
        }
    }
}
