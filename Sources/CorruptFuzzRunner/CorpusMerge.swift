import CorruptFuzzCore
import Foundation

/// Corpus folders into one, each distinct file once (by content), under its first name.
public enum CorpusMerge {
    /// Copies every distinct file (by content) of `folders` into `output`, under its first
    /// name (`-2`, `-3`… when names clash); files already in `output` count as seen.
    /// - Returns: How many files were copied, and how many were left out as duplicates.
    public static func merge(_ folders: [String], into output: String) throws(CorruptFuzzError) -> (kept: Int, duplicates: Int) {
        let fm = FileManager.default
        do {
            try fm.createDirectory(atPath: output, withIntermediateDirectories: true)
        } catch {
            throw CorruptFuzzError(.invalidArgument, "cannot create \(output): \(error.localizedDescription)")
        }
        var seen: Set<Data> = []
        var names: Set<String> = Set((try? fm.contentsOfDirectory(atPath: output)) ?? [])
        for name in names {
            if let data = fm.contents(atPath: (output as NSString).appendingPathComponent(name)) { seen.insert(data) }
        }
        var kept = 0, duplicates = 0
        for (path, entry) in try files(in: folders) {
            guard let data = fm.contents(atPath: path) else { continue }
            guard seen.insert(data).inserted else {
                duplicates += 1
                continue
            }
            let name = uniqueName(entry, taken: &names)
            // Atomically: a merge killed midway leaves no part of a file for the next run's seeds.
            do throws(CorruptFuzzError) {
                try AtomicFile.write(data, to: URL(fileURLWithPath: output).appendingPathComponent(name).path)
            } catch {
                throw CorruptFuzzError(.invalidArgument, "cannot write into \(output): \(error.message)")
            }
            kept += 1
        }
        return (kept, duplicates)
    }

    /// The regular files of `folders`, folder by folder, each folder's by name (hidden files
    /// left out): their paths and names.
    static func files(in folders: [String]) throws(CorruptFuzzError) -> [(path: String, name: String)] {
        var out: [(path: String, name: String)] = []
        for folder in folders {
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
                throw CorruptFuzzError(.invalidArgument, "cannot read the corpus folder \(folder)")
            }
            for entry in entries.sorted() where !entry.hasPrefix(".") {
                let path = (folder as NSString).appendingPathComponent(entry)
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue { out.append((path, entry)) }
            }
        }
        return out
    }

    /// `entry`, or `entry-2`, `entry-3`… (before its extension) when that is taken; taken now.
    static func uniqueName(_ entry: String, taken names: inout Set<String>) -> String {
        var name = entry
        var suffix = 2
        while !names.insert(name).inserted {
            let base = (entry as NSString).deletingPathExtension, ext = (entry as NSString).pathExtension
            name = "\(base)-\(suffix)" + (ext.isEmpty ? "" : ".\(ext)")
            suffix += 1
        }
        return name
    }
}

extension CorpusMerge {
    /// What ``minimize(_:into:replay:)`` kept and left out.
    public struct Minimized: Sendable, Hashable {
        /// Files written to the output: the smallest input of each distinct behaviour.
        public var kept: Int
        /// Distinct files run (files with the same bytes are run once).
        public var inputs: Int
        /// Files with the same bytes as one before.
        public var duplicates: Int
        /// Files that are findings (a crash, a hang, a silent acceptance…): not corpus material.
        public var findings: Int
        /// Distinct behaviours seen, each kept by one file.
        public var behaviours: Int
        /// Edges of an instrumented target the files reach, every one reached by the kept files
        /// (nil: the target showed no coverage, or the replay did not read it).
        public var edges: Int?
    }

    /// Corpus folders into a small set of files that keeps every edge (with AFL's hit-count
    /// buckets) of an instrumented target and every distinct behaviour (the campaign's behaviour
    /// key: the outcome, the reason and exit code, and the loader's and the validator's messages
    /// with their numbers as `#`), as AFL++'s `afl-cmin` and libFuzzer's `-merge=1` keep edges:
    /// every distinct file is run once through `replay`'s executor (with coverage, when it reads
    /// it) and judge, smallest first, and a file is kept when it reaches an edge, a hit count or a
    /// behaviour no smaller file did. Files that are findings are left out. So a corpus merged
    /// night after night stops growing once nothing new is found.
    /// - Throws: ``CorruptFuzzError`` when a folder cannot be read, `output` holds files
    ///   already (it would mix with the minimized set), or the target cannot be run.
    public static func minimize(_ folders: [String], into output: String, replay: Replay) throws(CorruptFuzzError) -> Minimized {
        let fm = FileManager.default
        if let existing = try? fm.contentsOfDirectory(atPath: output), existing.contains(where: { !$0.hasPrefix(".") }) {
            throw CorruptFuzzError(.invalidArgument, "\(output) is not empty: a minimized corpus goes into an empty or new folder")
        }
        var files: [(path: String, name: String, size: Int)] = []
        var seen: Set<Data> = []
        var duplicates = 0
        for (path, entry) in try Self.files(in: folders) {
            guard let data = fm.contents(atPath: path) else { throw CorruptFuzzError(.unusableCorpus, "cannot read \(path)") }
            guard seen.insert(data).inserted else {
                duplicates += 1
                continue
            }
            files.append((path, entry, data.count))
        }
        // Smallest first (then in folder order): the first file of a behaviour is its smallest.
        let order = files.indices.sorted { (files[$0].size, $0) < (files[$1].size, $1) }
        var behaviours: Set<Int> = []
        var normalized = NormalizedMessages()
        var coverage = CoverageTable()
        var sawCoverage = false
        var chosen: [Int] = []
        var findings = 0
        for index in order {
            let judgement = try replay.replay(files[index].path).judgement
            if judgement.finding != nil {
                findings += 1
                continue
            }
            var newCode = false
            if let sample = judgement.execution.coverage {
                sawCoverage = true
                newCode = coverage.add(sample) != .none
            }
            let behaviour = Campaign.behaviour(of: judgement.execution.outcome, verdict: judgement.verdict, normalized: &normalized)
            if behaviours.insert(behaviour).inserted || newCode {
                chosen.append(index)
            }
        }
        do {
            try fm.createDirectory(atPath: output, withIntermediateDirectories: true)
            var names: Set<String> = []
            for index in chosen.sorted() {
                let name = uniqueName(files[index].name, taken: &names)
                try fm.copyItem(atPath: files[index].path, toPath: (output as NSString).appendingPathComponent(name))
            }
        } catch {
            throw CorruptFuzzError(.invalidArgument, "cannot write into \(output): \(error.localizedDescription)")
        }
        return Minimized(
            kept: chosen.count, inputs: files.count, duplicates: duplicates, findings: findings, behaviours: behaviours.count,
            edges: sawCoverage ? coverage.edges : nil)
    }
}
