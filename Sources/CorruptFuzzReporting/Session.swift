import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// Runs a list of checks as one run: owns interrupts (Ctrl-C and SIGTERM end the current check,
/// and the report of what was found is written), the adoption of processes targets leave
/// behind, the report folder (each finding's input in `found/` the moment it is found, and the
/// report written after each check and after each campaign's fuzzing phase, so that no later
/// failure or kill loses what was found), the progress lines and the printed summary. The
/// command line's `run`, `skew`, `roundtrip` and `crashpoints` are sessions.
public final class Session {
    /// One check of a session.
    public enum Check {
        /// A fuzzing campaign.
        case campaign(CampaignCheck)
        /// A check of given inputs (version skew, round trip, crash points): its name, and how
        /// it makes its suites.
        case suites(name: String, run: () throws(CorruptFuzzError) -> [RunReport.Suite])
    }

    public let writer: ReportWriter
    /// Findings not to count as new.
    public let known: KnownFindings?
    /// Where campaigns save the inputs that showed new behaviour (`--corpus-output`).
    public var corpusOutput: String?
    /// Whether a check that cannot run here (`unusableTarget`) is skipped with a line instead of
    /// ending the session (the demo: a build without some programs).
    public var skipUnrunnableChecks = false
    public let display: ProgressDisplay
    /// The suites so far.
    public private(set) var suites: [RunReport.Suite] = [] {
        didSet { reportIsCurrent = false }
    }
    /// Whether the report folder holds ``suites`` as they are: the last write was theirs, and
    /// no provisional report (a campaign's, after its fuzzing) was written since. A report of
    /// findings with inputs of megabytes takes a second to write, so it is not written twice.
    private var reportIsCurrent = false

    /// A session whose report folder is `reports/<run ID>`.
    /// - Throws: ``CorruptFuzzError`` (`reportWriteFailed`) when the folder cannot be written.
    public init(reports: String, runID: String, known: KnownFindings? = nil, display: ProgressDisplay = ProgressDisplay()) throws(CorruptFuzzError) {
        writer = try ReportWriter(root: reports, runID: runID)
        self.known = known
        self.display = display
    }

    /// Runs `checks` in order, writes the report and prints the summary.
    /// - Returns: The number of new findings (those `known` does not list and no regression
    ///   input reproduced).
    /// - Throws: ``CorruptFuzzError`` when a check cannot run (what earlier checks found is
    ///   written first), or when corrupt-fuzz itself failed during a campaign (after the whole
    ///   report, with the findings made before it, is written and summarized).
    public func run(_ checks: [Check]) throws(CorruptFuzzError) -> Int {
        ProcessControl.installInterruptHandler()
        // Descendants of a target that escape its process group (even into a new session)
        // are re-parented to us and killed, instead of outliving the run.
        ProcessControl.becomeSubreaper()
        var toolErrors: [String] = []
        for check in checks where !ProcessControl.interrupted {
            switch check {
            case .campaign(let plan):
                if let error = try run(plan) { toolErrors.append(error) }
            case .suites(let name, let make):
                display.note("checking \(name)")
                do throws(CorruptFuzzError) {
                    suites += try make()
                } catch  where skipUnrunnableChecks && error.code == .unusableTarget {
                    display.note("skipped \(name): \(error)")
                    continue
                } catch {
                    writeKeepingWhatWasFound()
                    throw error
                }
                writeKeepingWhatWasFound()
            }
        }
        if ProcessControl.interrupted { display.note("interrupted: writing the report of what was found so far") }
        try write()
        FileHandle.standardOutput.write(Data(summary().utf8))
        if let first = toolErrors.first { throw CorruptFuzzError(.unusableTarget, first) }
        return newFindings
    }

    /// Runs one campaign; returns the tool error that ended it early, if one did.
    private func run(_ plan: CampaignCheck) throws(CorruptFuzzError) -> String? {
        for warning in plan.warnings { display.note("warning: \(warning)") }
        display.note("fuzzing \(plan.campaign.targetName): \(plan.campaign.targetCommand)")
        let earlier = suites
        // Each finding's input on disk the moment it is found (found/), for a run killed later.
        let found = FoundFolder(writer: writer)
        let campaign = plan.suite(
            of: CampaignResult(
                targetName: plan.campaign.targetName, targetCommand: plan.campaign.targetCommand, validatorName: plan.campaign.validator?.name,
                configuration: plan.campaign.configuration, seedNames: []),
            known: nil)
        plan.campaign.found = { found.save($0, of: campaign) }
        defer { plan.campaign.found = nil }
        let result: CampaignResult
        do throws(CorruptFuzzError) {
            result = try plan.campaign.run(
                progress: display.update, shouldStop: { ProcessControl.interrupted },
                fuzzed: { partial in
                    guard !partial.findings.isEmpty else { return }
                    var provisional = earlier + [plan.suite(of: partial, known: known)]
                    reportIsCurrent = false
                    try? writer.write(&provisional)
                })
        } catch {
            display.clear()
            writeKeepingWhatWasFound()
            throw error
        }
        display.finish(result)
        if let error = found.error { display.note("warning: a finding's input could not be saved as it was found: \(error)") }
        if let error = result.toolError {
            display.note("error: \(plan.campaign.targetName): \(error) (the findings made before it are in the report)")
        }
        suites.append(plan.suite(of: result, known: known))
        writeKeepingWhatWasFound()
        if let corpusOutput { try plan.saveInterestingInputs(to: corpusOutput) }
        return result.toolError
    }

