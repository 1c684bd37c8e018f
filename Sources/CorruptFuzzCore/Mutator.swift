/// What a mutation may draw on besides the input itself.
public struct MutationContext: Sendable {
    /// Another corpus file, for splicing.
    public var partner: [UInt8]?
    /// Inputs never grow beyond this many bytes.
    public var maxLength: Int

    public init(partner: [UInt8]? = nil, maxLength: Int = 1 << 20) {
        self.partner = partner
        // A negative limit reads as none at all: no mutator may compute with it.
        self.maxLength = max(0, maxLength)
    }
}

/// A named corruption of bytes.
///
/// Mutators are values with static members (`.bitFlip`, `.truncate`), in the style of
/// swift-snapshot-testing's strategies, so users add their own without subclassing:
///
/// ```swift
/// let zeroHeader = Mutator(name: "zero-header") { bytes, _, _ in
///     guard bytes.count >= 8 else { return nil }
///     bytes.replaceSubrange(0..<8, with: repeatElement(0, count: 8))
///     return "zero-header"
/// }
/// ```
public struct Mutator: Sendable {
    /// The mutator's family name, e.g. `bit-flip`.
    public let name: String
    private let body: @Sendable (inout [UInt8], inout FuzzRNG, MutationContext) -> String?

    /// Creates a mutator.
    /// - Parameters:
    ///   - name: The family name shown in reports.
    ///   - body: Mutates the bytes in place and returns a description of what it did, such as
    ///     `bit-flip@12.3`, or nil when it cannot apply (for example, to empty input).
    public init(name: String, _ body: @escaping @Sendable (inout [UInt8], inout FuzzRNG, MutationContext) -> String?) {
        self.name = name
        self.body = body
    }

    /// Mutates `bytes` in place.
    /// - Returns: What was done, for reports, or nil if the mutator could not apply.
    @discardableResult
    public func mutate(_ bytes: inout [UInt8], using rng: inout FuzzRNG, context: MutationContext = .init()) -> String? {
        body(&bytes, &rng, context)
    }
}
