import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// Writes a run as SARIF 2.1.0 (`results.sarif`, beside junit.xml) for GitHub code scanning and
/// other SARIF viewers: one result per distinct finding, its rule the finding's kind.
///
/// - A result's `partialFingerprints` hold a hash of the target's name, the kind and the
///   signature: the same bug found on two nights is one alert, not two.
/// - A finding whose signature points at the schema line that declares the broken rule
///   (`location` in summary.json) has that file and line as its location; the others have
///   none (GitHub lists only results with a location; every finding is in the file).
/// - New findings are `error`s; expected ones (a known-findings file or the regression store)
///   are `note`s, and say why.
public struct SARIFReporter: Sendable {
    public init() {}

    /// The bytes of `results.sarif`.
    public func render(_ report: RunReport) throws -> Data {
        var kinds: [FindingKind] = []
        var results: [Result] = []
        for suite in report.suites {
            let target = suite.result.targetName
            for (index, record) in suite.result.findings.enumerated() {
                let finding = record.finding
                if !kinds.contains(finding.kind) { kinds.append(finding.kind) }
                let saved = index < suite.reproducers.count ? suite.reproducers[index] : nil
                let expected = suite.expectation(for: finding.key)
                var text = "\(target): \(finding.kind.rawValue): \(finding.signature) (hit \(record.hits)x)\n\(finding.detail)"
                if let expected { text += "\nexpected: \(expected)" }
                if let saved {
                    if let path = saved.minimized { text += "\nreproducer: \(path)" }
                    text += "\nreplay: \(saved.replayCommand)"
                }
                results.append(
                    Result(
                        ruleId: finding.kind.rawValue, level: expected == nil ? "error" : "note", message: Message(text: text),
                        locations: saved?.location.flatMap(Self.location(from:)).map { [$0] },
                        partialFingerprints: ["corruptFuzzFinding/v1": Self.fingerprint(target: target, key: finding.key)],
                        properties: Properties(
                            target: target, signature: finding.signature, hits: record.hits, reproducer: saved?.minimized,
                            replay: saved?.replayCommand)))
            }
        }
        let rules = kinds.map { Rule(id: $0.rawValue, name: $0.rawValue, shortDescription: Message(text: Self.describe($0))) }
        let log = Log(
            version: "2.1.0", schema: "https://json.schemastore.org/sarif-2.1.0.json",
            runs: [
                Run(
                    tool: Tool(driver: Driver(name: "corrupt-fuzz", informationUri: "https://github.com/corrupt-fuzz/corrupt-fuzz", rules: rules)),
                    automationDetails: AutomationDetails(id: "corrupt-fuzz/\(report.runID)"), results: results)
            ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(log)
    }

    /// A hash of what makes a finding the same bug from run to run: the target's name, the
    /// kind and the signature (which leaves out numbers and quoted data).
    public static func fingerprint(target: String, key: FindingKey) -> String {
        SHA1.hex(Array("\(target)\u{0}\(key.kind.rawValue)\u{0}\(key.signature)".utf8))
    }

    /// `Corpus/schemas/habit-tracker.ksy:12` as a SARIF location.
    static func location(from text: String) -> Location? {
        guard let colon = text.lastIndex(of: ":"), let line = Int(text[text.index(after: colon)...]), line >= 1 else { return nil }
        var file = String(text[..<colon])
        guard !file.isEmpty else { return nil }
        // Code scanning reads paths from the repository's root: where the run started.
        let root = FileManager.default.currentDirectoryPath + "/"
        if file.hasPrefix(root) { file.removeFirst(root.count) }
        return Location(physicalLocation: PhysicalLocation(artifactLocation: ArtifactLocation(uri: file), region: Region(startLine: line)))
    }

    static func describe(_ kind: FindingKind) -> String {
        switch kind {
        case .crash: "The loader crashed on a corrupt file."
        case .hang: "The loader did not finish within the deadline, twice."
        case .oom: "The loader went over the memory limit."
        case .silentAcceptance: "The loader accepted a file the validator rejects."
        case .falseRejection: "The loader rejected a valid file."
        case .wrongReason: "The loader rejected a file for the wrong reason (an app would delete a newer version's file as corrupt)."
        case .xxe: "The loader read a local file or fetched a URL a document named."
        case .validatorError: "The validator itself failed on an input."
        default: "corrupt-fuzz check \(kind.rawValue)."
        }
    }

    // MARK: - The SARIF objects written

    struct Log: Encodable {
        var version: String
        var schema: String
        var runs: [Run]
        enum CodingKeys: String, CodingKey {
            case version, runs
            case schema = "$schema"
        }
    }
    struct Run: Encodable {
        var tool: Tool
        var automationDetails: AutomationDetails
        var results: [Result]
    }
    struct AutomationDetails: Encodable { var id: String }
    struct Tool: Encodable { var driver: Driver }
    struct Driver: Encodable {
        var name: String
        var informationUri: String
        var rules: [Rule]
    }
    struct Rule: Encodable {
        var id: String
        var name: String
        var shortDescription: Message
    }
    struct Message: Encodable { var text: String }
    struct Result: Encodable {
        var ruleId: String
        var level: String
        var message: Message
        var locations: [Location]?
        var partialFingerprints: [String: String]
        var properties: Properties
    }
    struct Properties: Encodable {
        var target: String
        var signature: String
        var hits: Int
        var reproducer: String?
        var replay: String?
    }
    struct Location: Encodable { var physicalLocation: PhysicalLocation }
    struct PhysicalLocation: Encodable {
        var artifactLocation: ArtifactLocation
        var region: Region
    }
    struct ArtifactLocation: Encodable { var uri: String }
    struct Region: Encodable { var startLine: Int }
}
