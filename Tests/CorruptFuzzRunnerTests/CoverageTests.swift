import CCorruptFuzzSpawn
import CCorruptFuzzWorker
import CorruptFuzzCore
import Foundation
import Testing

@testable import CorruptFuzzRunner

/// The repository's root, for the maze's C source and the coverage runtime.
private let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The C maze (Examples/maze-c) built as the README says: compiled with SanitizerCoverage by a
/// clang, linked with corrupt-fuzz's worker loop and coverage runtime. Nil without a clang.
private func buildCMaze(coverage: String) throws -> String? {
    let compilers = PreloadLibrary.compilers(environment: ProcessInfo.processInfo.environment)
    guard let clang = compilers.first(where: { ($0 as NSString).lastPathComponent.hasPrefix("clang") }) else { return nil }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-maze-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let runtime = repositoryRoot.appendingPathComponent("Sources/CCorruptFuzzWorker")
    let include = "-I" + runtime.appendingPathComponent("include").path
    let object = folder.appendingPathComponent("maze.o").path, binary = folder.appendingPathComponent("maze").path
    func run(_ arguments: [String]) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: clang)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
    // Compiled with the coverage flag, linked without it (clang would add a runtime of its own).
    guard
        try run(["-O1", "-c", "-fsanitize-coverage=\(coverage)", include, repositoryRoot.appendingPathComponent("Examples/maze-c/maze.c").path, "-o", object]),
        try run([
            "-O1", include, object, runtime.appendingPathComponent("corrupt_fuzz_worker.c").path,
            runtime.appendingPathComponent("corrupt_fuzz_coverage.c").path, "-o", binary,
        ])
    else { return nil }
    return binary
}

/// A 32-byte seed of random bytes: none of the maze's four words.
private let mazeSeed = Seed(name: "seed.bin", bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) })

private func mazeCampaign(_ executor: any Executor, runs: Int, coverage: Bool) -> Campaign {
    var configuration = FuzzConfiguration()
    configuration.seed = 3
    configuration.maxRuns = runs
    configuration.coverage = coverage
    configuration.minimize = false
    return Campaign(
        executor: executor, targetName: "maze", targetCommand: "maze @@", takesPath: true, validator: nil, seeds: [mazeSeed],
        configuration: configuration)
}

@Suite("Coverage guidance")
struct CoverageTests {
    @Test("a map read twice: only buckets new to the slot; a higher hit count is new; an empty map is no sample")
    func readerBuckets() {
        var reader = CoverageReader()
        var map = [UInt8](repeating: 0, count: CoverageLayout.mapSize)
        #expect(reader.sample(map: map, log: nil) == nil)
        map[10] = 1
        map[20] = 5
        let first = reader.sample(map: map, log: nil)
        #expect(first?.newBits == [10 << 8 | 1, 20 << 8 | 8])
        #expect(reader.sample(map: map, log: nil)?.newBits == [])
        map[10] = 3
        #expect(reader.sample(map: map, log: nil)?.newBits == [10 << 8 | 4])
        var table = CoverageTable()
        let added = [table.add(first!), table.add(first!), table.add(CoverageSample(newBits: [10 << 8 | 4]))]
        #expect(added == [.edge, .none, .hitCount])
        #expect(table.edges == 2)
    }

    @Test("a comparison's wanted value goes where the input holds the observed one, either byte order")
    func inputToState() {
        var rng = FuzzRNG(seed: 1)
        var bytes: [UInt8] = [9, 9, 0x44, 0x33, 0x22, 0x11, 9, 9]
        let step = InputSchedule.apply(
            Comparison(observed: 0x1122_3344, wanted: 0xAABB_CCDD, size: 4), to: &bytes, maxLength: 100, using: &rng)
        #expect(bytes == [9, 9, 0xDD, 0xCC, 0xBB, 0xAA, 9, 9])
        #expect(step == .comparison(width: 4, bigEndian: false, at: 2))
        var big: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        _ = InputSchedule.apply(Comparison(observed: 0x1122_3344, wanted: 0x0102_0304, size: 4), to: &big, maxLength: 100, using: &rng)
        #expect(big == [1, 2, 3, 4])
        // Nowhere in the input: written somewhere, the input grown to hold it.
        var short: [UInt8] = [7]
        _ = InputSchedule.apply(Comparison(observed: 5, wanted: 0x0606, size: 2), to: &short, maxLength: 100, using: &rng)
        #expect(short.count == 2 && short.contains(6))
    }

