import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation

/// Options shared by `skew` and `roundtrip`: how loaders run, and where the report goes.
struct DocumentCheckOptions: ParsableArguments {
    @Flag(
        name: .long,
        help: "Start each loader once as a persistent worker (CorruptFuzzWorker.serve, or cf_worker_main in C) instead of once per file.")
    var worker = false

    @OptionGroup var limitOptions: LimitOptions

    @Option(name: .long, help: ArgumentHelp("Seed of the generated documents.", valueName: "n"))
    var seed: UInt64 = 0

    @Option(name: .long, help: ArgumentHelp("Parent folder of run reports.", valueName: "dir"))
    var reports: String = "Reports"

    /// The settings these options give (argument-parser values cannot be read outside parsing,
    /// so the demo fills in the settings itself).
    var settings: DocumentCheckSettings {
        DocumentCheckSettings(worker: worker, limits: limitOptions.limits, seed: seed, replayWords: (worker ? ["--worker"] : []) + limitOptions.replayWords)
    }

    /// Runs the checks as one session (its report under --reports); exit 1 with new findings,
    /// 2 when a check cannot run (what earlier checks found is written first).
    func execute(_ checks: [Session.Check]) throws -> Never {
        try Self.execute(checks, reports: reports, seed: seed)
    }

    static func execute(_ checks: [Session.Check], reports: String, seed: UInt64) throws -> Never {
        let findings: Int
        do throws(CorruptFuzzError) {
            findings = try Session(reports: reports, runID: ReportWriter.makeRunID(seed: seed)).run(checks)
        } catch {
            throw configurationError(error)
        }
        throw findings > 0 ? ExitCode(1) : ExitCode.success
    }
}

/// `corrupt-fuzz skew`: files of a newer app version on an older one, and the other way round.
struct SkewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skew",
        abstract:
            "Check version skew: the older app must refuse a newer file as unsupported-version (or read it whole), the newer app must read and save every older file.",
        discussion: """
            Loaders follow the target protocol (exit 0 accepted, stdout the digest of the data; \
            otherwise rejected with 'reason: WORD'). The writer loads @@ and saves to @out.

            Downgrade (older loader, each newer file): wrong-reason unless it says \
            unsupported-version; lost-on-downgrade when it accepts and its digest differs from \
            the newer loader's; crash, hang, oom. Upgrade (newer loader, each older file): \
            false-rejection when it refuses one; with --newer-writer, the saved file must be \
            valid (--newer-format) and load again to the same digest, twice (writer-corruption), \
            and joins the newer files.

            Example, from the repository root after `swift build` (a test runs it): version 1 \
            of the friend list reads version 2's files and drops their nicknames, \
            lost-on-downgrade (exit 1).
              corrupt-fuzz skew --older '.build/debug/friend-list-naive @@' \\
                --newer '.build/debug/friend-list-v2 @@' \\
                --newer-writer '.build/debug/friend-list-v2 resave @@ @out' \\
                --older-corpus Corpus/friend-lists --newer-format friend-list-v2 \\
                --generate 20
            """)

    @Option(name: .long, help: ArgumentHelp("The older version's loader (@@ is the file).", valueName: "command"))
    var older: String

    @Option(name: .long, help: ArgumentHelp("The newer version's loader (@@ is the file).", valueName: "command"))
    var newer: String

    @Option(name: .long, help: ArgumentHelp("The older version's name in reports (default: from its command).", valueName: "name"))
    var olderName: String?

    @Option(name: .long, help: ArgumentHelp("The newer version's name in reports (default: from its command).", valueName: "name"))
    var newerName: String?

    @Option(
        name: .long, help: ArgumentHelp("The newer version's writer: loads @@ and saves it to @out (a migration for an older file).", valueName: "command"))
    var newerWriter: String?

    @Option(name: .long, help: ArgumentHelp("Files of the older version (a file or a folder).", valueName: "path"))
    var olderCorpus: [String] = []

    @Option(name: .long, help: ArgumentHelp("Files of the newer version (a file or a folder).", valueName: "path"))
    var newerCorpus: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The newer version's format, a bundled one (\(FormatOptions.registry.names.joined(separator: ", "))) or a description file (.ksy, .xsd, .sql): its validator judges what the newer writer saves, its generator makes --generate newer files.",
            valueName: "name|file"))
    var newerFormat: String?

    @Option(name: .long, help: ArgumentHelp("Newer files to generate with --newer-format.", valueName: "n"))
    var generate: Int = 0

    @OptionGroup var options: DocumentCheckOptions

    func validate() throws {
        if olderCorpus.isEmpty, newerCorpus.isEmpty, generate == 0 {
            throw ValidationError("give files to check: --older-corpus, --newer-corpus, or --newer-format with --generate N")
        }
        if generate < 0 { throw ValidationError("--generate must not be negative") }
        if generate > 0, newerFormat == nil { throw ValidationError("--generate needs --newer-format (whose generator makes the files)") }
        if let newerFormat, let problem = FormatOptions.registry.problem(with: newerFormat) { throw ValidationError(problem) }
    }

    func run() throws {
        let format = try orExit { () throws(CorruptFuzzError) in try FormatOptions.registry.resolve(format: newerFormat) }
        // A description file is named by its absolute path in replay commands.
        let word = newerFormat.map { FormatOptions.registry.entry(named: $0) == nil ? URL(fileURLWithPath: $0).standardizedFileURL.path : $0 }
        try options.execute([
            .versionSkew(
                older: older, newer: newer, names: (olderName, newerName), newerWriter: newerWriter, olderCorpus: olderCorpus, newerCorpus: newerCorpus,
                newerFormat: format, newerFormatWord: word, generate: generate, options: options.settings)
        ])
    }
}

