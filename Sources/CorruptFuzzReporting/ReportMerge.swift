import CorruptFuzzCore
import CorruptFuzzRunner

/// Combines the reports of shards of one campaign (or any runs of the same targets) into one:
/// campaigns of the same target become one, findings with the same kind and signature become
/// one finding whose hits add up.
public enum ReportMerge {
    /// The merged campaigns, in the order their targets first appear.
    public static func suites(of reports: [RunReport]) -> [RunReport.Suite] {
        var merged: [RunReport.Suite] = []
        for suite in reports.flatMap(\.suites) {
            if let index = merged.firstIndex(where: { $0.result.targetName == suite.result.targetName }) {
                merged[index].result = combine(merged[index].result, suite.result)
                merged[index].source = merged[index].source ?? suite.source
                // A finding one shard's regression store reproduced is expected in the whole.
                for mark in suite.expected ?? [] where merged[index].expectation(for: mark.key) == nil {
                    merged[index].expected = (merged[index].expected ?? []) + [mark]
                }
            } else {
                var copy = suite
                copy.reproducers = []
                merged.append(copy)
            }
        }
        return merged
    }

    /// One campaign's result from two: executions and counts add up, times are the longer
    /// (shards run side by side), findings are deduplicated by kind and signature.
    public static func combine(_ a: CampaignResult, _ b: CampaignResult) -> CampaignResult {
        var out = a
        out.executions += b.executions
        out.fuzzSeconds = max(a.fuzzSeconds, b.fuzzSeconds)
        out.totalSeconds = max(a.totalSeconds, b.totalSeconds)
        out.configuration.shard = nil
        if let x = a.configuration.maxRuns, let y = b.configuration.maxRuns { out.configuration.maxRuns = x + y }
        out.seedNames += b.seedNames.filter { !a.seedNames.contains($0) }
        out.targetGivesReasons = a.targetGivesReasons || b.targetGivesReasons
        out.escapedProcessesKilled += b.escapedProcessesKilled
        out.slowInputs += b.slowInputs
        out.outsideTraps = a.outsideTraps ?? b.outsideTraps
        if b.stopReason.endedEarly { out.stopReason = b.stopReason }
        out.toolError = [a.toolError, b.toolError].compactMap { $0 }.joined(separator: "; ").nilIfEmpty
        for (reason, count) in b.undecided where out.undecided[reason] != nil || out.undecided.count < CampaignResult.maxUndecidedReasons {
            out.undecided[reason, default: 0] += count
        }
        if let s = b.stability {
            var sum = out.stability ?? Stability()
            sum.rechecked += s.rechecked
            sum.differed += s.differed
            sum.example = sum.example ?? s.example
            out.stability = sum
        }
        // The shards' input sequences, one after the other.
        var hash = a.inputSequenceHash
        for shift in stride(from: 0, to: 64, by: 8) {
            hash = (hash ^ (b.inputSequenceHash >> UInt64(shift) & 0xFF)) &* 0x0000_0100_0000_01B3
        }
        out.inputSequenceHash = hash
        for record in b.findings {
            guard let index = out.findings.firstIndex(where: { $0.finding.key == record.finding.key }) else {
                out.findings.append(record)
                continue
            }
            var kept = out.findings[index]
            kept.hits += record.hits
            if record.firstSeconds < kept.firstSeconds {
                kept.firstSeconds = record.firstSeconds
                kept.firstExecution = record.firstExecution
            }
            if let smaller = record.minimized, smaller.count < (kept.minimized?.count ?? kept.finding.input.bytes?.count ?? .max) {
                kept.minimized = smaller
                kept.minimizedExecution = record.minimizedExecution
            }
            out.findings[index] = kept
        }
        return out
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