    @Test("the C maze: found with coverage one process per input, not found without it in as many runs", .enabled(if: isLinux))
    func cMazeOneProcessPerInput() throws {
        let binary = try #require(try buildCMaze(coverage: "trace-pc-guard,trace-cmp"), "no clang")
        defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
        let command = try TargetCommand("\(binary) @@")
        let with = try mazeCampaign(
            try ProcessExecutor(command: command, limits: .init(timeoutMilliseconds: 5000), slots: 2, coverage: true), runs: 6000, coverage: true
        ).run()
        #expect(with.findings.map(\.finding.kind) == [.crash], "\(with.findings.map(\.finding.signature)) in \(with.executions) runs")
        let coverage = try #require(with.coverage)
        #expect(coverage.edges >= 5 && coverage.inputsKept >= 4)
        let crash = try #require(with.findings.first)
        let without = try mazeCampaign(
            try ProcessExecutor(command: command, limits: .init(timeoutMilliseconds: 5000), slots: 2, coverage: false),
            runs: crash.firstExecution + 500, coverage: false
        ).run()
        #expect(without.findings.isEmpty && without.coverage == nil)
    }

    @Test("the C maze built with 8-bit counters, as a worker: the counters reach the map after each input", .enabled(if: isLinux))
    func cMazeWorkerCounters() throws {
        let binary = try #require(try buildCMaze(coverage: "inline-8bit-counters,pc-table,trace-cmp"), "no clang")
        defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
        let executor = try WorkerExecutor(
            path: binary, arguments: [], environment: [:], limits: .init(timeoutMilliseconds: 5000), slots: 1, coverage: true)
        let result = try mazeCampaign(executor, runs: 40_000, coverage: true).run()
        #expect(result.findings.map(\.finding.kind) == [.crash])
        #expect((result.coverage?.edges ?? 0) >= 5)
    }

    @Test("the Swift maze worker (swiftc -sanitize=fuzzer): found with coverage; an uninstrumented worker shows none", .enabled(if: isLinux))
    func swiftMazeWorker() throws {
        let executor = try WorkerExecutor(
            path: BuiltProducts.path("maze-worker"), arguments: [], environment: ["SWIFT_BACKTRACE": "enable=no"],
            limits: .init(timeoutMilliseconds: 5000), slots: 1, coverage: true)
        let result = try mazeCampaign(executor, runs: 40_000, coverage: true).run()
        #expect(result.findings.map(\.finding.kind) == [.crash], "\(result.executions) runs, \(String(describing: result.coverage))")
        #expect((result.coverage?.edges ?? 0) >= 5)

        let plain = try WorkerExecutor(
            path: BuiltProducts.path("WorkerFixture"), arguments: [], environment: [:], limits: .init(timeoutMilliseconds: 5000), slots: 1,
            coverage: true)
        let none = try mazeCampaign(plain, runs: 300, coverage: true).run()
        #expect(none.coverage == nil)
    }