/// `corrupt-fuzz roundtrip`: load, save, load again with the app's own writer.
struct RoundTripCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roundtrip",
        abstract: "Check the app's writer: for every document, load, save, load again must give the same data, and what it saves must be valid (two cycles).",
        discussion: """
            The loader follows the target protocol (exit 0 accepted, stdout the digest of the \
            data). The writer loads @@ and saves to @out (without @out, it prints the saved \
            document). A saved file that fails the validator (--format or --validator), does not \
            load, or loads to another digest is a writer-corruption finding with the document and \
            every saved file; a valid document the loader rejects is a false-rejection.

            Example, from the repository root after `swift build` (a test runs it): the naive \
            notes writer escapes `&` but not `<`, so a note that quotes markup is saved as a \
            document that no longer parses, writer-corruption (exit 1).
              corrupt-fuzz roundtrip \\
                --loader '.build/debug/notes-loader-hardened @@' \\
                --writer '.build/debug/notes-writer-naive @@ @out' \\
                --corpus Corpus/notes --format notes --generate 20
            """)

    @Option(name: .long, help: ArgumentHelp("The app's loader (@@ is the file).", valueName: "command"))
    var loader: String

    @Option(name: .long, help: ArgumentHelp("The app's writer: loads @@ and saves it to @out.", valueName: "command"))
    var writer: String

    @Option(name: .long, help: ArgumentHelp("Documents (a file or a folder); repeatable.", valueName: "path"))
    var corpus: [String] = []

    /// Its validator judges the documents and what the writer saves; its generator makes
    /// --generate documents.
    @OptionGroup var formats: FormatOptions

    @Option(
        name: .long,
        help: ArgumentHelp("The app's own validator, as a command (exit 0 valid, else 'reason: WORD'); instead of --format's.", valueName: "command"))
    var validator: String?

    @Option(name: .long, help: ArgumentHelp("Documents to generate with --format.", valueName: "n"))
    var generate: Int = 0

    @Option(name: .long, help: ArgumentHelp("Save-and-load cycles per document.", valueName: "n"))
    var cycles: Int = 2

    @OptionGroup var options: DocumentCheckOptions

    func validate() throws {
        if corpus.isEmpty, generate == 0 { throw ValidationError("give documents: --corpus, or --format with --generate N") }
        if cycles < 1 { throw ValidationError("--cycles must be at least 1") }
        if generate < 0 { throw ValidationError("--generate must not be negative") }
        if generate > 0, !formats.generates { throw ValidationError("--generate needs --format (whose generator makes the documents)") }
    }

    func run() throws {
        let format = try orExit { () throws(CorruptFuzzError) in try formats.resolved() }
        try options.execute([
            .roundTrip(
                loader: loader, writer: writer, corpus: corpus, format: format, appValidator: validator, generate: generate, cycles: cycles,
                options: options.settings)
        ])
    }
}