    /// Writes the report of the suites so far, unless the report folder holds them already.
    public func write() throws(CorruptFuzzError) {
        if reportIsCurrent { return }
        try writer.write(&suites)
        reportIsCurrent = true
    }

    /// Writes what was found so far, when there is anything, ignoring a failure (a later
    /// write reports it).
    private func writeKeepingWhatWasFound() {
        if !suites.isEmpty { try? write() }
    }

    /// The findings no known-findings entry or regression input expected.
    public var newFindings: Int { suites.reduce(0) { $0 + $1.newFindings.count } }

    /// How many findings of one kind the summary prints in full.
    public static let findingsShownPerKind = 10

    /// The summary printed at the end: per suite its executions and findings (ten of each kind
    /// in full, with their reproducers), what the validator could not decide, and where the
    /// report is.
    public func summary() -> String {
        var out = "\n"
        for suite in suites {
            let r = suite.result
            out += "\(r.targetName): \(r.executions) executions, "
            if r.checks == nil { out += "\(Int(r.executionsPerSecond.rounded()))/s, " }
            out += r.findings.isEmpty ? "no findings\n" : "\(r.findings.count) finding\(r.findings.count == 1 ? "" : "s")\n"
            if let coverage = r.coverage {
                out += "  coverage: \(coverage.edges) edges (\(coverage.inputsKept) inputs kept for reaching new ones)\n"
            }
            var shown: [FindingKind: Int] = [:]
            for (index, record) in r.findings.enumerated() {
                shown[record.finding.kind, default: 0] += 1
                guard shown[record.finding.kind]! <= Self.findingsShownPerKind else { continue }
                let details = (record.variants?.count).map { ", \($0) distinct details" } ?? ""
                out += "  \(record.finding.kind.rawValue): \(record.finding.signature) (\(record.hits)x\(details))\n"
                if let because = suite.expectation(for: record.finding.key) { out += "    expected: \(because)\n" }
                if case .notReproduced(let finding, _)? = record.freshProcess {
                    out += "    not reproduced in a fresh process (the replay shows \(finding ?? "no finding")): it depends on the worker's state\n"
                } else if case .siteVaries(let sites)? = record.freshProcess {
                    out += "    its site varies from one fresh process to the next (\(sites.count) seen): memory corruption\n"
                } else if case .undecided? = record.freshProcess {
                    out += "    undecided in a fresh process (the machine starved its check of CPU): its replay is the check\n"
                } else if case .notChecked(let needed, _)? = record.freshProcess {
                    out +=
                        "    not checked in a fresh process (its check can take \(Int(needed.rounded(.up))) s, more than was left): its replay is the check\n"
                }
                if index < suite.reproducers.count, let path = suite.reproducers[index].minimized {
                    out += "    reproducer: \(path)\n"
                }
            }
            for (kind, count) in shown.sorted(by: { $0.key < $1.key }) where count > Self.findingsShownPerKind {
                out += "  … and \(count - Self.findingsShownPerKind) more \(kind.rawValue) findings (junit.xml and summary.json list them all)\n"
            }
            if r.slowInputs > 0 {
                out +=
                    "  note: \(r.slowInputs) input\(r.slowInputs == 1 ? "" : "s") missed the \(r.configuration.limits.timeoutMilliseconds) ms deadline once and finished when run again with \(hangConfirmationMilliseconds(for: r.configuration.limits.timeoutMilliseconds)) ms: slow, not hangs\n"
                if let kept = r.slowInputsKept, !kept.isEmpty {
                    out += "    kept for a look: \(writer.slowFolder(of: suite).path)/ (\(kept.count) of them, slow.txt says how each was made)\n"
                }
            }
            let undecided = r.undecided.values.reduce(0, +)
            if undecided > 0, let top = r.undecided.max(by: { $0.value < $1.value }) {
                out +=
                    "  note: the validator could not decide \(undecided) input\(undecided == 1 ? "" : "s") (most often: \(top.key)); only crashes, hangs and memory were checked on them\n"
            }
        }
        let expected = suites.reduce(0) { $0 + $1.result.findings.count - $1.newFindings.count }
        if expected > 0 {
            out += "\n\(newFindings) new finding\(newFindings == 1 ? "" : "s"), \(expected) expected (known findings and the regression store)\n"
        }
        out += "\nReport: \(writer.folder.path)/junit.xml (summary.json and findings/ beside it)\n"
        return out
    }
}

extension ReportWriter {
    /// Saves the suites' reproducers and writes the report files (junit.xml, summary.json,
    /// report.json) for them, stamped with the time and this host.
    public func write(_ suites: inout [RunReport.Suite]) throws(CorruptFuzzError) {
        try saveReproducers(&suites)
        try writeReport(
            RunReport(runID: runID, folder: folder.path, suites: suites, timestamp: Self.isoTimestamp(), hostname: ProcessInfo.processInfo.hostName))
    }

    /// The time now, as report files give it: `2026-11-26T09:30:00` (UTC).
    public static func isoTimestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.string(from: Date())
    }
}
