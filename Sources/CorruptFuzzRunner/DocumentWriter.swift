import CorruptFuzzCore
import Foundation

/// The app's own save path: loads a document and saves it again, as the app does when the user
/// opens a file and saves it (a migration to a newer version is the same call in a newer app).
///
/// Implementations must be safe to call from several threads at once, or say `slots == 1`.
public protocol DocumentWriter: Sendable {
    /// A short name for reports: the command line, or the test's name for the writer.
    var name: String { get }
    /// Loads `bytes` and saves them: what the writer did (a crash and a hang are what they are
    /// for a loader; `accepted` means it saved) and the file it saved, nil when it saved none.
    /// - Throws: ``CorruptFuzzError`` when the writer cannot be run at all.
    func resave(_ bytes: [UInt8]) throws(CorruptFuzzError) -> (execution: Execution, saved: [UInt8]?)
}

/// A writer that is a command: `@@` is the document to load, `@out` the path to save to.
///
/// ```
/// notes-app resave @@ @out
/// ```
///
/// Exit 0 means it saved; any other exit means it refused (with `reason: WORD` as a loader
/// says it); a signal, a timeout or the memory limit are a crash, a hang and oom. A command
/// without `@out` prints the saved document on standard output instead (at most the output
/// cap, 1 MiB by default).
public final class CommandWriter: DocumentWriter, @unchecked Sendable {
    public let name: String
    /// The command as the user wrote it, `@@` and `@out` included.
    public let line: String
    private let executor: ProcessExecutor
    private let outputPath: String?
    private let lock = NSLock()

    /// Parses the command line and checks the executable.
    /// - Throws: ``CorruptFuzzError`` when the line is empty, badly quoted, names no executable
    ///   file, or has no `@@`.
    public init(_ line: String, limits: ProcessExecutor.Limits = .init(), fileExtension: String = "") throws(CorruptFuzzError) {
        let words = try ShellWords.split(line)
        guard words.dropFirst().contains(where: { $0.contains("@@") }) else {
            throw CorruptFuzzError(.invalidArgument, "the writer command needs @@ for the document it loads: \(line)")
        }
        let directory = try ScratchFolder.make(prefix: "corrupt-fuzz-writer")
        let suffix = fileExtension.isEmpty ? "" : ".\(fileExtension)"
        let output = directory.appendingPathComponent("saved\(suffix)").path
        let writesFile = words.dropFirst().contains { $0.contains("@out") }
        // The scratch path has no characters a shell would quote.
        let resolved = try TargetCommand(line.replacing("@out", with: output))
        self.line = line
        name = TargetCommand.shortName(words)
        outputPath = writesFile ? output : nil
        executor = try ProcessExecutor(command: resolved, limits: limits, slots: 1, fileExtension: fileExtension)
    }

    deinit {
        if let outputPath { try? FileManager.default.removeItem(atPath: (outputPath as NSString).deletingLastPathComponent) }
    }

    public func resave(_ bytes: [UInt8]) throws(CorruptFuzzError) -> (execution: Execution, saved: [UInt8]?) {
        lock.lock()
        defer { lock.unlock() }
        if let outputPath { unlink(outputPath) }
        let execution = try executor.executeConfirmingHang(TestInput(bytes: bytes, seedName: "document"), slot: 0)
        guard case .accepted = execution.outcome else { return (execution, nil) }
        guard let outputPath else { return (execution, execution.stdout) }
        return (execution, FileManager.default.contents(atPath: outputPath).map { [UInt8]($0) })
    }
}

/// A writer made of a closure, for in-process checks: `body` loads the bytes and returns what
/// the app saves, or throws as the app's save would.
public struct ClosureWriter: DocumentWriter {
    public let name: String
    private let body: @Sendable ([UInt8]) throws -> [UInt8]

    public init(name: String, _ body: @escaping @Sendable ([UInt8]) throws -> [UInt8]) {
        self.name = name
        self.body = body
    }

    public func resave(_ bytes: [UInt8]) -> (execution: Execution, saved: [UInt8]?) {
        do {
            let saved = try body(bytes)
            return (Execution(outcome: .accepted(digest: "")), saved)
        } catch {
            return (Execution(outcome: .rejected(reason: nil, exitCode: 1, message: String(describing: error))), nil)
        }
    }
}

extension TargetCommand {
    /// A short name for reports from a command's words: the executable's file name and its
    /// first arguments that are not placeholders.
    static func shortName(_ words: [String]) -> String {
        let base = (words.first.map { ($0 as NSString).lastPathComponent }) ?? "target"
        let rest = words.dropFirst().filter { !$0.contains("@@") && !$0.contains("@out") }.prefix(3)
        let name = ([base] + rest).joined(separator: " ")
        return name.count <= 40 ? name : String(name.prefix(39)) + "…"
    }
}
