/// What a correct loader must do with an input, when the mutator that made it knows.
///
/// A missing file must be rejected as `not-found`, an empty one as `empty`; formats add their
/// own (a future version must be rejected as `unsupported-version`).
public struct Expectation: Sendable, Hashable, Codable {
    /// The reason word the loader must give when it rejects the input.
    public var reason: Reason
    /// Why this is expected, for reports ("the file does not exist").
    public var because: String

    public init(reason: Reason, because: String) {
        self.reason = reason
        self.because = because
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
    /// The names of the mutations applied, in order; empty for an unmodified seed.
    public var mutations: [String]
    /// The name of the seed this input descends from.
    public var seedName: String
    /// What the loader must do with it, if the mutation knows.
    public var expectation: Expectation?

    public init(bytes: [UInt8]?, mutations: [String] = [], seedName: String, expectation: Expectation? = nil) {
        self.bytes = bytes
        self.mutations = mutations
        self.seedName = seedName
        self.expectation = expectation
    }

    /// A readable description of how the input was made, as it appears in reports.
    public var origin: String {
        mutations.isEmpty ? seedName : "\(seedName) + \(mutations.joined(separator: ", "))"
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
