import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzRunner
import Foundation

/// How a format is selected, the same in every command: `--format` names a bundled format or a
/// description file (.ksy, .xsd, .sql); `--schema` and `--xsd` give the description beside it
/// (`--format sqlite --schema store.sql`). The bundled registry checks and reads them.
struct FormatOptions: ParsableArguments {
    static var registry: FormatRegistry { .bundled }

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A bundled format (\(FormatOptions.registry.names.joined(separator: ", "))) or a description file (.ksy, .xsd, .sql): its reference validator labels inputs, its structure guides mutations and generates seeds.",
            valueName: "name|file"))
    var format: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A binary layout in Kaitai Struct YAML (.ksy), an XML Schema (.xsd, with --format xml) or a SQL description (.sql: DDL and -- corrupt-fuzz: lines, with --format sqlite or sqlite-wal).",
            valueName: "file"))
    var schema: String?

    @Option(name: .long, help: ArgumentHelp("An XML Schema (.xsd): the same as --schema FILE.xsd.", valueName: "file.xsd"))
    var xsd: String?

    /// The description file, from --xsd or --schema.
    var description: String? { xsd ?? schema }

    var isEmpty: Bool { format == nil && description == nil }

    func validate() throws {
        if schema != nil, xsd != nil { throw ValidationError("give either --schema or --xsd, not both") }
        do {
            _ = try Self.registry.select(format: format, description: description)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The format these options select, read and compiled once.
    func resolved() throws(CorruptFuzzError) -> ResolvedFormat? { try Self.registry.resolve(format: format, description: description) }

    /// Whether the selected format generates files (a description, or a bundled format with a generator).
    var generates: Bool {
        switch try? Self.registry.select(format: format, description: description) {
        case .entry(let entry)?: entry.format.mutator != nil
        case .description?: true
        case nil: false
        }
    }
}

/// How long one execution may take and how much memory it may use: one option of each, with
/// one default, in every command that runs something.
struct LimitOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Deadline of one execution (a load, a save, a program run), e.g. 1s, 500ms.", valueName: "duration"))
    var timeout: Seconds = .defaultTimeout

    @Option(name: .long, help: ArgumentHelp("Address-space limit of the target, e.g. 1GB, 512MB; 0 for none.", valueName: "size"))
    var memoryLimit: ByteSize = .defaultMemoryLimit

    var limits: ProcessExecutor.Limits {
        ProcessExecutor.Limits(timeoutMilliseconds: timeout.milliseconds, memoryLimit: memoryLimit.bytes)
    }

    /// The options that set these limits again in a replay command (none for the defaults).
    var replayWords: [String] {
        var words: [String] = []
        if timeout != .defaultTimeout { words += ["--timeout", timeout.description] }
        if memoryLimit != .defaultMemoryLimit { words += ["--memory-limit", memoryLimit.description] }
        return words
    }
}

/// Options that describe how to run a target, shared by `run` and `replay`.
struct TargetOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The loader to test, as a command line; @@ is replaced by the input file's path, without @@ the input goes to stdin.",
            valueName: "command"))
    var target: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The app's own validator, as a command (same protocol as the target): exit 0 means valid, otherwise invalid with a 'reason: WORD' line. With --format, --schema or --xsd, the format still mutates and generates, and its own verdict is reported beside each finding.",
            valueName: "command"))
    var validator: String?

    @OptionGroup var formats: FormatOptions

    @OptionGroup var limitOptions: LimitOptions

    var limits: ProcessExecutor.Limits { limitOptions.limits }

    func resolvedFormat() throws(CorruptFuzzError) -> ResolvedFormat? { try formats.resolved() }
}

/// A duration option: `60`, `60s`, `500ms`, `5m`, `1h`; parsed and checked once, where the
/// argument is read.
struct Seconds: ExpressibleByArgument, Hashable, CustomStringConvertible {
    var value: Double
    /// The text the user gave (or the default's), for replay commands.
    var description: String

    static let defaultTimeout = Seconds(argument: "1s")!

    init?(argument: String) {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var parsed: Double?
        for (suffix, factor) in units where argument.hasSuffix(suffix) {
            if let number = Double(argument.dropLast(suffix.count)) { parsed = number * factor; break }
        }
        guard let value = parsed ?? Double(argument), value > 0, value.isFinite else { return nil }
        self.value = value
        description = argument
    }

    var milliseconds: Int { Int(min(value * 1000, Double(Int32.max))) }
}

/// A size option: `1GB`, `512MB`, `64KB`, `1048576` (powers of 1024); `0` means none.
struct ByteSize: ExpressibleByArgument, Hashable, CustomStringConvertible {
    var bytes: Int64
    var description: String

    static let defaultMemoryLimit = ByteSize(argument: "1GB")!

    init?(argument: String) {
        let upper = argument.uppercased()
        let units: [(String, Int64)] = [("GB", 1 << 30), ("G", 1 << 30), ("MB", 1 << 20), ("M", 1 << 20), ("KB", 1 << 10), ("K", 1 << 10), ("B", 1)]
        var parsed: Int64?
        for (suffix, factor) in units where upper.hasSuffix(suffix) {
            if let number = Double(upper.dropLast(suffix.count)), number >= 0, number * Double(factor) < 9e18 {
                parsed = Int64(number * Double(factor))
            }
            break
        }
        guard let bytes = parsed ?? Int64(upper), bytes >= 0 else { return nil }
        self.bytes = bytes
        description = argument
    }
}

/// The value of `body`; a tool error ends the command with its message and exit status 2.
func orExit<T>(_ body: () throws(CorruptFuzzError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw configurationError(error)
    }
}

/// Maps tool errors to the documented exit status 2 with a clear message.
func configurationError(_ error: CorruptFuzzError) -> ExitCode {
    FileHandle.standardError.write(Data("corrupt-fuzz: error: \(error)\n".utf8))
    return ExitCode(2)
}

extension Shard: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

/// Checks that `path` names a file this process can read, as a usage error (exit status 2)
/// naming the file and the problem: a missing file, a folder, or one that cannot be opened.
/// A typo in a CI step's file argument then fails the step instead of passing it.
/// - Parameter role: What the file is for, e.g. `reproducer`, in the message.
func checkReadableFile(_ path: String, role: String) throws {
    var info = stat()
    guard stat(path, &info) == 0 else {
        let why = errno == ENOENT ? "does not exist" : "cannot be read (\(String(cString: strerror(errno))))"
        throw ValidationError("\(role) \(path) \(why)")
    }
    if info.st_mode & S_IFMT == S_IFDIR { throw ValidationError("\(role) \(path) is a folder, not a file") }
    let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { throw ValidationError("\(role) \(path) cannot be read (\(String(cString: strerror(errno))))") }
    close(descriptor)
}
