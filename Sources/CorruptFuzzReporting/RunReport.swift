import CorruptFuzzCore
import CorruptFuzzRunner

/// Everything one `corrupt-fuzz run` reports: the campaigns it ran and where files went.
public struct RunReport: Sendable, Codable {
    /// One campaign, plus how to replay its findings.
    public struct Suite: Sendable, Codable {
        public var result: CampaignResult
        /// How to replay its findings.
        public var replay: ReplayDescription
        /// Where each finding's files were saved, by index in `result.findings`.
        public var reproducers: [SavedReproducer] = []
        /// The findings that are expected (listed in a known-findings file, or reproduced by
        /// an input of the regression store), each with why; the others are new. Nil in
        /// reports written before known findings existed.
        public var expected: [ExpectedFinding]?
        /// The file the campaign's checks come from (the `.ksy` or `.xsd` schema, or the test
        /// that ran it), as given; JUnit points CI annotations at it.
        public var source: String?

        public init(result: CampaignResult, replay: ReplayDescription) {
            self.result = result
            self.replay = replay
        }
    }

    /// Where a finding's files are.
    public struct SavedReproducer: Sendable, Hashable, Codable {
        /// The minimized input (or the original when it could not be minimized); nil for a
        /// missing-file finding.
        public var minimized: String?
        /// The input as first found.
        public var original: String?
        /// The command that replays the finding.
        public var replayCommand: String
        /// Where in the suite's ``Suite/source`` the broken rule is declared, `FILE:LINE`.
        public var location: String?
        /// The first input of each other variant that kept one (``FindingRecord/variants``), by
        /// variant index.
        public var variantInputs: [Int: String]?

        public init(minimized: String?, original: String?, replayCommand: String, location: String? = nil) {
            self.minimized = minimized
            self.original = original
            self.replayCommand = replayCommand
            self.location = location
        }
    }

    public var runID: String
    /// The run's report folder.
    public var folder: String
    public var suites: [Suite]
    public var timestamp: String
    public var hostname: String

    public init(runID: String, folder: String, suites: [Suite], timestamp: String, hostname: String) {
        self.runID = runID
        self.folder = folder
        self.suites = suites
        self.timestamp = timestamp
        self.hostname = hostname
    }

    public var findingCount: Int { suites.reduce(0) { $0 + $1.result.findings.count } }
    /// Findings that are not expected: what fails a nightly job.
    public var newFindingCount: Int { suites.reduce(0) { $0 + $1.newFindings.count } }
}

/// Formats seconds as JUnit wants them: no exponent, at most three decimals.
public func junitTime(_ seconds: Double) -> String {
    // NaN, infinities and absurd values (a rate over a near-zero time) must not trap.
    guard seconds.isFinite else { return "0.000" }
    let millis = Int64((min(max(0, seconds), 1e12) * 1000).rounded())
    let fraction = millis % 1000
    return "\(millis / 1000)." + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0) + "\(fraction)"
}
