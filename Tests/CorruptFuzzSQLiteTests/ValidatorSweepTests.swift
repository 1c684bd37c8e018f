import CorruptFuzzCore
import CorruptFuzzExamples
import Foundation
import SelfFuzzSupport
import Testing

@testable import CorruptFuzzSQLite

// SQLiteValidator against SQLite's own checks, run by the sqlite3 shell in processes of their own
// (Scripts/validator-sweep.py): `PRAGMA integrity_check` and `PRAGMA quick_check` on a read-only
// copy of each input. The validator checks more than SQLite does (the description's schema and
// user_version, foreign keys, column types, the app's rules, a log that drops transactions), so
// it may refuse what SQLite passes, but only in the classes of the allow-list below; it must
// never call valid what SQLite finds corrupt. Docs/Formats.md lists the classes.
//
//     swift test --filter ValidatorSweep

@Suite("Validator sweep: SQLite databases against integrity_check and quick_check")
struct SQLiteValidatorSweepTests {
    @Test("SQLiteValidator refuses what integrity_check refuses, and refuses more only in the documented classes")
    func sweep() throws {
        let clock = ContinuousClock()
        let start = clock.now
        guard toolOnPath("sqlite3") else {
            Issue.record("sqlite3 is not on PATH (Scripts/setup.sh installs it): SQLiteValidator was not compared with SQLite's integrity_check")
            return
        }
        let small = try SQLiteDescription(sql: SQLiteGenerationTests.small, name: "small")
        let formats = [
            try #require(NoteStoreFormat.format(journalMode: .rollback)), try #require(NoteStoreFormat.format(journalMode: .wal)),
            SQLiteFormat(description: small),
        ]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-sweep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var tally = SweepTally(format: "sqlite", inputs: 0, allowed: sqliteAllowList)
        var compared: [(input: SweepInput, verdict: Verdict, path: String)] = []
        for format in formats {
            let inputs = try sqliteSweepInputs(format, mutations: 1_500)
            tally.inputs += inputs.count
            for input in inputs {
                let verdict = format.validator.validate(input.bytes)
                tally.count(verdict.isValid ? "valid" : "invalid")
                if case .undecided(let why) = verdict {
                    tally.skip("sqlite3", "undecided by us: \(why.replacing(/[0-9]+/, with: "#"))")
                    continue
                }
                // SQLite reads a database file and its log: a bundle that does not unpack is
                // ours (a tar archive), not SQLite's, to judge.
                guard let files = try? SQLiteFiles.decode(input.bytes) else {
                    tally.skip("sqlite3", "the bundle does not unpack (refused by us as corrupt: our packaging, not SQLite's)")
                    continue
                }
                let directory = folder.appendingPathComponent("\(compared.count)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                compared.append((input, verdict, try files.write(into: directory.path)))
            }
        }
        guard let results = try runSweepScript("sqlite3", compared.map(\.path)) else { return }
        for ((input, verdict, _), result) in zip(compared, results) {
            let detail = result["detail"] as? String ?? ""
            guard let theirs = result["ok"] as? Bool else {
                tally.skip("sqlite3", "sqlite3 gave no verdict (\(detail))")
                continue
            }
            let integrity = result["integrity"] as? [String: Any], quick = result["quick"] as? [String: Any]
            func passed(_ check: [String: Any]?) -> Bool { check?["status"] as? Int == 0 && check?["rows"] as? [String] == ["ok"] }
            if passed(integrity) != passed(quick) {
                let first = (integrity?["rows"] as? [String])?.first ?? integrity?["error"] as? String ?? ""
                let what = "\(passed(quick) ? "quick_check passes" : "quick_check fails"), integrity_check \(passed(integrity) ? "passes" : "fails")"
                tally.note("sqlite3", "\(what) (\(first.replacing(/[0-9]+/, with: "#").prefix(60)))")
            }
            var message = "", path = ""
            if case .invalid(let violation) = verdict {
                message = violation.message
                path = violation.path
            }
            if verdict.isValid == theirs {
                tally.agree("sqlite3")
                continue
            }
            let name = sqliteClass(ours: verdict.isValid, message: message, path: path)
            tally.disagree(
                "sqlite3", name, family: sqliteFamily(message, path: path),
                "\(input.name): ours: \(path): \(message.prefix(200)) | sqlite3: \(detail.prefix(200))", bytes: input.bytes)
        }
        tally.report(seconds: (clock.now - start).sweepSeconds)
        #expect(tally.agreements["sqlite3", default: 0] > tally.inputs / 2)
        #expect(tally.verdicts["valid", default: 0] > 50 && tally.verdicts["invalid", default: 0] > 500, "\(tally.verdicts)")
    }
}

/// Every class of disagreement the sweep accepts, and why we differ. A class the sweep meets that
/// is not here fails the test; Docs/Formats.md lists the same classes.
let sqliteAllowList: [String: String] = [
    "we refuse: user_version other than the description's":
        "user_version is the app's schema version, which SQLite does not check: newer is unsupported-version, older corrupt (the description says which it writes)",
    "we refuse: a schema other than the description's":
        "SQLite checks that sqlite_schema parses, not that it is the app's: a table, index or column the description does not have (or lacks) is corrupt data for the app",
    "we refuse: a row whose foreign key names no row": "integrity_check does not check foreign keys (PRAGMA foreign_key_check does, which the validator runs)",
    "we refuse: a value of another storage class than its column's type":
        "SQLite stores any value in any column (type affinity only converts what it can): an INTEGER column holding text passes integrity_check, and breaks an app that reads an Int",
    "we refuse: a row that breaks the app's rule":
        "the description's rules (queries that must return no rows) are the app's invariants, which SQLite knows nothing of",
    "we refuse: a log that drops committed transactions":
        "a damaged frame in the write-ahead log makes SQLite stop reading the log there, silently dropping later commits: the database opens and passes integrity_check with data missing (WALFile.silentLossProblem)",
]

/// The class of a disagreement, named as in the allow-list.
func sqliteClass(ours: Bool, message: String, path: String) -> String {
    guard !ours else { return "we accept: unexplained" }
    switch path {
    case "user_version": return "we refuse: user_version other than the description's"
    case "sqlite_schema": return "we refuse: a schema other than the description's"
    case "wal" where message.contains("[rule: the log drops committed transactions]"): return "we refuse: a log that drops committed transactions"
    default: break
    }
    if message.contains("[rule: foreign key]") { return "we refuse: a row whose foreign key names no row" }
    if message.contains("[rule: column type]") { return "we refuse: a value of another storage class than its column's type" }
    if path.hasPrefix("rule ") { return "we refuse: a row that breaks the app's rule" }
    return "we refuse: unexplained"
}

/// The rule a message names, for counting.
func sqliteFamily(_ message: String, path: String) -> String {
    let where_ = path.replacing(/[0-9]+/, with: "#")
    return String((where_ + ": " + message.replacing(/[0-9]+/, with: "#")).prefix(100))
}

// MARK: - Inputs

/// Databases the format's generator makes (and, for the note store, the corpus's), then
/// `mutations` mutations of them: the SQLite mutator's page, cell, header and log edits,
/// byte-level havoc, both; and every eighth catalogue entry of three seeds. Deterministic.
func sqliteSweepInputs(_ format: SQLiteFormat, mutations: Int) throws -> [SweepInput] {
    let name = format.description.name
    var inputs: [SweepInput] = []
    var rng = FuzzRNG(seed: 15)
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let corpusFolder = name == "note-store" ? "Corpus/sqlite" : name == "note-store-wal" ? "Corpus/sqlite-wal" : nil
    if let corpusFolder {
        let folder = root.appendingPathComponent(corpusFolder)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
            inputs.append(SweepInput(name: "\(corpusFolder)/\(file)", bytes: [UInt8](try Data(contentsOf: folder.appendingPathComponent(file)))))
        }
    }
    for index in 0..<20 {
        inputs.append(SweepInput(name: "\(name) generated-\(index)", bytes: format.sqliteMutator.generate(using: &rng)))
    }
    let seeds = inputs
    for index in 0..<mutations {
        let seed = seeds[rng.below(seeds.count)]
        var bytes = seed.bytes
        var steps: [String] = []
        let mode = rng.below(4)  // 0, 1: structure-aware, 2: byte-level, 3: both
        if mode != 2, let mutation = format.sqliteMutator.mutate(bytes, using: &rng) {
            bytes = mutation.bytes
            steps.append(mutation.name)
        }
        if mode >= 2 || steps.isEmpty {
            for _ in 0..<(1 + rng.below(2)) {
                let mutator = Mutator.byteLevel[rng.below(Mutator.byteLevel.count)]
                if let step = mutator.mutate(&bytes, using: &rng) { steps.append(step) }
            }
        }
        inputs.append(SweepInput(name: "\(name) mutation \(index) of \(seed.name): \(steps.joined(separator: ", "))", bytes: bytes))
    }
    for seed in seeds.suffix(3) {
        for (index, entry) in format.sqliteMutator.catalogue(of: seed.bytes).enumerated() where index % 8 == 0 {
            inputs.append(SweepInput(name: "\(name) catalogue of \(seed.name): \(entry.name)", bytes: entry.bytes))
        }
    }
    // Sound databases that break the app's rules, one rule each, made with SQL: what the
    // validator checks beyond SQLite, each met at least once.
    if name == "note-store" {
        let edits = [
            "UPDATE notes SET created = updated + 1", "UPDATE notes SET title = ''", "UPDATE notes SET folder_id = 999",
            "UPDATE folders SET name = x'00ff'", "UPDATE notes SET created = 'yesterday'", "PRAGMA user_version = 3", "PRAGMA user_version = 1",
            "CREATE TABLE extra (x)", "DROP INDEX notes_by_folder",
        ]
        for seed in seeds.filter({ !SQLiteFiles.isBundle($0.bytes) }).prefix(4) {
            for edit in edits {
                inputs.append(SweepInput(name: "\(name) \(seed.name) after \(edit)", bytes: try edited(seed.bytes, edit)))
            }
        }
    }
    return inputs
}

/// `database` after `sql`, run by SQLite on a copy (foreign keys are not enforced, as SQLite's
/// default is).
func edited(_ database: [UInt8], _ sql: String) throws -> [UInt8] {
    try ScratchFolder.with(prefix: "sqlite-sweep-edit") { folder in
        let path = folder.path + "/edit.db"
        try Data(database).write(to: URL(fileURLWithPath: path))
        let connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.execute(sql)
        connection.close()
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
