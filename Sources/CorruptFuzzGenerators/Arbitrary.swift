import CorruptFuzzCore
import Foundation

/// A rule for one field of generated values: a range, a non-empty string, a date window.
public struct ArbitraryOverride: Sendable {
    let draw: @Sendable (inout FuzzRNG) -> any Sendable

    public init(_ draw: @escaping @Sendable (inout FuzzRNG) -> any Sendable) { self.draw = draw }

    /// Always this value.
    public static func constant(_ value: some Sendable) -> Self { Self { _ in value } }
    /// An integer in a range.
    public static func range(_ range: ClosedRange<Int>) -> Self {
        Self { rng in range.lowerBound + rng.below(range.count) }
    }
    /// A string of 1 to `maxLength` characters, some of them beyond ASCII.
    public static func nonEmptyString(maxLength: Int = 24) -> Self {
        Self { rng in randomString(length: 1 + rng.below(max(1, maxLength)), rng: &rng) }
    }
    /// A date within a window.
    public static func date(in window: ClosedRange<Date>) -> Self {
        Self { rng in
            let span = window.upperBound.timeIntervalSince(window.lowerBound)
            return window.lowerBound.addingTimeInterval(Double(rng.next() >> 11) / Double(1 << 53) * span)
        }
    }
    /// One of the given values.
    public static func oneOf<T: Sendable>(_ values: [T]) -> Self { Self { rng in values[rng.below(values.count)] } }
}

/// Draws valid random instances of any `Decodable` type, as Rust's derived `Arbitrary` or
/// Hypothesis's `from_type` do: the type's own `init(from:)` runs against a decoder that makes
/// the values up.
///
/// ```swift
/// var rng = FuzzRNG(seed: 1)
/// let list = try Arbitrary.value(FriendList.self, using: &rng, overrides: [
///     "version": .constant(1),
///     "friends.name": .nonEmptyString(maxLength: 20),
///     "friends.birthday": .date(in: Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 1e9)),
/// ])
/// ```
/// Overrides are keyed by the coding path with array positions left out. Dates default to
/// 2000...2040, URLs to `https://example.com/…`, `CaseIterable` enums to one of their cases.
public enum Arbitrary {
    /// Limits on generated values.
    public struct Limits: Sendable {
        public var maxElements = 5
        public var maxStringLength = 16
        public var maxDepth = 6
        public init() {}
    }

    /// Draws one value of `type`.
    /// - Throws: The type's own decoding error when it rejects what was drawn (a validating
    ///   `init(from:)`): add an override for that field.
    public static func value<T: Decodable>(
        _ type: T.Type, using rng: inout FuzzRNG, overrides: [String: ArbitraryOverride] = [:], limits: Limits = .init()
    ) throws -> T {
        let state = ArbitraryState(rng: rng, overrides: overrides, limits: limits)
        defer { rng = state.rng }
        return try state.make(type, path: [])
    }
}

final class ArbitraryState {
    var rng: FuzzRNG
    let overrides: [String: ArbitraryOverride]
    let limits: Arbitrary.Limits

    init(rng: FuzzRNG, overrides: [String: ArbitraryOverride], limits: Arbitrary.Limits) {
        self.rng = rng
        self.overrides = overrides
        self.limits = limits
    }

    static func key(_ path: [any CodingKey]) -> String {
        path.filter { $0.intValue == nil }.map(\.stringValue).joined(separator: ".")
    }

    func override<T>(_ type: T.Type, path: [any CodingKey]) -> T? {
        guard let rule = overrides[Self.key(path)] else { return nil }
        return rule.draw(&rng) as? T
    }

