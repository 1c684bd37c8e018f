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
