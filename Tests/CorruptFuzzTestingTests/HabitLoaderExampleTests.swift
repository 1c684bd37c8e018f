import CorruptFuzzCore
import CorruptFuzzSchema
import CorruptFuzzTesting
import Foundation
import HabitLoaders
import Testing

/// The habit-tracker format, from its schema.
let habitFormat: SchemaFormat = {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Corpus/schemas/habit-tracker.ksy").path
    return try! SchemaFormat(ksyPath: path)
}()

/// A regression folder of its own for each test run, so the suite leaves Corpus/ alone.
func scratchRegressions(_ name: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-regressions-\(name)-\(getpid())")
}

/// The app's own check of loaded data, `validateUserData`-style.
@Sendable func validateHabits(_ habits: [LoadedHabit]) -> String? {
    for (index, habit) in habits.enumerated() {
        if habit.name.isEmpty { return "habits[\(index)].name is empty" }
        if habit.days.contains(where: { $0 < 0 || $0 > 73_048 }) { return "habits[\(index)].days has a day outside 1970...2170" }
    }
    return nil
}

@Suite("CorruptFuzzTesting: the bundled loaders, tested the way a user would")
struct HabitLoaderExampleTests {
    @Test("the hardened loader survives corruption")
    func hardenedLoaderPasses() {
        let report = assertLoaderSurvivesCorruption(
            "hardened-habits", format: habitFormat,
            options: .init(runs: 600, isolation: .inProcess, regressions: scratchRegressions("hardened"))
        ) { data in
            try HardenedHabitLoader.load([UInt8](data))
        } validate: { habits in
            validateHabits(habits)
        }
        #expect(report.executions >= 600)
    }

    @Test("without a format, a check sees the naive loader's crashes, and judges no reason a validator would give")
    func crashesOnly() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Corpus/habits")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".habits") }.sorted()
            .map { try Data(contentsOf: folder.appendingPathComponent($0)) }
        let report = verifyLoaderSurvivesCorruption(
            "naive-habits-crashes", seeds: seeds,
            options: .init(runs: 300, timeout: .milliseconds(400), regressions: scratchRegressions("naive-crashes"), jobs: 2)
        ) { data in
            try NaiveHabitLoader.load([UInt8](data))
        }
        #expect(report.kinds.contains(.crash), "\(report.kinds)")
        // What only a validator can label is not judged; an empty file must still be `empty`.
        #expect(report.kinds.isDisjoint(with: [.silentAcceptance, .falseRejection]), "\(report.kinds)")
        for finding in report.findings where finding.kind == .wrongReason {
            #expect(finding.signature.hasPrefix("expected empty,"), "\(finding.signature)")
        }
    }

    @Test("the naive loader's crash, hang, silent acceptance and wrong reason are found, and the suite goes on")
    func naiveLoaderFindings() {
        let report = verifyLoaderSurvivesCorruption(
            "naive-habits", format: habitFormat,
            options: .init(runs: 400, timeout: .milliseconds(400), regressions: scratchRegressions("naive"), jobs: 2)
        ) { data in
            try NaiveHabitLoader.load([UInt8](data))
        } validate: { habits in
            validateHabits(habits)
        }
        #expect(report.kinds.isSuperset(of: [.crash, .hang, .silentAcceptance, .wrongReason]), "\(report.kinds)")
        let crash = report.findings.first { $0.kind == .crash }
        #expect(crash?.signature.contains("SIG") == true)
        #expect(crash?.reproducer.map { FileManager.default.fileExists(atPath: $0) } == true)
        #expect(crash?.replay.contains("swift test --filter") == true)
    }

    @Test("a failing check records one issue per finding, with the reproducer and the replay line")
    func failuresAreIssues() {
        withKnownIssue {
            assertLoaderSurvivesCorruption(
                "naive-habits-issues", format: habitFormat,
                options: .init(runs: 150, timeout: .milliseconds(300), regressions: scratchRegressions("issues"))
            ) { data in
                try NaiveHabitLoader.load([UInt8](data))
            }
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("reproducer: ") && text.contains("replay: swift test --filter")
        }
    }

    @Test("a fixed seed gives the same inputs twice")
    func fixedSeed() {
        func run(_ seed: UInt64) -> UInt64 {
            verifyLoaderSurvivesCorruption(
                "seeded-habits", format: habitFormat,
                options: .init(runs: 300, seed: seed, isolation: .inProcess, regressions: scratchRegressions("seed-\(seed)"))
            ) { data in try HardenedHabitLoader.load([UInt8](data)) }.inputSequenceHash
        }
        #expect(run(42) == run(42))
        #expect(run(42) != run(43))
    }

    @Test("a loader of [UInt8] is given the same inputs, and finds the same bugs, as one of Data")
    func bytesLoader() {
        // What each loader was handed, in order, hashed; and findings from the app's own check
        // (more than two habits is "invalid" here), so that there are findings to compare.
        final class Seen: @unchecked Sendable {
            private let lock = NSLock()
            private var hasher = Hasher()
            func add(_ bytes: [UInt8]) { lock.withLock { hasher.combine(bytes) } }
            var value: Int { lock.withLock { hasher.finalize() } }
        }
        let viaData = Seen(), viaBytes = Seen()
        // Each run with its own regression folder: the second must not replay the first's.
        func options(_ name: String) -> CorruptFuzzOptions {
            .init(runs: 800, seed: 7, isolation: .inProcess, regressions: scratchRegressions(name))
        }
        defer {
            for name in ["bytes-loader-data", "bytes-loader-bytes"] { try? FileManager.default.removeItem(at: scratchRegressions(name)) }
        }
        let data = verifyLoaderSurvivesCorruption("bytes-loader", format: habitFormat, options: options("bytes-loader-data")) { data in
            viaData.add([UInt8](data))
            return try HardenedHabitLoader.load([UInt8](data))
        } validate: { habits in
            habits.count > 2 ? "more than two habits" : nil
        }
        let bytes = verifyLoaderSurvivesCorruption("bytes-loader", format: habitFormat, options: options("bytes-loader-bytes")) {
            (bytes: [UInt8]) in
            viaBytes.add(bytes)
            return try HardenedHabitLoader.load(bytes)
        } validate: { habits in
            habits.count > 2 ? "more than two habits" : nil
        }
        #expect(data.executions == 800 && bytes.executions == 800)
        #expect(data.inputSequenceHash == bytes.inputSequenceHash)
        #expect(viaData.value == viaBytes.value)
        #expect(!data.findings.isEmpty)
        #expect(data.findings.map(\.signature).sorted() == bytes.findings.map(\.signature).sorted())
    }

    @Test("failing inputs are kept and replayed first on the next run")
    func regressionStore() throws {
        let folder = scratchRegressions("store")
        defer { try? FileManager.default.removeItem(at: folder) }
        let options = CorruptFuzzOptions(runs: 200, timeout: .milliseconds(300), regressions: folder)
        let first = verifyLoaderSurvivesCorruption("store-habits", format: habitFormat, options: options) { data in
            try NaiveHabitLoader.load([UInt8](data))
        }
        let stored = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(stored.count == first.findings.count && !stored.isEmpty)
        // One run later, with a budget of a single new input, the stored ones still show up.
        var again = options
        again.runs = stored.count + 2
        let second = verifyLoaderSurvivesCorruption("store-habits", format: habitFormat, options: again) { data in
            try NaiveHabitLoader.load([UInt8](data))
        }
        #expect(second.kinds.isSuperset(of: first.kinds.subtracting([.wrongReason])), "\(second.kinds) vs \(first.kinds)")
    }
}

