import Foundation
import CorruptFuzzCore
import CorruptFuzzRunner

/// How to replay a suite's findings with the command-line tool, as typed values; reporting
/// formats the command itself.
///
/// ```
/// corrupt-fuzz replay --target '/bin/loader @@' --format notes --timeout 500ms /…/minimized.xml
/// ```
public struct ReplayDescription: Sendable, Hashable, Codable {
    /// The corrupt-fuzz binary to call.
    public var tool: String
    /// The target's command line, `@@` included.
    public var targetCommand: String
    /// Options that select the same labels, each a flag and its value:
    /// `["--validator", "./check @@"]`, `["--format", "notes"]`.
    public var selection: [[String]]
    /// The limits the campaign ran under; those that differ from the tool's defaults are given.
    public var limits: ProcessExecutor.Limits
    /// The reproducer files' extension, without the dot.
    public var fileExtension: String
    /// When set, a finding is replayed by running this executable on the file (a libFuzzer
    /// fuzzer, for imported artifacts) instead of `corrupt-fuzz replay`.
    public var directExecutable: String?

    public init(
        tool: String, targetCommand: String, selection: [[String]] = [], limits: ProcessExecutor.Limits = .init(), fileExtension: String = ""
    ) {
        self.tool = tool
        self.targetCommand = targetCommand
        self.selection = selection
        self.limits = limits
        self.fileExtension = fileExtension
    }

    /// The whole command that replays a file, the file's path last, for checks that replay
    /// with a command of their own (`corrupt-fuzz skew --older … --newer-corpus`); nil for
    /// `corrupt-fuzz replay` with the fields above.
    public var commandWords: [String]?

    /// A replay by a command of its own: `words`, then the file's path.
    public init(command words: [String], fileExtension: String) {
        self.init(tool: words.first ?? "corrupt-fuzz", targetCommand: "", fileExtension: fileExtension)
        commandWords = words
    }

    /// The shell command that replays a finding known by `arguments` (``Finding/replayArguments``)
    /// rather than by a file: the command's words, then the arguments.
    public func command(with arguments: [String]) -> String {
        ((commandWords ?? [tool]) + arguments).map(ShellWords.quote).joined(separator: " ")
    }

    /// The shell command that replays the file at `path`.
    public func command(replaying path: String) -> String {
        if let commandWords { return (commandWords + [path]).map(ShellWords.quote).joined(separator: " ") }
        if let directExecutable { return ShellWords.quote(directExecutable) + " " + ShellWords.quote(path) }
        return (replayWords() + [ShellWords.quote(path)]).joined(separator: " ")
    }

    /// The shell command that replays a missing file: `corrupt-fuzz replay … --missing-file`
    /// (replay refuses a path that does not exist); a command of its own gets `path`, which
    /// must not exist.
    public func command(replayingMissingFile path: String) -> String {
        if commandWords != nil || directExecutable != nil { return command(replaying: path) }
        return (replayWords() + ["--missing-file"]).joined(separator: " ")
    }

    /// `corrupt-fuzz replay` with the target, the selection and the limits, quoted.
    private func replayWords() -> [String] {
        var words = [ShellWords.quote(tool), "replay", "--target", ShellWords.quote(targetCommand)]
        for option in selection { words += option.enumerated().map { $0.offset == 0 ? $0.element : ShellWords.quote($0.element) } }
        let defaults = ProcessExecutor.Limits()
        if limits.timeoutMilliseconds != defaults.timeoutMilliseconds { words += ["--timeout", "\(limits.timeoutMilliseconds)ms"] }
        if limits.memoryLimit != defaults.memoryLimit { words += ["--memory-limit", Self.size(limits.memoryLimit)] }
        return words
    }

    /// The same description with every path below `base` written relative to it: the tool, the
    /// target's and validators' programs, schema files. A report's commands then work from the
    /// folder the campaign ran in (the repository root) on any machine with the same checkout,
    /// not only on the one, and in the folder, that made them.
    public func relative(to base: String) -> ReplayDescription {
        var copy = self
        let relate = PathRelativizer(base: base)
        copy.tool = relate.word(tool)
        copy.targetCommand = relate.commandLine(targetCommand)
        copy.selection = selection.map { option in option.enumerated().map { $0.offset == 0 ? $0.element : relate.anyWord($0.element) } }
        copy.directExecutable = directExecutable.map(relate.word)
        copy.commandWords = commandWords.map { words in words.map(relate.anyWord) }
        return copy
    }

    /// `512MB`, `2GB`, or bytes.
    static func size(_ bytes: Int64) -> String {
        if bytes > 0, bytes % (1 << 30) == 0 { return "\(bytes >> 30)GB" }
        if bytes > 0, bytes % (1 << 20) == 0 { return "\(bytes >> 20)MB" }
        return "\(bytes)"
    }
}

/// Rewrites absolute paths below a base folder as relative ones, inside single words and
/// inside command lines (`'/repo/.build/debug/loader --strict @@'`).
public struct PathRelativizer: Sendable {
    /// The base folder, standardized, without a trailing slash.
    public let base: String

    public init(base: String) {
        var base = URL(fileURLWithPath: base).standardizedFileURL.path
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        self.base = base
    }

    /// `word` relative to the base when it is an absolute path below it, else unchanged.
    public func word(_ word: String) -> String {
        guard word.hasPrefix("/"), base != "/" else { return word }
        if word == base { return "." }
        guard word.hasPrefix(base + "/") else { return word }
        let rest = String(word.dropFirst(base.count + 1))
        return rest.isEmpty ? "." : rest
    }

    /// A command line with each of its words made relative.
    public func commandLine(_ line: String) -> String {
        guard let words = try? ShellWords.split(line) else { return line }
        return words.map { $0 == "@@" ? $0 : ShellWords.quote(self.word($0)) }.joined(separator: " ")
    }

    /// A word that may be a path or a whole command line (an option's value such as
    /// `--validator './check @@'` or `--older '/repo/v1 @@'`).
    public func anyWord(_ value: String) -> String {
        value.contains(" ") ? commandLine(value) : word(value)
    }
}
