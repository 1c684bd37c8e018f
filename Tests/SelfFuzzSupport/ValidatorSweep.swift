import CorruptFuzzCore
import Foundation
import Testing

// The validator sweeps' shared parts (Tests/Corrupt*Tests/ValidatorSweepTests.swift): the tally
// of agreements and disagreements, and the helper script's runner.

/// One sweep input: a name for reports and the bytes.
public struct SweepInput {
    public var name: String
    public var bytes: [UInt8]

    public init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
}

extension SweepInput {
    /// Writes `inputs` into `folder` as `PREFIX0.EXT`, `PREFIX1.EXT`…, for tools that read files;
    /// returns their paths, in order.
    public static func write(_ inputs: [SweepInput], into folder: URL, prefix: String = "", extension ext: String) throws -> [String] {
        try inputs.enumerated().map { index, input in
            let path = folder.appendingPathComponent("\(prefix)\(index).\(ext)").path
            try Data(input.bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    /// Input `index` of a sweep's mutations: a seed drawn from `seeds`, changed by a
    /// structure-aware mutation (one of `mutators`), one to three byte-level ones, or both; named
    /// after its seed and steps.
    public static func mutation(_ index: Int, of seeds: [SweepInput], mutators: [any StructureAwareMutator], using rng: inout FuzzRNG) -> SweepInput {
        let seed = seeds[rng.below(seeds.count)]
        var bytes = seed.bytes
        var steps: [String] = []
        let mode = rng.below(3)  // 0: structure-aware, 1: byte-level, 2: both
        if mode != 1, let mutation = mutators[mutators.count == 1 ? 0 : rng.below(mutators.count)].mutate(bytes, using: &rng) {
            bytes = mutation.bytes
            steps.append(mutation.name)
        }
        if mode != 0 || steps.isEmpty {
            for _ in 0..<(1 + rng.below(3)) {
                let byteMutator = Mutator.byteLevel[rng.below(Mutator.byteLevel.count)]
                if let step = byteMutator.mutate(&bytes, using: &rng, context: MutationContext(partner: seeds[rng.below(seeds.count)].bytes)) {
                    steps.append(step)
                }
            }
        }
        return SweepInput(name: "mutation \(index) of \(seed.name): \(steps.joined(separator: ", "))", bytes: bytes)
    }
}

/// Counts per oracle: agreements, disagreements by class (with a few examples), inputs not
/// compared, notes; prints them, and records an issue for each class not in the allow-list.
public struct SweepTally {
    public let format: String
    public var inputs: Int
    public let allowed: [String: String]
    public var agreements: [String: Int] = [:]
    public var verdicts: [String: Int] = [:]
    public var skipped: [String: [String: Int]] = [:]
    public var classes: [String: [String: Int]] = [:]
    public var families: [String: [String: Int]] = [:]
    public var examples: [String: [String]] = [:]
    public var notes: [String: [String: Int]] = [:]

    public init(format: String, inputs: Int, allowed: [String: String]) {
        self.format = format
        self.inputs = inputs
        self.allowed = allowed
    }

    public mutating func agree(_ oracle: String) { agreements[oracle, default: 0] += 1 }
    public mutating func count(_ verdict: String) { verdicts[verdict, default: 0] += 1 }
    public mutating func skip(_ oracle: String, _ reason: String) { skipped[oracle, default: [:]][reason, default: 0] += 1 }
    public mutating func note(_ oracle: String, _ what: String) { notes[oracle, default: [:]][what, default: 0] += 1 }

    /// With CORRUPT_FUZZ_SWEEP_DUMP=FOLDER, the inputs of classes not in the allow-list are
    /// written there, to look into.
    public mutating func disagree(_ oracle: String, _ name: String, family: String, _ example: String, bytes: [UInt8]) {
        if allowed[name] == nil, let folder = ProcessInfo.processInfo.environment["CORRUPT_FUZZ_SWEEP_DUMP"] {
            let count = classes.values.reduce(0) { $0 + $1.values.reduce(0, +) }
            try? Data(bytes).write(to: URL(fileURLWithPath: folder).appendingPathComponent("\(format)-\(count)"))
        }
        classes[oracle, default: [:]][name, default: 0] += 1
        families[oracle + " " + name, default: [:]][family, default: 0] += 1
        if examples[name, default: []].count < 3 { examples[name, default: []].append(example) }
    }

    public func report(seconds: Double) {
        let split = verdicts.isEmpty ? "" : " (\(verdicts["valid", default: 0]) valid by us, \(verdicts["invalid", default: 0]) invalid)"
        print("validator sweep: \(format): \(inputs) inputs\(split) in \(String(format: "%.1f", seconds)) s")
        for oracle in Set(agreements.keys).union(classes.keys).union(skipped.keys).sorted() {
            let disagreements = classes[oracle, default: [:]].values.reduce(0, +)
            let notAsked = skipped[oracle, default: [:]].values.reduce(0, +)
            print("  \(oracle): \(agreements[oracle, default: 0]) agree, \(disagreements) disagree, \(notAsked) not compared")
            for (reason, count) in skipped[oracle, default: [:]].sorted(by: { $0.key < $1.key }) { print("    not compared: \(count) \(reason)") }
            for (what, count) in notes[oracle, default: [:]].sorted(by: { $0.key < $1.key }) { print("    of these, \(count) \(what)") }
            for (name, count) in classes[oracle, default: [:]].sorted(by: { $0.key < $1.key }) {
                let known = allowed[name] != nil
                print("    \(known ? "allowed" : "UNEXPLAINED"): \(count) \(name)")
                for (family, n) in families[oracle + " " + name, default: [:]].sorted(by: { $0.value > $1.value }) { print("      \(n) \(family)") }
                if !known {
                    let shown = examples[name, default: []].joined(separator: "\n")
                    Issue.record("\(format): \(count) inputs in a class of disagreement with \(oracle) the allow-list does not explain: \(name)\n\(shown)")
                }
            }
        }
    }
}

extension Duration {
    /// The duration in seconds, for the sweeps' reports.
    public var sweepSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Runs Scripts/validator-sweep.py in `mode` on `paths` (with `extra` arguments first): one
/// result a path, in order; nil, with an issue recorded, when it cannot.
public func runSweepScript(_ mode: String, _ paths: [String], extra: [String] = []) throws -> [[String: Any]]? {
    guard toolOnPath("python3") else {
        Issue.record("python3 is not on PATH (Scripts/setup.sh installs it): Scripts/validator-sweep.py \(mode) did not run")
        return nil
    }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let list = FileManager.default.temporaryDirectory.appendingPathComponent("sweep-list-\(UUID().uuidString).txt")
    try Data(paths.joined(separator: "\n").utf8).write(to: list)
    defer { try? FileManager.default.removeItem(at: list) }
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("sweep-out-\(UUID().uuidString).jsonl")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    let handle = try FileHandle(forWritingTo: output)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", root.appendingPathComponent("Scripts/validator-sweep.py").path, mode] + extra + ["--list", list.path]
    process.standardOutput = handle
    try process.run()
    process.waitUntilExit()
    try handle.close()
    let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
    guard process.terminationStatus == 0, lines.count == paths.count else {
        Issue.record("Scripts/validator-sweep.py \(mode) exited \(process.terminationStatus) with \(lines.count) results for \(paths.count) files")
        return nil
    }
    return try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
}

public func toolOnPath(_ name: String) -> Bool {
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
    }
}
