import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzRunner
import CorruptFuzzSchema
import CorruptFuzzXML
import Foundation

/// Options that describe how to run a target, shared by `run` and `replay`.
struct TargetOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The loader to test, as a command line; @@ is replaced by the input file's path, without @@ the input goes to stdin.",
        valueName: "command"))
    var target: String?

    @Option(name: .long, help: ArgumentHelp(
        "The app's own validator, as a command (same protocol as the target): exit 0 means valid, otherwise invalid with a 'reason: WORD' line. With --format, --schema or --xsd, the format still mutates and generates, and its own verdict is reported beside each finding.",
        valueName: "command"))
    var validator: String?

    @Option(name: .long, help: ArgumentHelp(
        "A bundled format whose reference validator labels inputs (\(BuiltinFormat.names.joined(separator: ", "))).",
        valueName: "name"))
    var format: String?

    @Option(name: .long, help: ArgumentHelp(
        "A binary layout in Kaitai Struct YAML (.ksy): its validator labels inputs (unless --validator is given), its structure guides mutations, and it generates seeds when there is no corpus.",
        valueName: "file.ksy"))
    var schema: String?

    @Option(name: .long, help: ArgumentHelp(
        "An XML Schema (.xsd): libxml2 validates inputs against it, and documents are generated from it (with --format xml; --schema FILE.xsd does the same).",
        valueName: "file.xsd"))
    var xsd: String?

    /// The XML Schema, from --xsd or from a --schema ending in .xsd.
    var xsdPath: String? { xsd ?? schema.flatMap { $0.lowercased().hasSuffix(".xsd") ? $0 : nil } }
    /// The Kaitai schema: --schema unless it is an XML Schema.
    var ksyPath: String? { schema.flatMap { $0.lowercased().hasSuffix(".xsd") ? nil : $0 } }

    @Option(name: .long, help: ArgumentHelp("Deadline of one execution, e.g. 1s, 500ms.", valueName: "duration"))
    var timeout: String = "1s"

    @Option(name: .long, help: ArgumentHelp("Address-space limit of the target, e.g. 1GB, 512MB; 0 for none.", valueName: "size"))
    var memoryLimit: String = "1GB"

    func limits() throws -> ProcessExecutor.Limits {
        ProcessExecutor.Limits(
            timeoutMilliseconds: Int(try Parse.seconds(timeout, option: "--timeout") * 1000),
            memoryLimit: try Parse.bytes(memoryLimit, option: "--memory-limit"))
    }

    func builtinFormat() throws -> BuiltinFormat? {
        guard let format else { return nil }
        guard let found = BuiltinFormat.named(format) else {
            throw ValidationError("unknown format '\(format)'; known formats: \(BuiltinFormat.names.joined(separator: ", "))")
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
        _ = try limits()
        _ = try builtinFormat()
    }

    /// The arguments that select the same validator again, for replay commands.
    var validatorArguments: String {
        var words: [String] = []
        if let schema { words.append("--schema \(ShellWords.quote(URL(fileURLWithPath: schema).standardizedFileURL.path))") }
        if let validator { words.append("--validator \(ShellWords.quote(validator))") }
        if let format { words.append("--format \(format)") }
        if let xsd { words.append("--xsd \(ShellWords.quote(URL(fileURLWithPath: xsd).standardizedFileURL.path))") }
        return words.joined(separator: " ")
    }

    /// The schema's format, if --schema was given.
    func schemaFormat() throws -> SchemaFormat? {
        guard let schema = ksyPath else { return nil }
        do {
            return try SchemaFormat(ksyPath: schema)
        } catch {
            throw CorruptFuzzError(.invalidArgument, "broken schema: \(error.message)")
        }
    }

    /// With --xsd: the XML format of that schema, generating documents from it when the
    /// generator knows every construct the schema uses (else a warning says why not).
    func xsdFormat() throws -> (format: XMLFormat, warning: String?)? {
        guard let xsd = xsdPath else { return nil }
        guard let data = FileManager.default.contents(atPath: xsd) else {
            throw CorruptFuzzError(.invalidArgument, "cannot read the XML Schema \(xsd)")
        }
        do {
            return (try XMLFormat(xsd: [UInt8](data), name: xsd), nil)
        } catch {
            do {
                return (XMLFormat(schema: try XMLSchemaValidator(xsd: [UInt8](data), name: xsd)), "no documents are generated from \(xsd): \(error)")
            } catch {
                throw CorruptFuzzError(.invalidArgument, "broken XML Schema \(xsd): \(error)")
            }
        }
    }

    /// The validator that labels inputs: the app's (--validator) when given, else the format's.
    func makeValidator(limits: ProcessExecutor.Limits, slots: Int, fileExtension: String) throws -> (any Validator)? {
        if let line = validator {
            return try ExternalValidator(command: try TargetCommand(line), limits: limits, slots: slots, fileExtension: fileExtension)
        }
        return try formatValidator()
    }

    /// The format's own reference validator (--format, --schema or --xsd), if one is selected.
    /// With --validator it does not label inputs; its verdict is reported beside each finding.
    func formatValidator() throws -> (any Validator)? {
        if let xsd = xsdPath {
            guard let data = FileManager.default.contents(atPath: xsd) else {
                throw CorruptFuzzError(.invalidArgument, "cannot read the XML Schema \(xsd)")
            }
            do {
                return try XMLSchemaValidator(xsd: [UInt8](data), name: xsd)
            } catch {
                throw CorruptFuzzError(.invalidArgument, "broken XML Schema \(xsd): \(error)")
            }
        }
        if let format = try builtinFormat() { return format.validator }
        return try schemaFormat()?.validator
    }
}

/// Parsers for human-friendly durations and sizes.
enum Parse {
    /// Reads `60`, `60s`, `500ms`, `5m`, `1h` as seconds.
    static func seconds(_ text: String, option: String) throws -> Double {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value > 0 { return value * factor }
        }
        if let value = Double(text), value > 0 { return value }
        throw ValidationError("\(option): '\(text)' is not a duration (try 60s, 500ms, 5m)")
    }

    /// Reads `1GB`, `512MB`, `64KB`, `1048576` as bytes (powers of 1024); `0` means none.
    static func bytes(_ text: String, option: String) throws -> Int64 {
        let upper = text.uppercased()
        let units: [(String, Int64)] = [("GB", 1 << 30), ("G", 1 << 30), ("MB", 1 << 20), ("M", 1 << 20), ("KB", 1 << 10), ("K", 1 << 10), ("B", 1)]
        for (suffix, factor) in units where upper.hasSuffix(suffix) {
            if let value = Double(upper.dropLast(suffix.count)), value >= 0 { return Int64(value * Double(factor)) }
        }
        if let value = Int64(upper), value >= 0 { return value }
        throw ValidationError("\(option): '\(text)' is not a size (try 1GB, 512MB, 0 for none)")
    }
}

/// Maps tool errors to the documented exit status 2 with a clear message.
func configurationError(_ error: CorruptFuzzError) -> ExitCode {
    FileHandle.standardError.write(Data("corrupt-fuzz: error: \(error)\n".utf8))
    return ExitCode(2)
}
