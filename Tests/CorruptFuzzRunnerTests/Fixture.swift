import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// Finds executables built with the package (the test fixture, the example loaders).
enum BuiltProducts {
    static var directory: URL {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // On macOS the test runner lives inside an .xctest bundle.
        while url.path.contains(".xctest") { url.deleteLastPathComponent() }
        return url
    }

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static var fixture: String { path("FixtureTarget") }
}

/// Runs the fixture target in one mode and returns what the executor saw.
func runFixture(
    _ arguments: String, bytes: [UInt8]? = [1], limits: ProcessExecutor.Limits = .init(timeoutMilliseconds: 2000)
) throws -> Execution {
    let command = try TargetCommand("\(BuiltProducts.fixture) \(arguments)")
    let executor = try ProcessExecutor(command: command, limits: limits)
    return try executor.execute(TestInput(bytes: bytes, seedName: "test"), slot: 0)
}

/// The pids of live processes whose command line contains `marker`.
func processes(containing marker: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> Int32? in
        guard let pid = Int32(entry), pid != getpid(),
            let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
            String(decoding: data, as: UTF8.self).contains(marker)
        else { return nil }
        // A zombie has already exited; it cannot hold anything.
        let status = (try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8)) ?? ""
        return status.contains("State:\tZ") ? nil : pid
    }
}
