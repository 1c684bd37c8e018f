import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzPlist

import CorruptFuzzSchema
import Foundation

/// `corrupt-fuzz generate`: writes valid files drawn from a schema.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Write valid files generated from a .ksy schema, an XML Schema, a SQL description or a bundled format's model.")

    /// The format whose model generates the files (friend-list archives are written by the
    /// real NSKeyedArchiver).
    @OptionGroup var formats: FormatOptions

    @Option(name: .long, help: ArgumentHelp("How many files.", valueName: "n"))
    var count: Int = 10

    @Option(name: .long, help: ArgumentHelp("Output folder (created if needed).", valueName: "dir"))
    var out: String

    @Option(name: .long, help: ArgumentHelp("Seed: the same seed gives the same files.", valueName: "n"))
    var seed: UInt64 = 0

    @Option(name: .long, help: ArgumentHelp("The most elements of one repeated field (.ksy).", valueName: "n"))
    var maxElements: Int = 6

    @Option(name: .long, help: ArgumentHelp("The most bytes of one string or byte field (.ksy).", valueName: "n"))
    var maxBytes: Int = 24

    @Option(
        name: .long,
        help: ArgumentHelp(
            "For property-list formats: write the binary (default) or the XML encoding.", valueName: "binary|xml"))
    var encoding: String = "binary"

    func validate() throws {
        if count <= 0 { throw ValidationError("--count must be positive") }
        guard let wanted = PlistEncoding(rawValue: encoding) else { throw ValidationError("--encoding must be binary or xml") }
        if wanted == .xml, !["friend-list", "keyed-archive", "binary-plist"].contains(formats.format ?? "") {
            throw ValidationError("--encoding xml needs a property-list --format (friend-list, keyed-archive, binary-plist)")
        }
        if formats.isEmpty { throw ValidationError("give --schema, --xsd or --format (--format sqlite takes a --schema FILE.sql)") }
        if !formats.generates {
            throw ValidationError(
                "format '\(formats.format ?? "")' has no generator; formats with one: \(FormatOptions.registry.generatingNames.joined(separator: ", "))")
        }
    }

    func run() throws {
        let selection: FormatRegistry.Selection?
        let resolved: ResolvedFormat?
        do {
            selection = try FormatOptions.registry.select(format: formats.format, description: formats.description)
            // A .ksy schema is generated with the size limits given here.
            if case .description(let reader, let path, _)? = selection, reader.extensions.contains("ksy") {
                try generateKSY(path)
                return
            }
            resolved = try formats.resolved()
        } catch let error as CorruptFuzzError {
            throw configurationError(error)
        }
        guard let resolved else { return }
        guard let mutator = resolved.format.mutator else {
            throw configurationError(CorruptFuzzError(.invalidArgument, resolved.warnings.first ?? "this format has no generator"))
        }
        let prefix: String
        switch selection {
        case .entry(let entry)?: prefix = entry.name
        case .description(_, let path, _)?: prefix = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        case nil: prefix = "file"
        }
        var rng = FuzzRNG(seed: seed)
        let xml = encoding == PlistEncoding.xml.rawValue
        var empty = 0
        try write(prefix: prefix, fileExtension: resolved.format.fileExtension.isEmpty ? "bin" : resolved.format.fileExtension) {
            let bytes = mutator.generate(using: &rng)
            if bytes.isEmpty { empty += 1 }
            guard xml, let plist = try? PropertyListFile.read(bytes).plist else { return bytes }
            return (try? PropertyListFile.write(plist, encoding: .xml)) ?? bytes
        }
        if empty > 0 {
            throw configurationError(CorruptFuzzError(.system, "\(empty) of \(count) files came out empty: the format could not build them"))
        }
    }

    private func generateKSY(_ schema: String) throws {
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
/// XML Schema, a SQL description, or a bundled format) and prints each violation.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check files with a format's validator (--schema FILE.ksy|FILE.xsd|FILE.sql, --xsd, or --format NAME); exit 1 if any is invalid.")

    @OptionGroup var formats: FormatOptions

    @Flag(name: .long, help: "Print only the first violation of each file (.ksy schemas list them all otherwise).")
    var first = false

    @Argument(help: ArgumentHelp("Files to check.", valueName: "file"))
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("validate needs at least one file") }
        if formats.isEmpty { throw ValidationError("validate needs --schema, --xsd or --format") }
    }

    func run() throws {
        let validator: any Validator
        do {
            if case .description(let reader, let path, _)? = try FormatOptions.registry.select(format: formats.format, description: formats.description),
                reader.extensions.contains("ksy")
            {
                try runKSY(path)
                return
            }
            guard let made = try formats.resolved()?.format.validator else { throw ValidationError("no validator for these options") }
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
