import ArgumentParser
import CCorruptFuzzSpawn
import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation

/// A version-skew or round-trip check, ready to run: the report's suites it makes.
struct DocumentCheckPlan {
    var name: String
    var run: () throws(CorruptFuzzError) -> [RunReport.Suite]
}

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

    /// Runs the checks, writes the report and prints the summary; exit 1 with findings.
    func execute(_ plans: [DocumentCheckPlan]) throws -> Never {
        try Self.execute(plans, reports: reports, seed: seed)
    }

    /// Runs the checks, writes the report under `reports` and prints the summary; exit 1 with
    /// findings, 2 when a check cannot run (what earlier checks found is written first).
    static func execute(_ plans: [DocumentCheckPlan], reports: String, seed: UInt64) throws -> Never {
        _ = cf_become_subreaper()
        let writer: ReportWriter
        var suites: [RunReport.Suite] = []
        do {
            writer = try ReportWriter(root: reports, runID: ReportWriter.makeRunID(seed: seed))
        } catch {
            throw configurationError(error)
        }
        for plan in plans {
            FileHandle.standardError.write(Data("checking \(plan.name)\n".utf8))
            do {
                suites += try plan.run()
            } catch {
                if !suites.isEmpty { try? RunCommand.write(&suites, writer: writer) }
                throw configurationError(error)
            }
            try? RunCommand.write(&suites, writer: writer)
        }
        do {
            try RunCommand.write(&suites, writer: writer)
        } catch let error as CorruptFuzzError {
            throw configurationError(error)
        }
        RunCommand.printSummary(suites, writer: writer)
        throw suites.contains { !$0.result.findings.isEmpty } ? ExitCode(1) : ExitCode.success
    }
}

/// How `skew` and `roundtrip` run loaders and writers.
struct DocumentCheckSettings {
    var worker = false
    var limits = ProcessExecutor.Limits()
    /// The seed of generated documents.
    var seed: UInt64 = 0
    /// The options that select the same settings again in a replay command.
    var replayWords: [String] = []

    /// A loader: a command run once per file, or a worker.
    func loader(_ line: String, name: String? = nil, fileExtension: String) throws(CorruptFuzzError) -> DocumentLoader {
        let command = try TargetCommand(line)
        let executor: any Executor
        if worker {
            executor = try WorkerExecutor(
                path: command.executablePath, arguments: command.words.dropFirst().filter { $0 != "@@" }, environment: [:], limits: limits, slots: 1)
        } else {
            executor = try ProcessExecutor(command: command, limits: limits, slots: 1, fileExtension: fileExtension)
        }
        return DocumentLoader(name: name ?? command.name, command: line, executor: executor)
    }
}

/// The documents at a path: the file, or the files of a folder.
enum DocumentFiles {
    /// The documents at each path, in order.
    static func load(_ paths: [String]) throws(CorruptFuzzError) -> [Seed] {
        var seeds: [Seed] = []
        for path in paths { seeds += try load(path) }
        return seeds
    }

