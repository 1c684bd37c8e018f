/// A corruption made with knowledge of the format: the bytes, what was done, and what a loader
/// must do with them when that is certain.
public struct StructuredMutation: Sendable, Hashable {
    public var bytes: [UInt8]
    /// `count=-1 habits[0].num_dates`, `version=future version`, `wrong-checksum crc32`.
    public var name: String
    public var expectation: Expectation?

    public init(bytes: [UInt8], name: String, expectation: Expectation? = nil) {
        self.bytes = bytes
        self.name = name
        self.expectation = expectation
    }
}

/// One entry of a format's catalogue, made when it is due. A campaign holds the recipe of every
/// entry and the bytes of one at a time: a hostile XML catalogue is over 20 MB for each root
/// element, and built at once (when its attribute was 100 MB) it held a campaign of 20 seeds
/// for half a minute before its first input.
public struct CatalogueEntry: Sendable {
    /// `billion-laughs`, `count=-1 habits[0].num_dates`.
    public var name: String
    public var expectation: Expectation?
    /// A length the bytes are known to reach before they are made: an entry whose minimum is
    /// over the campaign's cap is skipped unmade.
    public var minimumLength: Int
    /// Names the bytes without making them, when they do not depend on all of the seed
    /// (`huge-text <notes>`): of entries with the same identity only the first is made.
    public var identity: String?
    private let make: @Sendable () -> [UInt8]

    /// An entry made by `make` when it is due.
    public init(
        name: String, expectation: Expectation? = nil, minimumLength: Int = 0, identity: String? = nil, make: @escaping @Sendable () -> [UInt8]
    ) {
        self.name = name
        self.expectation = expectation
        self.minimumLength = minimumLength
        self.identity = identity
        self.make = make
    }

    /// An entry already made.
    public init(_ mutation: StructuredMutation) {
        let bytes = mutation.bytes
        self.init(name: mutation.name, expectation: mutation.expectation, minimumLength: bytes.count) { bytes }
    }

    /// The entry, made.
    public func mutation() -> StructuredMutation { StructuredMutation(bytes: make(), name: name, expectation: expectation) }

    /// `first` and `second` taken in turn, one entry of each, then the rest of the longer: a
    /// format's structure stage runs early, beside its hostile catalogue, not after it.
    public static func interleaved(_ first: [CatalogueEntry], _ second: [CatalogueEntry]) -> [CatalogueEntry] {
        var out: [CatalogueEntry] = []
        out.reserveCapacity(first.count + second.count)
        for index in 0..<max(first.count, second.count) {
            if index < first.count { out.append(first[index]) }
            if index < second.count { out.append(second[index]) }
        }
        return out
    }
}

/// What a format knows that byte flips do not: how to make valid files and how to corrupt them
/// where it matters. The campaign runs its catalogue for every seed, then mixes its random
/// mutations with byte-level havoc.
public protocol StructureAwareMutator: Sendable {
    /// Systematic corruptions of one valid file (lying lengths, truncation at every field
    /// boundary, future versions, wrong checksums…). The context carries the campaign's traps
    /// for documents that reach outside themselves, and the largest input worth building.
    func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [StructuredMutation]
    /// The catalogue as entries made when they are due (what a campaign runs). Without an
    /// answer of its own a mutator's ``catalogue(of:context:)`` is made at once: a format whose
    /// catalogue is large (documents of megabytes, thousands of entries) gives its own.
    func catalogueEntries(of bytes: [UInt8], context: CatalogueContext) -> [CatalogueEntry]
    /// Whether the catalogue uses ``OutsideTraps``: the campaign then sets them up.
    var usesOutsideTraps: Bool { get }
    /// One random corruption of `bytes`, or nil when they are not structured enough to parse.
    func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> StructuredMutation?
    /// Whether `mutate` can mutate `bytes` at all: false when they do not parse, so it would
    /// always give nil. A campaign asks once for each input it keeps to mutate, and draws no
    /// structure-aware mutation of one that cannot be (most corrupt inputs do not parse).
    /// Without an answer of its own, a mutator is asked every time.
    func canMutate(_ bytes: [UInt8]) -> Bool
    /// A new valid file.
    func generate(using rng: inout FuzzRNG) -> [UInt8]
    /// Structurally smaller variants of `bytes`, smallest-first where it can tell (an array
    /// element removed, a string emptied, a number zeroed), for the minimizer to try before it
    /// cuts bytes blindly.
    func shrinkCandidates(of bytes: [UInt8]) -> [[UInt8]]
}

