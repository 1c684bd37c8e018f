import Foundation
import Testing

/// The package checkout, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The folder holding the built executables (corrupt-fuzz, the loaders, the fixture).
var productsDirectory: URL {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
    while url.path.contains(".xctest") { url.deleteLastPathComponent() }
    return url
}

func product(_ name: String) -> String { productsDirectory.appendingPathComponent(name).path }

/// What one run of the corrupt-fuzz binary did.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// The release build's products folder, when the run was given one
/// (`CORRUPT_FUZZ_RELEASE_PRODUCTS=$(swift build -c release --show-bin-path)`; .ci/run does).
let releaseProducts = ProcessInfo.processInfo.environment["CORRUPT_FUZZ_RELEASE_PRODUCTS"].map(URL.init(fileURLWithPath:))

/// Runs the corrupt-fuzz binary with `arguments`, like a user in a shell (stdin closed).
/// - Parameter executable: Another corrupt-fuzz binary (the release build's).
func corruptFuzz(_ arguments: [String], in directory: URL = packageRoot, executable: String = product("corrupt-fuzz")) throws -> CommandResult {
    try runProcess(executable, arguments, in: directory)
}

/// Runs a shell script at the repository root, with the built products first on PATH (so
/// `corrupt-fuzz` and the demo's programs are found as a user who built them finds them).
func shell(_ script: String, in directory: URL = packageRoot) throws -> CommandResult {
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] = productsDirectory.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    return try runProcess("/bin/bash", ["-c", script], in: directory, environment: environment)
}

/// Runs a program to its end with stdin closed, reading its stdout and stderr.
func runProcess(_ executable: String, _ arguments: [String], in directory: URL, environment: [String: String]? = nil) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = directory
    if let environment { process.environment = environment }
    process.standardInput = FileHandle.nullDevice
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes concurrently so neither fills up.
    let errData = LockedData()
    let reader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errData.done { usleep(1000) }
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData.data, as: UTF8.self))
}

final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = Data()
    private var finished = false
    func set(_ data: Data) {
        lock.withLock {
            stored = data; finished = true
        }
    }
    var done: Bool { lock.withLock { finished } }
    var data: Data { lock.withLock { stored } }
}

/// A fresh temporary folder, removed by the caller.
func temporaryFolder(_ name: String = "cli") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Validates a JUnit file against the strict schema; returns xmllint's complaint or nil.
func schemaErrors(junit path: String) throws -> String? {
    let schema = packageRoot.appendingPathComponent("Tests/CorruptFuzzReportingTests/Resources/junit-10.xsd").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["xmllint", "--noout", "--schema", schema, path]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return process.terminationStatus == 0 ? nil : output
}

/// Reads a run's summary.json.
func summary(in reports: URL) throws -> [String: Any] {
    let data = try Data(contentsOf: reports.appendingPathComponent("latest/summary.json"))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

func findings(of target: [String: Any]) -> [[String: Any]] { target["findings"] as? [[String: Any]] ?? [] }

func kinds(of target: [String: Any]) -> Set<String> { Set(findings(of: target).compactMap { $0["kind"] as? String }) }
