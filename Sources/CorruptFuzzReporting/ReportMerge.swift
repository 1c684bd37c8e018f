import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// Combines the reports of shards of one campaign (or any runs of the same targets) into one:
/// campaigns of the same target become one, findings with the same kind and signature become
/// one finding whose hits add up.
public enum ReportMerge {
    /// Reads the report folders `folders`, merges them into one report folder under `reports`
    /// (findings with one key merged, hits added up, reproducers saved again), marks the
    /// findings `known` lists as expected, and writes the new ones as known-findings lines to
    /// `newFindingsFile` when given: what `corrupt-fuzz merge` does. A folder left by a run
    /// killed before its report counts with the findings it saved as it found them
    /// (``ReportWriter/readRun(in:)``); `note` is told what was read so, or skipped.
    /// - Throws: ``CorruptFuzzError`` for a folder without a readable report or saved finding,
    ///   or a report that cannot be written.
    public static func merge(
        _ folders: [String], into reports: String, known: KnownFindings?, newFindingsFile: String? = nil, note: (String) -> Void = { _ in }
    ) throws(CorruptFuzzError) -> RunReport {
        let inputs = try folders.map { folder throws(CorruptFuzzError) in
            let (report, notes) = try ReportWriter.readRun(in: folder)
            notes.forEach(note)
            return report
        }
        var suites = Self.suites(of: inputs)
        for index in suites.indices { suites[index].markExpected(by: known) }
        let writer = try ReportWriter(
            root: reports, runID: "merged-" + ReportWriter.makeRunID(seed: inputs.first?.suites.first?.result.configuration.seed ?? 0))
        try writer.write(&suites)
        let merged = try ReportWriter.readReport(in: writer.folder.path)
        if let newFindingsFile {
            try ReportWriter.write(Data(KnownFindings.listing(newFindingsOf: merged).utf8), to: newFindingsFile)
        }
        return merged
    }

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
        out.findingsOnlyAfterTrap += b.findingsOnlyAfterTrap
        out.outsideTraps = a.outsideTraps ?? b.outsideTraps
        if b.stopReason.endedEarly { out.stopReason = b.stopReason }
        out.toolError = [a.toolError, b.toolError].compactMap { $0 }.joined(separator: "; ").nilIfEmpty
        for (reason, count) in b.undecided where out.undecided[reason] != nil || out.undecided.count < CampaignResult.maxUndecidedReasons {
            out.undecided[reason, default: 0] += count
        }
        if let coverage = b.coverage {
            // The shards' maps are not kept: the most edges one reached, and every input kept.
            let edges = max(out.coverage?.edges ?? 0, coverage.edges)
            out.coverage = CoverageSummary(edges: edges, inputsKept: (out.coverage?.inputsKept ?? 0) + coverage.inputsKept)
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
            kept.absorb(record)
            if record.firstSeconds < kept.firstSeconds {
                kept.firstSeconds = record.firstSeconds
                kept.firstExecution = record.firstExecution
            }
            // A reproducer that replays (no fresh-process mark, or the original as reproducer)
            // is preferred to one that does not, then the smaller one; its marks come with it.
            func replays(_ r: FindingRecord) -> Bool { if case .notReproduced? = r.freshProcess { false } else { true } }
            let smaller = (record.minimized?.count ?? .max) < (kept.minimized?.count ?? kept.finding.input.bytes?.count ?? .max)
            if record.minimized != nil, replays(record) && !replays(kept) || (replays(record) == replays(kept) && smaller) {
                kept.minimized = record.minimized
                kept.minimizedExecution = record.minimizedExecution
                kept.minimizationEnd = record.minimizationEnd
                kept.freshProcess = record.freshProcess
            }
            out.findings[index] = kept
        }
        return out
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
