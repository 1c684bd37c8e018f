// The in-process side of Benchmarks/Speed/run.sh: CorruptFuzzTesting checks of the hardened
// habit loader, as a user's test would write them, run for a number of inputs; prints inputs/s.
//
//   swift run -c release corrupt-fuzz-speed [runs] [check|check-data|crashes]
//
// `check` (the default): the full check with the habit schema (its reference validator on
// every input, structure-aware mutations on half of them). `check-data`: the same through a
// `Data` closure. `crashes`: the check without a format (byte mutations; crashes, hangs and
// memory only), which does what a plain libFuzzer harness does. (Crash isolation re-runs a test as its worker, so it is measured from a test:
// Benchmarks/testing-speed/run.sh.)
import CorruptFuzzSchema
import CorruptFuzzTesting
import Foundation
import HabitLoaders

let arguments = Array(CommandLine.arguments.dropFirst())
let runs = arguments.first.flatMap { Int($0) } ?? 1_000_000
let mode = arguments.count > 1 ? arguments[1] : "check"
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let seeds = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Corpus/habits").path)
    .filter { $0.hasSuffix(".habits") }.sorted()
    .map { try Data(contentsOf: root.appendingPathComponent("Corpus/habits/\($0)")) }
let regressions = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-speed-\(getpid())")
defer { try? FileManager.default.removeItem(at: regressions) }
let options = CorruptFuzzOptions(runs: runs, isolation: .inProcess, regressions: regressions)

// The bytes the loader was given, for the mean input length printed beside the rate.
nonisolated(unsafe) var loadedBytes = 0
// The hardened loader reads `[UInt8]`, so the checks hand it the input's bytes as they are
// (the `[UInt8]` overloads), as the libFuzzer harness hands it an array of its input;
// `check-data` is the full check through a `Data` closure that calls `[UInt8](data)`, which
// copies the bytes twice more.
let report: CorruptFuzzReport
switch mode {
case "crashes":
    report = verifyLoaderSurvivesCorruption("speed", seeds: seeds, options: options) { (bytes: [UInt8]) in
        loadedBytes += bytes.count
        return try HardenedHabitLoader.load(bytes)
    }
case "check-data":
    report = verifyLoaderSurvivesCorruption("speed", format: try habitFormat(), seeds: seeds, options: options) { data in
        loadedBytes += data.count
        return try HardenedHabitLoader.load([UInt8](data))
    }
default:
    report = verifyLoaderSurvivesCorruption("speed", format: try habitFormat(), seeds: seeds, options: options) { (bytes: [UInt8]) in
        loadedBytes += bytes.count
        return try HardenedHabitLoader.load(bytes)
    }
}

func habitFormat() throws -> SchemaFormat {
    try SchemaFormat(ksyPath: root.appendingPathComponent("Corpus/schemas/habit-tracker.ksy").path)
}
print(
    "corrupt-fuzz in-process (\(mode)): \(report.executions) inputs in \(String(format: "%.2f", report.seconds)) s = \(Int(report.executionsPerSecond)) inputs/s, \(report.findings.count) findings, mean input \(loadedBytes / max(1, report.executions)) bytes"
)