    static func load(_ path: String) throws(CorruptFuzzError) -> [Seed] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CorruptFuzzError(.unusableCorpus, "\(path) does not exist")
        }
        if isDirectory.boolValue { return try CorpusLoader.load(path).seeds }
        guard let data = FileManager.default.contents(atPath: path) else { throw CorruptFuzzError(.unusableCorpus, "cannot read \(path)") }
        return [Seed(name: (path as NSString).lastPathComponent, bytes: [UInt8](data))]
    }

    /// `count` documents the format generates from `seed`, named after `name`.
    static func generate(_ format: ResolvedFormat, named name: String, count: Int, seed: UInt64) throws(CorruptFuzzError) -> [Seed] {
        guard let mutator = format.format.mutator else {
            throw CorruptFuzzError(.invalidArgument, "the format \(name) has no generator")
        }
        var rng = FuzzRNG(seed: seed)
        return (0..<count).map { Seed(name: "\(name)-generated-\($0)", bytes: mutator.generate(using: &rng)) }
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
        let plan = Self.plan(
            older: older, newer: newer, names: (olderName, newerName), newerWriter: newerWriter, olderCorpus: olderCorpus, newerCorpus: newerCorpus,
            newerFormat: newerFormat, generate: generate, options: options.settings)
        try options.execute([plan])
    }

    static func plan(
        older: String, newer: String, names: (older: String?, newer: String?) = (nil, nil), newerWriter: String?, olderCorpus: [String], newerCorpus: [String],
        newerFormat formatName: String?,
        generate: Int, options: DocumentCheckSettings
    ) -> DocumentCheckPlan {
        DocumentCheckPlan(name: "version skew: \(older) and \(newer)") { () throws(CorruptFuzzError) in
            let newerFormat = try FormatOptions.registry.resolve(format: formatName)
            let fileExtension = newerFormat?.format.fileExtension ?? ""
            var newerFiles = try DocumentFiles.load(newerCorpus)
            if let newerFormat, let formatName, generate > 0 {
                newerFiles += try DocumentFiles.generate(
                    newerFormat, named: (formatName as NSString).lastPathComponent, count: generate, seed: options.seed)
            }
            var writer: CommandWriter?
            if let newerWriter { writer = try CommandWriter(newerWriter, limits: options.limits, fileExtension: fileExtension) }
            let check = VersionSkewCheck(
                older: try options.loader(older, name: names.older, fileExtension: fileExtension),
                newer: try options.loader(newer, name: names.newer, fileExtension: fileExtension),
                newerWriter: writer,
                validator: newerFormat?.format.validator,
                olderFiles: try DocumentFiles.load(olderCorpus),
                newerFiles: newerFiles, fileExtension: fileExtension)
            let result = try check.run()
            // A replay checks the one file in the same role, with the same loaders and writer.
            var words = [ExecutablePath.current, "skew", "--older", older, "--newer", newer]
            if let name = names.older { words += ["--older-name", name] }
            if let name = names.newer { words += ["--newer-name", name] }
            if let newerWriter { words += ["--newer-writer", newerWriter] }
            if let formatName {
                words += ["--newer-format", FormatOptions.registry.entry(named: formatName) == nil ? URL(fileURLWithPath: formatName).standardizedFileURL.path : formatName]
            }
            words += options.replayWords
            var downgrade = result.downgrade
            if !result.unreadableNewerFiles.isEmpty {
                downgrade.undecided["the newer loader itself rejects it, so it is no newer file"] = result.unreadableNewerFiles.count
            }
            return [
                RunReport.Suite(result: result.upgrade, replay: ReplayDescription(command: words + ["--older-corpus"], fileExtension: fileExtension)),
                RunReport.Suite(result: downgrade, replay: ReplayDescription(command: words + ["--newer-corpus"], fileExtension: fileExtension)),
            ]
        }
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
        let plan = Self.plan(
            loader: loader, writer: writer, corpus: corpus, format: try formats.resolved(), appValidator: validator,
            generate: generate, cycles: cycles, options: options.settings)
        try options.execute([plan])
    }

    static func plan(
        loader: String, writer: String, corpus: [String], format: ResolvedFormat?, appValidator: String?, generate: Int, cycles: Int,
        options: DocumentCheckSettings
    ) -> DocumentCheckPlan {
        DocumentCheckPlan(name: "round trip: \(writer)") { () throws(CorruptFuzzError) in
            let fileExtension = format?.format.fileExtension ?? ""
            var documents = try DocumentFiles.load(corpus)
            if let format, generate > 0 {
                documents += try DocumentFiles.generate(
                    format, named: format.replayArguments.last?.last.map { ($0 as NSString).lastPathComponent } ?? "document", count: generate,
                    seed: options.seed)
            }
            var validator: (any Validator)? = format?.format.validator
            if let appValidator {
                validator = try ExternalValidator(
                    command: try TargetCommand(appValidator), limits: options.limits, slots: 1, fileExtension: fileExtension)
            }
            let check = RoundTripCheck(
                loader: try options.loader(loader, fileExtension: fileExtension),
                writer: try CommandWriter(writer, limits: options.limits, fileExtension: fileExtension), validator: validator,
                documents: documents, cycles: cycles, fileExtension: fileExtension)
            var words = [ExecutablePath.current, "roundtrip", "--loader", loader, "--writer", writer]
            words += format?.replayArguments.flatMap { $0 } ?? []
            if let appValidator { words += ["--validator", appValidator] }
            if cycles != 2 { words += ["--cycles", "\(cycles)"] }
            words += options.replayWords + ["--corpus"]
            return [RunReport.Suite(result: try check.run(), replay: ReplayDescription(command: words, fileExtension: fileExtension))]
        }
    }
}