    @Test("cmin keeps the smallest file of each edge, where behaviour alone keeps one, and the kept files reach every edge", .enabled(if: isLinux))
    func corpusMinimizedByEdges() throws {
        let binary = try #require(try buildCMaze(coverage: "trace-pc-guard,trace-cmp"), "no clang")
        let work = (binary as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: work) }
        // Two nights' corpora: mazes that pass 0 to 3 of the comparisons (all accepted: one
        // behaviour), each in a small and a large copy.
        let words: [UInt32] = [0x455A_414D, 0x0BAD_F00D, 0x1357_9BDF]
        func maze(passing count: Int, length: Int) -> Data {
            var bytes = [UInt8](repeating: 0x41, count: length)
            for (index, offset) in [0, 8, 16].enumerated() where index < count {
                for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: words[index] >> (8 * UInt32(i))) }
            }
            return Data(bytes)
        }
        let nights = ["night-1", "night-2"].map { (work as NSString).appendingPathComponent($0) }
        for (night, folder) in nights.enumerated() {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for count in 0...3 {
                try maze(passing: count, length: 32 + 8 * night).write(to: URL(fileURLWithPath: folder).appendingPathComponent("pass\(count).bin"))
            }
        }
        func minimize(_ folders: [String], into name: String, coverage: Bool) throws -> CorpusMerge.Minimized {
            let files = try CorpusMerge.files(in: folders).map(\.path)
            let replay = try Replay(
                target: try TargetCommand("\(binary) @@"), format: nil, validator: nil, limits: .init(timeoutMilliseconds: 5000), files: files,
                coverage: coverage)
            return try CorpusMerge.minimize(folders, into: (work as NSString).appendingPathComponent(name), replay: replay)
        }
        let byBehaviour = try minimize(nights, into: "behaviour", coverage: false)
        #expect(byBehaviour.kept == 1 && byBehaviour.edges == nil)
        let byEdges = try minimize(nights, into: "edges", coverage: true)
        #expect(byEdges.inputs == 8 && byEdges.kept == 4, "\(byEdges)")
        let edges = try #require(byEdges.edges)
        // The smallest of each: night 1's.
        let kept = try FileManager.default.contentsOfDirectory(atPath: (work as NSString).appendingPathComponent("edges")).sorted()
        #expect(kept == ["pass0.bin", "pass1.bin", "pass2.bin", "pass3.bin"])
        // The kept files alone reach every edge the eight did.
        let again = try minimize([(work as NSString).appendingPathComponent("edges")], into: "again", coverage: true)
        #expect(again.edges == edges && again.kept == 4)
    }

    @Test("a segment smaller than the runtime's layout (another corrupt-fuzz's) gets edges only, never a write past its end", .enabled(if: isLinux))
    func smallerSegment() throws {
        let binary = try #require(try buildCMaze(coverage: "trace-pc-guard,trace-cmp"), "no clang")
        let work = (binary as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: work) }
        var id: Int32 = 0
        let segment = try #require(cf_shm_create(CoverageLayout.mapSize, &id))
        defer { cf_shm_release(segment, id) }
        let input = (work as NSString).appendingPathComponent("input.bin")
        try Data(mazeSeed.bytes).write(to: URL(fileURLWithPath: input))
        let execution = try ProcessExecutor.runOnce(
            try TargetCommand("\(binary) @@"), replacing: "@@", with: input, environment: [CoverageLayout.variable: String(id)],
            limits: .init(timeoutMilliseconds: 5000))
        #expect(execution.outcome.word == "accepted", "\(execution.outcome)")
        let map = segment.assumingMemoryBound(to: UInt8.self)
        #expect((0..<CoverageLayout.mapSize).contains { map[$0] != 0 })
    }

    @Test("a program built with AFL++'s afl-clang-fast writes the map corrupt-fuzz hands it", .enabled(if: isLinux && aflClangFast != nil))
    func aflInstrumented() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-afl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let binary = folder.appendingPathComponent("maze-afl").path
        let runtime = repositoryRoot.appendingPathComponent("Sources/CCorruptFuzzWorker")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: aflClangFast!)
        process.arguments = [
            "-O1", "-I" + runtime.appendingPathComponent("include").path, repositoryRoot.appendingPathComponent("Examples/maze-c/maze.c").path,
            runtime.appendingPathComponent("corrupt_fuzz_worker.c").path, "-o", binary,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "afl-clang-fast failed")
        let executor = try ProcessExecutor(command: try TargetCommand("\(binary) @@"), limits: .init(timeoutMilliseconds: 5000), coverage: true)
        let result = try mazeCampaign(executor, runs: 200, coverage: true).run()
        #expect((result.coverage?.edges ?? 0) >= 3)
    }
}

/// AFL++'s compiler, when installed (Debian's afl++).
let aflClangFast = PreloadLibrary.findInPath("afl-clang-fast", environment: ProcessInfo.processInfo.environment)
