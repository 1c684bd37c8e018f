import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation

/// `corrupt-fuzz crashpoints`: cut a save or migration short at every file operation, and at
/// the states a power cut leaves, then check the data and run it again.
struct CrashPointsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crashpoints",
        abstract:
            "Kill a save or migration at every file operation (and cut the power), then check that the data is old or new, and that a re-run finishes the job.",
        discussion: """
            The program runs once under a recorder (LD_PRELOAD, Linux) that logs every open, \
            write, truncate, fsync, rename, unlink, mkdir and lock in the data folder; then from a \
            fresh copy of the folder killed before each operation in turn, and from the states a \
            power cut can leave (unsynced writes lost, names persisted before their data, a write \
            torn at 512 or 4096 bytes, writes of one fsync epoch reordered). For each state: the \
            check (@@ is the folder: exit 0 with a digest of the data, a line per record, or \
            'reason: WORD') must see the old or the new data; the program run again must succeed, \
            leave the new data, and no file a clean run does not leave.

            Findings: torn-state, lost-data, duplicate-data, stray-file, held-lock (a lock or file \
            still held when the program exits), crash, hang.

            With --faults, each operation is also made to fail, one at a time, while the program \
            runs on: enospc and edquot (writes, truncations, syncs, closes; enospc also creating \
            a file or folder, and rename), eio (those and reads), short-write (half the count), \
            eintr (writes and reads), or all. The program must succeed truthfully or report the \
            failure, and leave the old data or the new; after a failed fsync or close, the writes \
            it was to make durable count as lost. A save that exits 0 without its data on disk is \
            unreported-io-error. The check, reading the data with EIO at each of its reads, must \
            reject it as io-error, not accept part of it or call it corrupt.

            Example, from the repository root after `swift build` (a test runs it): the naive \
            notes migration, cut short, tears, loses and duplicates notes, leaves files behind \
            and holds its lock: 12 findings (exit 1).
              corrupt-fuzz crashpoints \\
                --target '.build/debug/notes-migrate-naive @@' \\
                --data Corpus/migration/notes-app \\
                --check '.build/debug/notes-migrate-check @@'
            """)

    @Option(name: .long, help: ArgumentHelp("The save or migration; @@ is the data folder.", valueName: "command"))
    var target: String

    @Option(name: .long, help: ArgumentHelp("The data folder before the run (never changed: every run gets a copy).", valueName: "dir"))
    var data: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The app's check of a folder (@@): exit 0 with a digest of its data (a line per record), else 'reason: WORD'. Without it, --format's validator judges every file and the digest is the files' contents.",
            valueName: "command"))
    var check: String?

    /// Its validator judges each data file when there is no --check.
    @OptionGroup var formats: FormatOptions

    @Option(name: .long, help: ArgumentHelp("The most crash states to check.", valueName: "n"))
    var maxStates: Int = 300

    @Option(name: .long, help: ArgumentHelp("Check only the states of this operation (a replay).", valueName: "k"))
    var at: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also make each operation fail, one at a time, with these I/O faults: enospc, edquot, eio, short-write, eintr, or all (comma-separated).",
            valueName: "list"))
    var faults: FaultList?

    @Option(name: .long, help: ArgumentHelp("Check only this fault point, with --faults (a replay).", valueName: "k"))
    var faultAt: Int?

    @Option(name: .long, help: ArgumentHelp("Seed of the sampled power-cut states.", valueName: "n"))
    var seed: UInt64 = 0

    @OptionGroup var limitOptions: LimitOptions

    @Option(name: .long, help: ArgumentHelp("Parent folder of run reports.", valueName: "dir"))
    var reports: String = "Reports"

    func validate() throws {
        if maxStates < 1 { throw ValidationError("--max-states must be positive") }
        if faultAt != nil, faults == nil { throw ValidationError("--fault-at needs --faults") }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: data, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("--data must be a folder: \(data)")
        }
    }

    func run() throws {
        let format = try orExit { () throws(CorruptFuzzError) in try formats.resolved() }
        try DocumentCheckOptions.execute(
            [
                .crashPoints(
                    target: target, data: data, check: check, format: format, maxStates: maxStates, at: at, seed: seed, faults: faults?.faults ?? [],
                    faultAt: faultAt, limits: limitOptions.limits, limitWords: limitOptions.replayWords)
            ], reports: reports, seed: seed)
    }
}

/// `--faults enospc,eio` or `all`.
struct FaultList: ExpressibleByArgument {
    var faults: [IOFault]

    init?(argument: String) {
        if argument == "all" {
            faults = IOFault.allCases
            return
        }
        var faults: [IOFault] = []
        for word in argument.split(separator: ",") {
            guard let fault = IOFault(rawValue: word.trimmingCharacters(in: .whitespaces).lowercased()) else { return nil }
            if !faults.contains(fault) { faults.append(fault) }
        }
        guard !faults.isEmpty else { return nil }
        self.faults = faults
    }

    static var allValueStrings: [String] { IOFault.allCases.map(\.rawValue) + ["all"] }
}
