import CorruptFuzzCore
import Foundation

/// Valid user-data files drawn from a `Codable` model and written by Foundation's own
/// `PropertyListEncoder`, in the binary or the XML property-list encoding: the files the app
/// itself would save.
///
/// ```swift
/// let generator = PropertyListGenerator(Settings.self, format: .binary, overrides: [
///     "fontSize": .range(8...72),
/// ])
/// var rng = FuzzRNG(seed: 1)
/// let file: [UInt8] = try generator.generate(using: &rng)
/// ```
public struct PropertyListGenerator<Model: Codable>: Sendable {
    public let format: PropertyListSerialization.PropertyListFormat
    public let overrides: [String: ArbitraryOverride]
    public let limits: Arbitrary.Limits

    /// - Parameters:
    ///   - format: `.binary` or `.xml`.
    ///   - overrides: rules for fields, keyed by coding path (see ``Arbitrary``).
    public init(
        _ model: Model.Type, format: PropertyListSerialization.PropertyListFormat = .binary,
        overrides: [String: ArbitraryOverride] = [:], limits: Arbitrary.Limits = .init()
    ) {
        self.format = format
        self.overrides = overrides
        self.limits = limits
    }

    /// One random valid model value.
    public func value(using rng: inout FuzzRNG) throws -> Model {
        try Arbitrary.value(Model.self, using: &rng, overrides: overrides, limits: limits)
    }

    /// One file: a random valid model value, encoded.
    public func generate(using rng: inout FuzzRNG) throws -> [UInt8] {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format
        return [UInt8](try encoder.encode(value(using: &rng)))
    }
}

/// Valid keyed archives of a user's `NSCoding` / `NSSecureCoding` classes, written by the
/// real `NSKeyedArchiver`: values are drawn for a `Decodable` description of the model (a plain
/// struct with the same fields, so that ``Arbitrary`` can make them up), turned into the
/// app's objects by `build`, and archived as the app archives them.
///
/// ```swift
/// struct FriendValues: Codable { var name: String; var birthday: Date }
/// let generator = KeyedArchiveGenerator(FriendValues.self, overrides: ["name": .nonEmptyString()]) {
///     Friend(name: $0.name, birthday: $0.birthday)
/// }
/// ```
public struct KeyedArchiveGenerator<Values: Decodable>: Sendable {
    public let overrides: [String: ArbitraryOverride]
    public let limits: Arbitrary.Limits
    /// Whether the archiver requires secure coding (the root's class must adopt NSSecureCoding).
    public let requiringSecureCoding: Bool
    /// `.binary` (NSKeyedArchiver's default) or `.xml`.
    public let format: PropertyListSerialization.PropertyListFormat
    private let build: @Sendable (Values) -> NSObject

    public init(
        _ values: Values.Type, overrides: [String: ArbitraryOverride] = [:], limits: Arbitrary.Limits = .init(),
        requiringSecureCoding: Bool = true, format: PropertyListSerialization.PropertyListFormat = .binary,
        build: @escaping @Sendable (Values) -> NSObject
    ) {
        self.overrides = overrides
        self.limits = limits
        self.requiringSecureCoding = requiringSecureCoding
        self.format = format
        self.build = build
    }

    /// One archive of a random valid object graph.
    public func generate(using rng: inout FuzzRNG) throws -> [UInt8] {
        let values = try Arbitrary.value(Values.self, using: &rng, overrides: overrides, limits: limits)
        return try Self.archive(build(values), requiringSecureCoding: requiringSecureCoding, format: format)
    }

    /// Archives `root` under NSKeyedArchiver's root key, as `archivedData(withRootObject:)` does.
    public static func archive(
        _ root: NSObject, requiringSecureCoding: Bool = true,
        format: PropertyListSerialization.PropertyListFormat = .binary
    ) throws -> [UInt8] {
        let archiver = NSKeyedArchiver(requiringSecureCoding: requiringSecureCoding)
        archiver.outputFormat = format
        archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        if let error = archiver.error { throw error }
        return [UInt8](archiver.encodedData)
    }
}