extension StructureAwareMutator {
    public func shrinkCandidates(of bytes: [UInt8]) -> [[UInt8]] { [] }
    public func canMutate(_ bytes: [UInt8]) -> Bool { true }
    public func catalogueEntries(of bytes: [UInt8], context: CatalogueContext) -> [CatalogueEntry] {
        catalogue(of: bytes, context: context).map(CatalogueEntry.init)
    }
    /// The catalogue without traps or size cap.
    public func catalogue(of bytes: [UInt8]) -> [StructuredMutation] { catalogue(of: bytes, context: CatalogueContext()) }
    public var usesOutsideTraps: Bool { false }
}

/// What a catalogue is built for: the campaign's outside traps, if it set them, and the
/// largest input worth building (a campaign leaves out entries over 16 MiB).
public struct CatalogueContext: Sendable {
    /// The canary file and loopback listener, for documents that name external resources.
    public var traps: OutsideTraps?
    /// Entries longer than this are not built.
    public var maxInputLength: Int

    public init(traps: OutsideTraps? = nil, maxInputLength: Int = .max) {
        self.traps = traps
        self.maxInputLength = maxInputLength
    }

    /// Whether an entry of `length` bytes is worth building.
    public func allows(_ length: Int) -> Bool { length <= maxInputLength }
}

/// What a campaign sets up to catch a loader that lets a document reach outside itself: a
/// local canary file whose content must never show up in the loader's output, and a listener
/// on 127.0.0.1 that must never be contacted. Formats with external references (XML entities
/// and DTDs) put both in their hostile catalogue.
public struct OutsideTraps: Sendable, Hashable, Codable {
    /// The canary file's absolute path.
    public var canaryPath: String
    /// The canary file's content: a token that appears nowhere else.
    public var canaryToken: String
    /// URLs on the loopback listener, e.g. `http://127.0.0.1:40123/corrupt-fuzz-…/external.dtd`
    /// (nil when no listener could be started).
    public var dtdURL: String?
    public var entityURL: String?

    public init(canaryPath: String, canaryToken: String, dtdURL: String? = nil, entityURL: String? = nil) {
        self.canaryPath = canaryPath
        self.canaryToken = canaryToken
        self.dtdURL = dtdURL
        self.entityURL = entityURL
    }
}

/// A user-data format: its usual file extension, its strict reference validator and, when it
/// has them, structure-aware mutations with a generator of valid files.
///
/// A format *has* a validator and a mutator; a format of your own is a few lines:
///
/// ```swift
/// struct SettingsFormat: FuzzFormat {
///     let fileExtension = "settings"
///     var validator: any Validator {
///         ClosureValidator(name: "settings") { bytes in
///             Settings.validate(bytes).map { .invalid(Violation(.corrupt, $0)) } ?? .valid
///         }
///     }
/// }
/// ```
///
/// Without a mutator the campaign mutates the seeds byte-wise only.
public protocol FuzzFormat: Sendable {
    /// The usual file extension, without the dot (empty: the one the seeds share).
    var fileExtension: String { get }
    /// The format's strict reference validator.
    var validator: any Validator { get }
    /// The structure-aware mutations, hostile catalogue and generator; nil when the format has
    /// none (byte-level mutations only).
    var mutator: (any StructureAwareMutator)? { get }
}

extension FuzzFormat {
    public var mutator: (any StructureAwareMutator)? { nil }
}
