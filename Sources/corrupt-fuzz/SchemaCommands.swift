import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzPlist
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
        let prefix = try orExit { () throws(CorruptFuzzError) in
            try GeneratedFiles.write(
                count: count, format: formats.format, description: formats.description, seed: seed, into: out,
                limits: .init(maxElements: maxElements, maxBytes: maxBytes), xmlPlist: encoding == PlistEncoding.xml.rawValue)
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
        // A file to check that is not there is the command's error (exit 2), not an invalid file.
        for file in files { try checkReadableFile(file, role: "file") }
    }

    func run() throws {
        let results = try orExit { () throws(CorruptFuzzError) in
            try ValidatedFiles.verdicts(of: files, format: formats.format, description: formats.description)
        }
        for (file, verdicts) in results {
            for verdict in first ? Array(verdicts.prefix(1)) : verdicts { print("\(file): \(verdict)") }
        }
        if results.contains(where: { !($0.verdicts.first?.isValid ?? false) }) { throw ExitCode(1) }
    }
}
