import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Shows a session's progress on stderr: one live line on a terminal, a plain line every few
/// seconds otherwise (CI logs).
public final class ProgressDisplay: @unchecked Sendable {
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastPrint = ContinuousClock.now - .seconds(60)
    private var lineShown = false
    private let interval: Duration

    public init() {
        interval = isatty(STDERR_FILENO) == 1 ? .milliseconds(250) : .seconds(5)
    }

    public func update(_ progress: CampaignProgress) {
        let now = ContinuousClock.now
        guard now - lastPrint >= interval || progress.phase != "fuzzing" else { return }
        lastPrint = now
        let rate = progress.elapsedSeconds > 0 ? Double(progress.executions) / progress.elapsedSeconds : 0
        var findings = FindingKind.allCases.compactMap { kind in
            progress.findingsByKind[kind].map { "\(kind.rawValue) \($0)" }
        }.joined(separator: ", ")
        if findings.isEmpty { findings = "no findings" }
        let line =
            "[\(progress.targetName)] \(progress.phase): \(progress.executions) execs (\(Int(rate))/s), "
            + (progress.edges.map { "\($0) edges, " } ?? "") + "\(findings), "
            + "\(Int(progress.elapsedSeconds))s elapsed, \(progress.remaining) left"
        if isTerminal {
            write("\r\u{1B}[K" + line)
            lineShown = true
        } else {
            write(line + "\n")
        }
    }

    public func finish(_ result: CampaignResult) {
        clear()
        let stop = result.stopReason == .interrupted ? " (interrupted)" : ""
        note(
            "[\(result.targetName)] done\(stop): \(result.executions) executions in \(String(format: "%.1f", result.fuzzSeconds))s, \(result.findings.count) findings"
        )
        if let stability = result.stability, stability.differed > 0 {
            note(
                "[\(result.targetName)] warning: stability \(String(format: "%.1f", 100 * stability.ratio))%: \(stability.differed) of \(stability.rechecked) inputs run again had another outcome (\(stability.example ?? "")); the worker keeps state between inputs"
            )
        }
        if result.findingsOnlyAfterTrap > 0 {
            note(
                "[\(result.targetName)] note: left out \(result.findingsOnlyAfterTrap) finding\(result.findingsOnlyAfterTrap == 1 ? "" : "s") a worker's process showed only after it had lived through a trap, which a fresh process did not show"
            )
        }
        if result.escapedProcessesKilled > 0 {
            note(
                "[\(result.targetName)] note: killed \(result.escapedProcessesKilled) process\(result.escapedProcessesKilled == 1 ? "" : "es") the target left running outside its process group"
            )
        }
    }

    public func note(_ text: String) {
        clear()
        write(text + "\n")
    }

    public func clear() {
        if isTerminal, lineShown { write("\r\u{1B}[K") }
        lineShown = false
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
