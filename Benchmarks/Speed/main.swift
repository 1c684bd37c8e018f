// The in-process side of Benchmarks/speed.sh: a CorruptFuzzTesting check of the hardened habit
// loader, as a user's test would write it, run for a number of inputs; prints inputs/s.
//
//   swift run -c release corrupt-fuzz-speed [runs]
// (Crash isolation re-runs a test as its worker, so it is measured from a test:
// Benchmarks/testing-speed/run.sh.)
import CorruptFuzzSchema
import CorruptFuzzTesting
import Foundation
import HabitLoaders

let arguments = CommandLine.arguments.dropFirst()
let runs = arguments.first.flatMap { Int($0) } ?? 1_000_000
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let format = try SchemaFormat(ksyPath: root.appendingPathComponent("Corpus/schemas/habit-tracker.ksy").path)
let seeds = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Corpus/habits").path)
    .filter { $0.hasSuffix(".habits") }.sorted()
    .map { try Data(contentsOf: root.appendingPathComponent("Corpus/habits/\($0)")) }
let regressions = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-speed-\(getpid())")
defer { try? FileManager.default.removeItem(at: regressions) }

let report = verifyLoaderSurvivesCorruption(
    "speed", format: format, seeds: seeds, options: .init(runs: runs, isolation: .inProcess, regressions: regressions)
) { data in
    try HardenedHabitLoader.load([UInt8](data))
}
print(
    "corrupt-fuzz in-process: \(report.executions) inputs in \(String(format: "%.2f", report.seconds)) s = \(Int(report.executionsPerSecond)) inputs/s, \(report.findings.count) findings"
)
