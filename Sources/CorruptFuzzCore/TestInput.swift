/// What a correct loader must do with an input, when the mutator that made it knows.
///
/// A missing file must be rejected as `not-found`, an empty one as `empty`; formats add their
/// own (a future version must be rejected as `unsupported-version`).
public struct Expectation: Sendable, Hashable, Codable {
    /// The reason word the loader must give when it rejects the input.
    public var reason: Reason
    /// Why this is expected, for reports ("the file does not exist").
    public var because: String
    /// Whether accepting the input is fine too, unless the validator calls it invalid: an entity
    /// bomb is well-formed XML, harmless to a loader that never expands it (one that does runs
    /// out of time or memory, and that is the finding); a loader that rejects it must say
    /// ``reason``.
    public var mayBeAccepted: Bool

    public init(reason: Reason, because: String, mayBeAccepted: Bool = false) {
        self.reason = reason
        self.because = because
        self.mayBeAccepted = mayBeAccepted
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reason = try container.decode(Reason.self, forKey: .reason)
        because = try container.decode(String.self, forKey: .because)
        mayBeAccepted = try container.decodeIfPresent(Bool.self, forKey: .mayBeAccepted) ?? false
    }

    public static let notFound = Expectation(reason: .notFound, because: Violation.notFound.message)
    public static let empty = Expectation(reason: .empty, because: Violation.empty.message)

    /// What every loader must do with these bytes whatever the format: reject a missing file
    /// as `not-found` and an empty one as `empty` (``Violation/intrinsic(for:)``).
    public static func intrinsic(for bytes: [UInt8]?) -> Expectation? {
        Violation.intrinsic(for: bytes).flatMap { violation in violation.reason.map { Expectation(reason: $0, because: violation.message) } }
    }
}

/// One candidate input for a loader: its bytes (or a missing file), and how it was made.
public struct TestInput: Sendable, Hashable, Codable {
    /// The file's content, or nil for a file that does not exist.
    @Base64Coded public var bytes: [UInt8]?
    /// The mutations applied, in order, kept as numbers and named when a report asks: a
    /// campaign makes hundreds of thousands of inputs a second and reports a few.
    package var steps: [MutationStep]
    /// The name of the seed this input descends from.
    public var seedName: String
    /// What the loader must do with it, if the mutation knows.
    public var expectation: Expectation?

    public init(bytes: [UInt8]?, mutations: [String] = [], seedName: String, expectation: Expectation? = nil) {
        self.bytes = bytes
        self.steps = mutations.map(MutationStep.named)
        self.seedName = seedName
        self.expectation = expectation
    }

    /// (The arguments are consumed: a campaign makes an input from buffers it gives up.)
    package init(bytes: consuming [UInt8]?, steps: consuming [MutationStep], seedName: String, expectation: Expectation? = nil) {
        _bytes = Base64Coded(wrappedValue: bytes)
        self.steps = steps
        self.seedName = seedName
        self.expectation = expectation
    }

    /// The names of the mutations applied, in order; empty for an unmodified seed.
    public var mutations: [String] {
        get { steps.map(\.description) }
        set { steps = newValue.map(MutationStep.named) }
    }

    /// A readable description of how the input was made, as it appears in reports.
    public var origin: String {
        steps.isEmpty ? seedName : "\(seedName) + \(mutations.joined(separator: ", "))"
    }

    private enum CodingKeys: String, CodingKey {
        case bytes, mutations, seedName, expectation
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _bytes = try container.decode(Base64Coded<[UInt8]?>.self, forKey: .bytes)
        steps = try container.decode([String].self, forKey: .mutations).map(MutationStep.named)
        seedName = try container.decode(String.self, forKey: .seedName)
        expectation = try container.decodeIfPresent(Expectation.self, forKey: .expectation)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(_bytes, forKey: .bytes)
        try container.encode(mutations, forKey: .mutations)
        try container.encode(seedName, forKey: .seedName)
        try container.encodeIfPresent(expectation, forKey: .expectation)
    }

    /// Inputs are equal when their bytes, names of mutations, seeds and expectations are,
    /// however the names are kept.
    public static func == (lhs: TestInput, rhs: TestInput) -> Bool {
        lhs.bytes == rhs.bytes && lhs.seedName == rhs.seedName && lhs.expectation == rhs.expectation
            && lhs.steps.count == rhs.steps.count && (lhs.steps == rhs.steps || lhs.mutations == rhs.mutations)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
        hasher.combine(seedName)
        hasher.combine(expectation)
        hasher.combine(steps.count)
    }
}

/// A named seed file from the corpus.
public struct Seed: Sendable, Hashable {
    public var name: String
    public var bytes: [UInt8]

    public init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
}