@Suite("CorruptFuzzTesting: crash isolation")
struct CrashIsolationTests {
    @Test("a loader that traps becomes a crash finding and the test process lives on")
    func trappingLoader() {
        let report = verifyLoaderSurvivesCorruption(
            "trapping-loader", format: habitFormat,
            options: .init(runs: 50, regressions: scratchRegressions("trap"))
        ) { data -> Int in
            let bytes = [UInt8](data)
            if bytes.count > 20 { fatalError("deliberate trap on \(bytes.count) bytes") }
            return bytes.count
        }
        let crash = report.findings.first { $0.kind == .crash }
        #expect(crash?.signature.contains("deliberate trap on # bytes") == true, "\(report.findings)")
    }
}

/// The plain failing run a user would see: enabled only with
/// `CORRUPT_FUZZ_DEMO_FAILURES=1 swift test --filter NaiveLoaderFailureDemo`.
@Suite("NaiveLoaderFailureDemo", .enabled(if: ProcessInfo.processInfo.environment["CORRUPT_FUZZ_DEMO_FAILURES"] == "1"))
struct NaiveLoaderFailureDemo {
    @Test("naive habit loader (fails on purpose)")
    func naive() {
        assertLoaderSurvivesCorruption(
            "naive-habits-demo", format: habitFormat,
            options: .init(runs: 300, timeout: .milliseconds(400), regressions: scratchRegressions("demo"))
        ) { data in
            try NaiveHabitLoader.load([UInt8](data))
        } validate: { habits in
            validateHabits(habits)
        }
    }
}

/// Inputs per second of a check, in-process and with crash isolation: a benchmark, not a test.
/// Run with `bash Benchmarks/testing-speed/run.sh`; it asserts nothing about time.
@Suite("TestingSpeedBenchmark", .enabled(if: ProcessInfo.processInfo.environment["CORRUPT_FUZZ_BENCH"] == "1"))
struct TestingSpeedBenchmark {
    @Test("hardened habit loader, 20,000 inputs each way")
    func speed() {
        for isolation in [Isolation.inProcess, .process] {
            let report = verifyLoaderSurvivesCorruption(
                "bench-\(isolation)", format: habitFormat,
                options: .init(runs: 20_000, isolation: isolation, regressions: scratchRegressions("bench"))
            ) { data in try HardenedHabitLoader.load([UInt8](data)) }
            print(
                "BENCH \(isolation): \(report.executions) inputs in \(String(format: "%.2f", report.seconds)) s = \(Int(report.executionsPerSecond)) inputs/s")
            #expect(report.findings.isEmpty)
        }
    }
}
