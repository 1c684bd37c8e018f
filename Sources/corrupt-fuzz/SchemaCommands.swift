import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzPlist

#if XML
    import CorruptFuzzXML
#endif
import CorruptFuzzSchema
import Foundation

/// `corrupt-fuzz generate`: writes valid files drawn from a schema.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Write valid files generated from a .ksy schema or a bundled format's model.")

    @Option(name: .long, help: ArgumentHelp("The binary layout (.ksy), or with --format sqlite a SQL description (.sql).", valueName: "file"))
    var schema: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A bundled format whose model generates the files (\(BuiltinFormat.all.filter { $0.format.mutator != nil }.map(\.name).joined(separator: ", "))); friend-list archives are written by the real NSKeyedArchiver.",
            valueName: "name"))
    var format: String?

    @Option(name: .long, help: ArgumentHelp("How many files.", valueName: "n"))
    var count: Int = 10

    @Option(name: .long, help: ArgumentHelp("Output folder (created if needed).", valueName: "dir"))
    var out: String

    @Option(name: .long, help: ArgumentHelp("Seed: the same seed gives the same files.", valueName: "n"))
    var seed: UInt64 = 0

    @Option(name: .long, help: ArgumentHelp("The most elements of one repeated field.", valueName: "n"))
    var maxElements: Int = 6

    @Option(name: .long, help: ArgumentHelp("The most bytes of one string or byte field.", valueName: "n"))
    var maxBytes: Int = 24

    @Option(name: .long, help: ArgumentHelp("An XML Schema: write documents valid against it.", valueName: "file.xsd"))
    var xsd: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "For property-list formats: write the binary (default) or the XML encoding.", valueName: "binary|xml"))
    var encoding: String = "binary"

    func validate() throws {
        if count <= 0 { throw ValidationError("--count must be positive") }
        guard let wanted = PlistEncoding(rawValue: encoding) else { throw ValidationError("--encoding must be binary or xml") }
        if wanted == .xml, !["friend-list", "keyed-archive", "binary-plist"].contains(format ?? "") {
            throw ValidationError("--encoding xml needs a property-list --format (friend-list, keyed-archive, binary-plist)")
        }
        if SQLiteBuiltins.isDescription(schema), !SQLiteBuiltins.names.contains(format ?? "") {
            throw ValidationError("a SQL description (--schema FILE.sql) needs --format sqlite or sqlite-wal")
        }
        let sqlDescription = SQLiteBuiltins.isDescription(schema)
        if [sqlDescription ? nil : schema, format, xsd].compactMap({ $0 }).count != 1 {
            throw ValidationError("give one of --schema, --xsd or --format (--format sqlite takes a --schema FILE.sql)")
        }
        if let format, BuiltinFormat.named(format)?.format.mutator == nil {
            throw ValidationError(
                "format '\(format)' has no generator; formats with one: \(BuiltinFormat.all.filter { $0.format.mutator != nil }.map(\.name).joined(separator: ", "))"
            )
        }
    }

    func run() throws {
        if let schema, SQLiteBuiltins.isDescription(schema) {
            let resolved: ResolvedFormat
            do {
                resolved = try SQLiteBuiltins.format(path: schema, formatName: format)
            } catch let error as CorruptFuzzError {
                throw configurationError(error)
            }
            var rng = FuzzRNG(seed: seed)
            let name = URL(fileURLWithPath: schema).deletingPathExtension().lastPathComponent
            var failure: (any Error)?
            try write(prefix: name, fileExtension: resolved.format.fileExtension) {
                do {
                    return try SQLiteBuiltins.generate(resolved, using: &rng)
                } catch {
                    failure = failure ?? error
                    return []
                }
            }
            if let failure { throw configurationError(CorruptFuzzError(.system, "SQLite could not build a database from \(schema): \(failure)")) }
            return
        }
        if let format, let builtin = BuiltinFormat.named(format), let mutator = builtin.format.mutator {
            var rng = FuzzRNG(seed: seed)
            let xml = encoding == PlistEncoding.xml.rawValue
            try write(prefix: format, fileExtension: builtin.format.fileExtension) {
                let bytes = mutator.generate(using: &rng)
                guard xml, let plist = try? PropertyListFile.read(bytes).plist else { return bytes }
                return (try? PropertyListFile.write(plist, encoding: .xml)) ?? bytes
            }
            return
        }
        if let xsd {
            #if XML
                guard let data = FileManager.default.contents(atPath: xsd) else {
                    throw configurationError(CorruptFuzzError(.invalidArgument, "cannot read the XML Schema \(xsd)"))
                }
                let generator: XSDGenerator
                do {
                    generator = try XSDGenerator(xsd: [UInt8](data))
                } catch {
                    throw configurationError(CorruptFuzzError(.invalidArgument, "cannot generate from \(xsd): \(error)"))
                }
                var rng = FuzzRNG(seed: seed)
                let name = URL(fileURLWithPath: xsd).deletingPathExtension().lastPathComponent
                try write(prefix: name, fileExtension: "xml") { XMLWriter.write(generator.generate(using: &rng)) }
                return
            #else
                throw configurationError(CorruptFuzzError(.invalidArgument, BuiltinFormat.unknown("xml")))
            #endif
        }
        guard let schema else { return }
        let loaded: BinarySchema
        do {
            loaded = try KSYLoader.load(contentsOf: schema)
        } catch {
            throw configurationError(CorruptFuzzError(.invalidArgument, "broken schema: \(error.message)"))
        }
        let generator = SchemaGenerator(schema: loaded, limits: .init(maxElements: maxElements, maxBytes: maxBytes))
        var rng = FuzzRNG(seed: seed)
        try write(prefix: loaded.id, fileExtension: loaded.fileExtension.isEmpty ? "bin" : loaded.fileExtension) {
            generator.generateFile(using: &rng)
        }
    }

    /// Writes `count` files named `PREFIX-NN.EXT`, each from `next`.
    func write(prefix: String, fileExtension: String, _ next: () -> [UInt8]) throws {
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            let width = String(count - 1).count
            for index in 0..<count {
                let number = String(index)
                let name = "\(prefix)-\(String(repeating: "0", count: width - number.count))\(number).\(fileExtension)"
                try Data(next()).write(to: URL(fileURLWithPath: out).appendingPathComponent(name))
            }
        } catch {
            throw configurationError(CorruptFuzzError(.reportWriteFailed, "cannot write to \(out): \(error.localizedDescription)"))
        }
        print("wrote \(count) \(prefix) files to \(out)")
    }
}

