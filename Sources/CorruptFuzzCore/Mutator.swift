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
    private let body: @Sendable (inout [UInt8], inout FuzzRNG, MutationContext) -> MutationStep?

    /// Creates a mutator.
    /// - Parameters:
    ///   - name: The family name shown in reports.
    ///   - body: Mutates the bytes in place and returns a description of what it did, such as
    ///     `bit-flip@12.3`, or nil when it cannot apply (for example, to empty input).
    public init(name: String, _ body: @escaping @Sendable (inout [UInt8], inout FuzzRNG, MutationContext) -> String?) {
        self.name = name
        self.body = { bytes, rng, context in body(&bytes, &rng, context).map(MutationStep.named) }
    }

    /// A mutator whose description is kept as numbers and written only when a report needs it.
    package init(name: String, step body: @escaping @Sendable (inout [UInt8], inout FuzzRNG, MutationContext) -> MutationStep?) {
        self.name = name
        self.body = body
    }

    /// Mutates `bytes` in place.
    /// - Returns: What was done, for reports, or nil if the mutator could not apply.
    @discardableResult
    public func mutate(_ bytes: inout [UInt8], using rng: inout FuzzRNG, context: MutationContext = .init()) -> String? {
        body(&bytes, &rng, context)?.description
    }

    /// Mutates `bytes` in place and says what was done, without writing its name.
    package func apply(_ bytes: inout [UInt8], using rng: inout FuzzRNG, context: MutationContext) -> MutationStep? {
        body(&bytes, &rng, context)
    }
}

/// One mutation applied to an input. The byte-level mutators keep what they did as numbers
/// (`.bitFlip(at: 12, bit: 3)`) and write `bit-flip@12.3` only when a report shows it.
package enum MutationStep: Sendable, Hashable, CustomStringConvertible {
    case named(String)
    case bitFlip(at: Int, bit: Int)
    case byteFlip(width: Int, at: Int)
    case randomByte(at: Int)
    case arithmetic(width: Int, bigEndian: Bool, add: Bool, delta: Int, at: Int)
    case interestingInteger(width: Int, bigEndian: Bool, label: IntegerField.Interesting, at: Int)
    case insert(count: Int, at: Int)
    case delete(count: Int, at: Int)
    case duplicate(count: Int, at: Int)
    case copy(count: Int, from: Int, to: Int)
    case truncate(length: Int)
    case splice(cut: Int, from: Int)
    /// A value the loader compared with, written where it read the other operand (or, when
    /// that is not in the input, at `at`): ``Comparison``.
    case comparison(width: Int, bigEndian: Bool, at: Int)

    package var description: String {
        func order(_ bigEndian: Bool) -> String { bigEndian ? "be" : "le" }
        switch self {
        case .named(let name): return name
        case .bitFlip(let at, let bit): return "bit-flip@\(at).\(bit)"
        case .byteFlip(let width, let at): return "byte-flip\(width)@\(at)"
        case .randomByte(let at): return "random-byte@\(at)"
        case .arithmetic(let width, let bigEndian, let add, let delta, let at):
            return "arith\(width * 8)\(order(bigEndian))\(add ? "+" : "-")\(delta)@\(at)"
        case .interestingInteger(let width, let bigEndian, let label, let at):
            return "int\(width * 8)\(order(bigEndian))=\(label.name)@\(at)"
        case .insert(let count, let at): return "insert\(count)@\(at)"
        case .delete(let count, let at): return "delete\(count)@\(at)"
        case .duplicate(let count, let at): return "duplicate\(count)@\(at)"
        case .copy(let count, let from, let to): return "copy\(count)@\(from)->\(to)"
        case .truncate(let length): return "truncate@\(length)"
        case .splice(let cut, let from): return "splice@\(cut)+\(from)"
        case .comparison(let width, let bigEndian, let at): return "cmp\(width * 8)\(order(bigEndian))@\(at)"
        }
    }
}
