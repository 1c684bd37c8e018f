import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// A campaign ready to run in a ``Session``, with what its report needs: how to replay a
/// finding, warnings, the description file its checks come from.
public struct CampaignCheck: Sendable {
    public var campaign: Campaign
    /// How the report tells the user to replay a finding.
    public var replay: ReplayDescription
    public var warnings: [String]
    /// The description file the format's checks come from, for the report's source locations.
    public var source: String?
    /// The input files' extension.
    public var fileExtension: String

    public init(campaign: Campaign, replay: ReplayDescription, warnings: [String] = [], source: String? = nil, fileExtension: String = "") {
        self.campaign = campaign
        self.replay = replay
        self.warnings = warnings
        self.source = source
        self.fileExtension = fileExtension
    }

    /// A campaign of `target` on the seeds of `corpus` (or seeds the format generates), labelled
    /// by the app's validator command when given, else by the format's: a ``CampaignSpec``
    /// assembled, and the replay command that selects the same target, format and limits.
    public static func make(
        target: TargetCommand, worker: Bool = false, corpus: String?, format: ResolvedFormat?, appValidator: TargetCommand?,
        configuration: FuzzConfiguration, name: String? = nil, regressions: RegressionFolder? = nil
    ) throws(CorruptFuzzError) -> CampaignCheck {
        let validator = try appValidator.map { command throws(CorruptFuzzError) in
            try ExternalValidator(command: command, limits: configuration.limits, slots: configuration.jobs, fileExtension: format?.format.fileExtension ?? "")
        }
        let spec = CampaignSpec(
            target: worker ? .worker(target) : .command(target), name: name, format: format?.format, validator: validator,
            seeds: corpus.map { .corpus($0) } ?? .generated(count: CampaignSpec.generatedSeedCount), configuration: configuration,
            regressions: try regressions?.inputs(for: name ?? target.name) ?? [])
        let assembled = try spec.assemble()
        var selection = appValidator.map { [["--validator", $0.line]] } ?? []
        selection += format?.replayArguments ?? []
        let replay = ReplayDescription(
            tool: ExecutablePath.current, targetCommand: target.line, selection: selection, limits: configuration.limits,
            fileExtension: assembled.fileExtension)
        return CampaignCheck(
            campaign: assembled.campaign, replay: replay, warnings: (format?.warnings ?? []) + assembled.warnings, source: format?.source,
            fileExtension: assembled.fileExtension)
    }

    /// The report's suite for the campaign's result, expected findings marked.
    public func suite(of result: CampaignResult, known: KnownFindings?) -> RunReport.Suite {
        var suite = RunReport.Suite(result: result, replay: replay)
        suite.source = source
        suite.markExpected(by: known)
        return suite
    }

    /// Writes the inputs that showed new behaviour into `folder/<target>/`, each under a name
    /// from its content, for the next run's corpus (`--corpus-output`). Only those the
    /// validator calls valid: they become seeds, and a format's catalogue assumes valid seeds
    /// (a future version made of a corrupt file must be called corrupt first, not
    /// unsupported-version).
    public func saveInterestingInputs(to folder: String) throws(CorruptFuzzError) {
        let store = RegressionFolder(root: folder)
        for input in campaign.interestingInputs {
            guard let bytes = input.bytes, campaign.validator?.validate(bytes).isValid ?? true else { continue }
            try store.save(bytes, prefix: "input", fileExtension: fileExtension, for: campaign.targetName)
        }
    }
}