/// `corrupt-fuzz validate`: checks files with a format's reference validator (a .ksy schema, an
/// XML Schema, or a bundled format) and prints each violation.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check files with a format's validator (--schema FILE.ksy|FILE.xsd, --xsd, or --format NAME); exit 1 if any is invalid.")

    @Option(name: .long, help: ArgumentHelp("A binary layout (.ksy) or an XML Schema (.xsd).", valueName: "file"))
    var schema: String?

    @Option(name: .long, help: ArgumentHelp("An XML Schema (.xsd).", valueName: "file.xsd"))
    var xsd: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A bundled format (\(BuiltinFormat.names.joined(separator: ", "))).", valueName: "name"))
    var format: String?

    @Flag(name: .long, help: "Print only the first violation of each file (.ksy schemas list them all otherwise).")
    var first = false

    @Argument(help: ArgumentHelp("Files to check.", valueName: "file"))
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("validate needs at least one file") }
        if schema == nil, xsd == nil, format == nil { throw ValidationError("validate needs --schema, --xsd or --format") }
    }

    func run() throws {
        if let schema, !schema.lowercased().hasSuffix(".xsd"), format == nil {
            try runKSY(schema)
            return
        }
        // The same format options as run and replay, read the same way.
        var arguments: [String] = []
        if let schema { arguments += ["--schema", schema] }
        if let xsd { arguments += ["--xsd", xsd] }
        if let format { arguments += ["--format", format] } else if xsd != nil || schema != nil { arguments += ["--format", "xml"] }
        let validator: any Validator
        do {
            let options = try TargetOptions.parse(arguments)
            guard let made = try options.resolvedFormat()?.format.validator else { throw ValidationError("no validator for these options") }
            validator = made
        } catch let error as CorruptFuzzError {
            throw configurationError(error)
        }
        var invalid = 0
        for file in files {
            let bytes = FileManager.default.contents(atPath: file).map { [UInt8]($0) }
            let verdict = validator.validate(bytes)
            if !verdict.isValid { invalid += 1 }
            print("\(file): \(verdict)")
        }
        if invalid > 0 { throw ExitCode(1) }
    }

    /// A .ksy schema lists every violation, with its path.
    private func runKSY(_ schema: String) throws {
        let parser: SchemaParser
        do {
            parser = SchemaParser(schema: try KSYLoader.load(contentsOf: schema))
        } catch {
            throw configurationError(CorruptFuzzError(.invalidArgument, "broken schema: \(error.message)"))
        }
        var invalid = 0
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                print("\(file): reason: not-found (cannot read the file)")
                invalid += 1
                continue
            }
            let violations = parser.parse([UInt8](data)).violations
            if violations.isEmpty {
                print("\(file): valid")
                continue
            }
            invalid += 1
            for violation in first ? Array(violations.prefix(1)) : violations {
                print("\(file): \(Verdict.invalid(violation))")
            }
        }
        if invalid > 0 { throw ExitCode(1) }
    }
}
