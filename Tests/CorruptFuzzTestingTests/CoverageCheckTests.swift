import CorruptFuzzCore
import CorruptFuzzTesting
import Foundation
import MazeLoader
import Testing

/// The maze file format: at least 32 bytes.
struct MazeFormat: FuzzFormat {
    let fileExtension = "maze"
    var validator: any Validator {
        ClosureValidator(name: "maze") { bytes in
            guard let bytes else { return .invalid(.notFound) }
            if bytes.isEmpty { return .invalid(Violation(.empty, "the file is empty")) }
            return bytes.count < 32 ? .invalid(Violation(.corrupt, "shorter than a header")) : .valid
        }
    }
}

/// A coverage-guided in-process check, as the README documents it: the maze loader's target is
/// built with `-sanitize=fuzzer` (Package.swift), this test binary links corrupt-fuzz's coverage
/// runtime through CorruptFuzzTesting, and the app's own check of the loaded value
/// (`validate`) says the maze's exit is wrong.
@Suite("CorruptFuzzTesting: coverage guidance in-process")
struct CoverageCheckTests {
    let seed = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) })

    func check(coverage: Bool, runs: Int) -> CorruptFuzzReport {
        verifyLoaderSurvivesCorruption(
            "maze-\(coverage)", format: MazeFormat(), seeds: [seed],
            options: .init(runs: runs, seed: 5, isolation: .inProcess, regressions: scratchRegressions("maze-\(coverage)"), coverage: coverage)
        ) { data in
            try MazeLoader.parse(data)
        } validate: { maze in
            maze.reachedExit ? "reached the maze's exit" : nil
        }
    }

    /// (Linux: the maze's target is instrumented there only, Package.swift.)
    @Test(
        "a seeded check makes the same inputs whether or not another check runs instrumented code beside it (the edge map is the process's)",
        .enabled(if: isLinux))
    func noCrosstalk() {
        // Each run with its own regression folder: the second must not replay the first's.
        func counted(_ name: String) -> UInt64 {
            verifyLoaderSurvivesCorruption(
                name, format: MazeFormat(), seeds: [seed],
                options: .init(runs: 3_000, seed: 7, isolation: .inProcess, regressions: scratchRegressions(name))
            ) { data in data.count }.inputSequenceHash
        }
        defer { for name in ["crosstalk-alone", "crosstalk-beside"] { try? FileManager.default.removeItem(at: scratchRegressions(name)) } }
        let alone = counted("crosstalk-alone")
        // The maze loader, coverage off, runs on another thread all the while.
        let group = DispatchGroup()
        let started = DispatchSemaphore(value: 0)
        DispatchQueue.global().async(group: group) {
            started.signal()
            _ = check(coverage: false, runs: 400_000)
        }
        started.wait()
        Thread.sleep(forTimeInterval: 0.05)
        let beside = counted("crosstalk-beside")
        group.wait()
        #expect(alone == beside)
    }

    @Test("the instrumented maze loader's exit is found with coverage, and not without it in the same runs", .enabled(if: isLinux))
    func maze() {
        let with = check(coverage: true, runs: 60_000)
        #expect(with.findings.contains { $0.signature.contains("reached the maze's exit") }, "\(with.findings.map(\.signature))")
        #expect((with.edges ?? 0) >= 5)
        let without = check(coverage: false, runs: 60_000)
        #expect(!without.findings.contains { $0.signature.contains("maze's exit") })
        #expect(without.edges == nil)
    }
}