    func make<T: Decodable>(_ type: T.Type, path: [any CodingKey]) throws -> T {
        if let value = override(type, path: path) { return value }
        if type == Date.self {
            let seconds = 946_684_800 + Double(rng.below(40 * 365 * 86_400))
            return Date(timeIntervalSince1970: seconds) as! T
        }
        if type == URL.self { return URL(string: "https://example.com/\(rng.below(1000))")! as! T }
        if type == UUID.self {
            var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            return NSUUID(uuidBytes: &bytes) as UUID as! T
        }
        if type == Data.self { return Data((0..<rng.below(limits.maxStringLength + 1)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) as! T }
        if let cases = type as? any CaseIterable.Type {
            let all = allCases(of: cases)
            if !all.isEmpty, let pick = all[rng.below(all.count)] as? T { return pick }
        }
        return try T(from: ArbitraryDecoder(state: self, codingPath: path))
    }

    private func allCases<C: CaseIterable>(of type: C.Type) -> [Any] { type.allCases.map { $0 as Any } }

    func string(path: [any CodingKey]) -> String {
        override(String.self, path: path) ?? randomString(length: rng.below(limits.maxStringLength + 1), rng: &rng)
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type, path: [any CodingKey]) -> T {
        if let value = override(T.self, path: path) { return value }
        if let value = override(Int.self, path: path) { return T(truncatingIfNeeded: value) }
        switch rng.below(4) {
        case 0: return [T.min, T.max, 0][rng.below(3)]
        default: return T(truncatingIfNeeded: rng.below(200) - (T.isSigned ? 100 : 0))
        }
    }

    func double(path: [any CodingKey]) -> Double {
        override(Double.self, path: path) ?? Double(rng.below(2_000_001) - 1_000_000) / 100
    }
}

func randomString(length: Int, rng: inout FuzzRNG) -> String {
    let pool: [Character] = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789 -éü✓水🧘")
    return String((0..<length).map { _ in pool[rng.below(pool.count)] })
}

struct ArbitraryDecoder: Decoder {
    let state: ArbitraryState
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(state: state, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let depthLeft = codingPath.count < state.limits.maxDepth
        return Unkeyed(state: state, codingPath: codingPath, count: depthLeft ? state.rng.below(state.limits.maxElements + 1) : 0)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(state: state, codingPath: codingPath) }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let state: ArbitraryState
        let codingPath: [any CodingKey]
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool {
            let path = codingPath + [key]
            if state.overrides[ArbitraryState.key(path)] != nil { return false }
            return path.count > state.limits.maxDepth || state.rng.oneIn(4)
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try Single(state: state, codingPath: codingPath + [key]).decode(type)
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(Keyed<NestedKey>(state: state, codingPath: codingPath + [key]))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ArbitraryDecoder(state: state, codingPath: codingPath + [key]).unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder { ArbitraryDecoder(state: state, codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ArbitraryDecoder(state: state, codingPath: codingPath + [key]) }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let state: ArbitraryState
        let codingPath: [any CodingKey]
        var count: Int?
        var currentIndex = 0
        var isAtEnd: Bool { currentIndex >= (count ?? 0) }

        init(state: ArbitraryState, codingPath: [any CodingKey], count: Int) {
            self.state = state
            self.codingPath = codingPath
            self.count = count
        }

        struct Index: CodingKey {
            var stringValue: String { "\(intValue!)" }
            var intValue: Int?
            init(_ value: Int) { intValue = value }
            init?(stringValue: String) { nil }
            init?(intValue: Int) { self.intValue = intValue }
        }

        mutating func next() -> [any CodingKey] {
            defer { currentIndex += 1 }
            return codingPath + [Index(currentIndex)]
        }

        mutating func decodeNil() throws -> Bool { false }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try Single(state: state, codingPath: next()).decode(type) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(Keyed<NestedKey>(state: state, codingPath: next()))
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try ArbitraryDecoder(state: state, codingPath: next()).unkeyedContainer()
        }
        mutating func superDecoder() throws -> any Decoder { ArbitraryDecoder(state: state, codingPath: next()) }
    }

    struct Single: SingleValueDecodingContainer {
        let state: ArbitraryState
        let codingPath: [any CodingKey]
        func decodeNil() -> Bool { false }
        func decode(_ type: Bool.Type) throws -> Bool { state.override(Bool.self, path: codingPath) ?? state.rng.oneIn(2) }
        func decode(_ type: String.Type) throws -> String { state.string(path: codingPath) }
        func decode(_ type: Double.Type) throws -> Double { state.double(path: codingPath) }
        func decode(_ type: Float.Type) throws -> Float { Float(state.double(path: codingPath)) }
        func decode(_ type: Int.Type) throws -> Int { state.integer(Int.self, path: codingPath) }
        func decode(_ type: Int8.Type) throws -> Int8 { state.integer(Int8.self, path: codingPath) }
        func decode(_ type: Int16.Type) throws -> Int16 { state.integer(Int16.self, path: codingPath) }
        func decode(_ type: Int32.Type) throws -> Int32 { state.integer(Int32.self, path: codingPath) }
        func decode(_ type: Int64.Type) throws -> Int64 { state.integer(Int64.self, path: codingPath) }
        func decode(_ type: UInt.Type) throws -> UInt { state.integer(UInt.self, path: codingPath) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { state.integer(UInt8.self, path: codingPath) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { state.integer(UInt16.self, path: codingPath) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { state.integer(UInt32.self, path: codingPath) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { state.integer(UInt64.self, path: codingPath) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try state.make(type, path: codingPath) }
    }
}
