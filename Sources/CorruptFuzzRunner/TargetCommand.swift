import CorruptFuzzCore
import Foundation

/// A loader or validator command line, with `@@` standing for the input file's path.
///
/// Without `@@` the input is given on standard input. The executable is resolved once, through
/// `PATH` when it has no slash, and checked to be an executable file.
public struct TargetCommand: Sendable, Hashable, CustomStringConvertible {
    /// The command as the user wrote it.
    public let line: String
    /// The words of the command, `@@` included.
    public let words: [String]
    /// The absolute path of the executable.
    public let executablePath: String

    /// Whether the input is passed as a path (`@@`) rather than on standard input.
    public var takesPath: Bool { words.dropFirst().contains { $0.contains("@@") } }

    /// A short name for reports: the executable's file name and its first arguments.
    public var name: String { Self.shortName(words) }

    public var description: String { line }

    /// Parses and resolves a command line.
    /// - Throws: ``CorruptFuzzError`` when the line is empty, badly quoted, or names no
    ///   executable file.
    public init(_ line: String) throws(CorruptFuzzError) {
        let words = try ShellWords.split(line)
        guard let program = words.first, !program.isEmpty else {
            throw CorruptFuzzError(.invalidArgument, "the command is empty")
        }
        self.line = line
        self.words = words
        self.executablePath = try Self.resolve(program)
    }

    /// The argument vector for an input at `path`.
    public func arguments(forInputAt path: String) -> [String] {
        [executablePath] + words.dropFirst().map { $0.replacing("@@", with: path) }
    }

    /// Whether `path` is a regular file with an execute bit (access(2) says yes to root for
    /// any file, so the mode is checked too).
    private static func isExecutable(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o111 != 0 else { return false }
        return access(path, X_OK) == 0
    }

    private static func resolve(_ program: String) throws(CorruptFuzzError) -> String {
        let fm = FileManager.default
        if program.contains("/") {
            let path = URL(fileURLWithPath: program).standardizedFileURL.path
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CorruptFuzzError(.unusableTarget, "target not found: \(program)")
            }
            guard !isDirectory.boolValue, isExecutable(path) else {
                throw CorruptFuzzError(.unusableTarget, "target is not an executable file: \(program)")
            }
            return path
        }
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(program)"
            var isDirectory: ObjCBool = false
            if fm.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue, isExecutable(candidate) {
                return candidate
            }
        }
        throw CorruptFuzzError(.unusableTarget, "target not found: \(program) is not an executable in PATH")
    }
}
