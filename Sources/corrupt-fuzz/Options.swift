import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzRunner
import CorruptFuzzSchema
import Foundation

#if XML
    import CorruptFuzzXML
#endif

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

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A bundled format whose reference validator labels inputs (\(BuiltinFormat.names.joined(separator: ", "))).",
            valueName: "name"))
    var format: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A binary layout in Kaitai Struct YAML (.ksy): its validator labels inputs (unless --validator is given), its structure guides mutations, and it generates seeds when there is no corpus. With --format sqlite or sqlite-wal, a SQL description (.sql: DDL and -- corrupt-fuzz: lines).",
            valueName: "file"))
    var schema: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "An XML Schema (.xsd): libxml2 validates inputs against it, and documents are generated from it (with --format xml; --schema FILE.xsd does the same).",
            valueName: "file.xsd"))
    var xsd: String?

    /// The XML Schema, from --xsd or from a --schema ending in .xsd.
    var xsdPath: String? { xsd ?? schema.flatMap { $0.lowercased().hasSuffix(".xsd") ? $0 : nil } }
    /// The Kaitai schema: --schema unless it is an XML Schema or a SQL description.
    var ksyPath: String? { schema.flatMap { $0.lowercased().hasSuffix(".xsd") || SQLiteBuiltins.isDescription($0) ? nil : $0 } }
    /// A SQL description (--schema FILE.sql with --format sqlite or sqlite-wal).
    var sqlPath: String? { SQLiteBuiltins.isDescription(schema) ? schema : nil }

    @Option(name: .long, help: ArgumentHelp("Deadline of one execution, e.g. 1s, 500ms.", valueName: "duration"))
    var timeout: Seconds = .defaultTimeout

    @Option(name: .long, help: ArgumentHelp("Address-space limit of the target, e.g. 1GB, 512MB; 0 for none.", valueName: "size"))
    var memoryLimit: ByteSize = .defaultMemoryLimit

    var limits: ProcessExecutor.Limits {
        ProcessExecutor.Limits(timeoutMilliseconds: timeout.milliseconds, memoryLimit: memoryLimit.bytes)
    }

    func builtinFormat() throws -> BuiltinFormat? {
        guard let format else { return nil }
        guard let found = BuiltinFormat.named(format) else {
            throw ValidationError(BuiltinFormat.unknown(format))
        }
        return found
    }

    func validate() throws {
        if ksyPath != nil, format != nil {
            throw ValidationError("give either --schema FILE.ksy or --format, not both")
        }
        if xsdPath != nil, format != "xml" {
            throw ValidationError("an XML Schema (--xsd or --schema FILE.xsd) needs --format xml")
        }
        if sqlPath != nil, !SQLiteBuiltins.names.contains(format ?? "") {
            throw ValidationError("a SQL description (--schema FILE.sql) needs --format sqlite or sqlite-wal")
        }
        _ = try builtinFormat()
    }

    /// The format these options select (--format, --schema FILE.ksy or FILE.xsd, --xsd),
    /// read and compiled once.
    func resolvedFormat() throws -> ResolvedFormat? {
        if let xsd = xsdPath { return try .xsd(xsd) }
        if let sql = sqlPath { return try SQLiteBuiltins.format(path: sql, formatName: format) }
        if let schema = ksyPath { return try .ksy(schema) }
        if let format = try builtinFormat() { return .builtin(format) }
        return nil
    }
}

/// A format as the options selected it, with the arguments that select it again in a replay
/// command.
struct ResolvedFormat {
    var format: any FuzzFormat
    /// The options that select this format again, for replay commands.
    var replayArguments: [[String]]
    var warnings: [String] = []
    /// The schema file the format was read from (as given), where checks come from.
    var source: String?

    static func builtin(_ builtin: BuiltinFormat) -> ResolvedFormat {
        ResolvedFormat(format: builtin.format, replayArguments: [["--format", builtin.name]])
    }

    /// A Kaitai Struct schema: its validator, structure-aware mutations and generator.
    static func ksy(_ path: String) throws -> ResolvedFormat {
        let format: SchemaFormat
        do {
            format = try SchemaFormat(ksyPath: path)
        } catch {
            throw CorruptFuzzError(.invalidArgument, "broken schema: \(error.message)")
        }
        return ResolvedFormat(format: format, replayArguments: [["--schema", URL(fileURLWithPath: path).standardizedFileURL.path]], source: path)
    }

    /// An XML Schema: libxml2 validates against it, and documents are generated from it when
    /// the generator knows every construct it uses (else a warning says why not).
    static func xsd(_ path: String) throws -> ResolvedFormat {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CorruptFuzzError(.invalidArgument, "cannot read the XML Schema \(path)")
        }
        #if XML
            let replay = [["--format", "xml"], ["--xsd", URL(fileURLWithPath: path).standardizedFileURL.path]]
            do {
                let format = try XMLFormat(xsd: [UInt8](data), name: path)
                return ResolvedFormat(format: format, replayArguments: replay, source: path)
            } catch let generatorProblem {
                do {
                    let schema = try XMLSchemaValidator(xsd: [UInt8](data), name: path)
                    return ResolvedFormat(
                        format: XMLFormat(schema: schema), replayArguments: replay,
                        warnings: ["no documents are generated from \(path): \(generatorProblem)"], source: path)
                } catch {
                    throw CorruptFuzzError(.invalidArgument, "broken XML Schema \(path): \(error)")
                }
            }
        #else
            _ = data
            throw CorruptFuzzError(.invalidArgument, BuiltinFormat.unknown("xml"))
        #endif
    }
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

/// Maps tool errors to the documented exit status 2 with a clear message.
func configurationError(_ error: CorruptFuzzError) -> ExitCode {
    FileHandle.standardError.write(Data("corrupt-fuzz: error: \(error)\n".utf8))
    return ExitCode(2)
}

extension Shard: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}
