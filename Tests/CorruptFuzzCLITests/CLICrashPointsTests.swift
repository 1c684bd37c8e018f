import Foundation
import Testing

/// `corrupt-fuzz crashpoints` against the bundled notes migrations and small shell programs.
#if os(Linux)
    private let linux = true
#else
    private let linux = false
#endif

/// The recorder is compiled on first use from the source embedded in the binary (nothing to
/// build first), so these run wherever LD_PRELOAD does.
@Suite("Crash points from the command line", .enabled(if: linux, "crash points need LD_PRELOAD (Linux)"))
struct CLICrashPointsTests {
    static let data = packageRoot.appendingPathComponent("Corpus/migration/notes-app").path

    func crashPoints(_ migration: String, reports: URL, extra: [String] = []) throws -> CommandResult {
        try corruptFuzz(
            [
                "crashpoints", "--target", "\(product(migration)) @@", "--data", Self.data, "--check", "\(product("notes-migrate-check")) @@",
                "--reports", reports.path,
            ] + extra)
    }

    @Test("the naive migration tears, loses, duplicates, leaves files and holds its lock; --at replays one crash point")
    func naive() throws {
        let reports = try temporaryFolder("crashpoints")
        defer { try? FileManager.default.removeItem(at: reports) }
        let before = try Data(contentsOf: URL(fileURLWithPath: Self.data).appendingPathComponent("notes-v1.txt"))
        let result = try crashPoints("notes-migrate-naive", reports: reports)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)
        // The data folder itself is never touched.
        #expect(try Data(contentsOf: URL(fileURLWithPath: Self.data).appendingPathComponent("notes-v1.txt")) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: Self.data) == ["notes-v1.txt"])

        let target = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        #expect(kinds(of: target) == ["torn-state", "lost-data", "duplicate-data", "stray-file", "held-lock"], "\(kinds(of: target))")
        let signatures = findings(of: target).compactMap { $0["signature"] as? String }
        #expect(signatures.contains("a lock on .lock is still held when the program exits"), "\(signatures)")
        #expect(signatures.contains("killed: after the re-run, records duplicated"), "\(signatures)")
        #expect(signatures.contains { $0.hasPrefix("power cut: ") }, "power-cut states find what kills do not: \(signatures)")

        // A finding's folder: the crash state's files and the operations up to it.
        let duplicate = try #require(findings(of: target).first { $0["kind"] as? String == "duplicate-data" })
        let folder = URL(fileURLWithPath: try #require(duplicate["reproducer"] as? String)).deletingLastPathComponent()
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("state/notes.tsv").path))
        let trace = try String(contentsOf: folder.appendingPathComponent("trace.txt"), encoding: .utf8)
        #expect(trace.contains("rename") == false && trace.contains("write notes.tsv"), "\(trace)")

        // Its replay command checks that one crash point again.
        let replay = try #require(duplicate["replay"] as? String)
        let point = try #require(replay.split(separator: " ").last.flatMap { Int($0) }, "\(replay)")
        let again = try crashPoints("notes-migrate-naive", reports: reports, extra: ["--at", "\(point)"])
        #expect(again.status == 1)
        #expect(again.stdout.contains("duplicate-data: killed: after the re-run, records duplicated"), "\(again.stdout)")

        // The held lock is seen in the uninterrupted run: its replay is the command alone (no
        // file appended, which crashpoints would refuse as an unexpected argument).
        let held = try #require(findings(of: target).first { $0["kind"] as? String == "held-lock" })
        let heldReplay = try #require(held["replay"] as? String)
        #expect(heldReplay.hasSuffix("@@'"), "\(heldReplay)")
    }

    @Test("the hardened migration (temporary file, fsync, rename, folder fsync, idempotent, unlocks) survives every state")
    func hardened() throws {
        let reports = try temporaryFolder("crashpoints-hardened")
        defer { try? FileManager.default.removeItem(at: reports) }
        let result = try crashPoints("notes-migrate-hardened", reports: reports)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let target = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        #expect((target["executions"] as? Int ?? 0) > 10)
    }

    static let saves = packageRoot.appendingPathComponent("Corpus/saves/notes-app").path

    func faults(_ save: String, reports: URL, check: String? = nil, extra: [String] = []) throws -> CommandResult {
        try corruptFuzz(
            [
                "crashpoints", "--target", "\(product(save)) @@", "--data", Self.saves, "--check", check ?? "\(product("notes-migrate-check")) @@",
                "--faults", "all", "--reports", reports.path,
            ] + extra)
    }

    @Test(
        "I/O faults: the naive save reports success it did not have (unreported-io-error), tears the store under ENOSPC and loses it after a failed fsync; the hardened save has no finding under any fault at any operation; a fault finding replays"
    )
    func ioFaults() throws {
        let reports = try temporaryFolder("faults")
        defer { try? FileManager.default.removeItem(at: reports) }
        let naive = try faults("notes-save-naive", reports: reports)
        #expect(naive.status == 1, "\(naive.stdout)\(naive.stderr)")
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)
        let target = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        let signatures = findings(of: target).map { "\($0["kind"] as? String ?? ""): \($0["signature"] as? String ?? "")" }
        #expect(signatures.contains("unreported-io-error: an error at write of notes.tsv: success reported, but the save is not on disk"), "\(signatures)")
        #expect(signatures.contains("torn-state: an error at write of notes.tsv: the data does not load after a reported success"), "\(signatures)")
        #expect(signatures.contains("lost-data: an error at fsync of notes.tsv: the data does not load after a reported success"), "\(signatures)")
        #expect(signatures.contains("torn-state: a short write at write of notes.tsv: the data does not load after a reported success"), "\(signatures)")
        // ENOSPC, EDQUOT and EIO at one write are one finding, each counted as a detail.
        let ignored = try #require(findings(of: target).first { ($0["signature"] as? String)?.hasPrefix("an error at write of notes.tsv: success") == true })
        let details = (ignored["variants"] as? [[String: Any]] ?? []).compactMap { $0["detail"] as? String }
        #expect(["ENOSPC", "EDQUOT", "EIO"].allSatisfy { word in details.contains { $0.hasPrefix(word) } }, "\(details)")

        // The replay: that fault at that operation again.
        let replay = try #require(ignored["replay"] as? String)
        let words = replay.split(separator: " ").map(String.init)
        let at = try #require(words.firstIndex(of: "--fault-at").map { words[$0 + 1] }, "\(replay)")
        let fault = try #require(words.firstIndex(of: "--faults").map { words[$0 + 1] }, "\(replay)")
        let again = try corruptFuzz(
            [
                "crashpoints", "--target", "\(product("notes-save-naive")) @@", "--data", Self.saves, "--check", "\(product("notes-migrate-check")) @@",
                "--faults", fault, "--fault-at", at, "--reports", reports.path,
            ])
        #expect(again.status == 1)
        #expect(again.stdout.contains("unreported-io-error: an error at write of notes.tsv: success reported"), "\(again.stdout)")

        let hardened = try faults("notes-save-hardened", reports: reports)
        #expect(hardened.status == 0, "\(hardened.stdout)\(hardened.stderr)")
        let checked = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        #expect((checked["executions"] as? Int ?? 0) > 50)

        // A check that cannot tell "unreadable" from "corrupt": `cat` says nothing of a reason.
        let cat = try faults("notes-save-hardened", reports: reports, check: "cat @@/notes.tsv")
        #expect(cat.status == 1)
        #expect(cat.stdout.contains("wrong-reason: the check, an error at read of notes.tsv: expected io-error, got no reason"), "\(cat.stdout)")
    }

    @Test("a shell script's writes, renames and missing fsyncs: the recorder sees sh and mv, the model cuts the power")
    func shellScript() throws {
        let reports = try temporaryFolder("crashpoints-sh")
        defer { try? FileManager.default.removeItem(at: reports) }
        let data = try temporaryFolder("crashpoints-sh-data")
        defer { try? FileManager.default.removeItem(at: data) }
        try Data("old\n".utf8).write(to: data.appendingPathComponent("value"))
        // Write a temporary file and move it over the old one, never syncing: after a power
        // cut the new name can hold no bytes.
        let result = try corruptFuzz([
            "crashpoints", "--target", #"/bin/sh -c 'echo new > "$1/value.tmp" && mv "$1/value.tmp" "$1/value"' sh @@"#, "--data", data.path,
            "--check", #"/bin/sh -c 'test -s "$1/value" || { echo "reason: empty" >&2; exit 1; }; cat "$1/value"' sh @@"#,
            "--reports", reports.path,
        ])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("torn-state: power cut: names persisted before their data: the data does not load: empty"), "\(result.stdout)")
        #expect(!result.stdout.contains("killed:"), "a kill leaves the old or the new file: \(result.stdout)")
    }

    @Test("a daemon the program starts in a session of its own (setsid) is killed after each run, as run kills it, and counted")
    func daemonsAreReaped() throws {
        let reports = try temporaryFolder("crashpoints-daemon")
        defer { try? FileManager.default.removeItem(at: reports) }
        let data = try temporaryFolder("crashpoints-daemon-data")
        defer { try? FileManager.default.removeItem(at: data) }
        let side = try temporaryFolder("crashpoints-daemon-side")
        defer { try? FileManager.default.removeItem(at: side) }
        try Data("old\n".utf8).write(to: data.appendingPathComponent("value"))
        // The program starts a daemon that writes forever outside the data folder, waits until
        // it is up (its pid written), then saves.
        let program = side.appendingPathComponent("save-with-daemon.sh")
        try #"""
        setsid sh -c 'echo $$ >> "$0/pids"; touch "$0/up-$1"; while :; do echo x >> "$0/log"; sleep 0.05; done' "$2" "$$" </dev/null >/dev/null 2>&1 &
        while [ ! -e "$2/up-$$" ]; do sleep 0.01; done
        echo new > "$1/value"
        """#.write(to: program, atomically: true, encoding: .utf8)
        let pidsFile = side.appendingPathComponent("pids")
        func daemons() -> [Int32] {
            ((try? String(contentsOf: pidsFile, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
        }
        // Whatever the result, none is left behind by this test.
        defer { for pid in daemons() { kill(pid, SIGKILL) } }
        // Started with posix_spawn and waited for with waitpid, its output in a file: a daemon
        // left running holds the descriptors corrupt-fuzz inherited (Foundation's Process learns
        // of a child's exit from a socket the child inherits), and would keep this test waiting
        // instead of failing it.
        let output = side.appendingPathComponent("output.txt")
        let arguments = [
            product("corrupt-fuzz"), "crashpoints", "--target", "/bin/sh \(program.path) @@ \(side.path)", "--data", data.path,
            "--check", #"/bin/sh -c 'cat "$1/value"' sh @@"#, "--reports", reports.path,
        ]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for word in argv { free(word) } }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, arguments[0], &actions, nil, argv, environ) == 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let printed = try String(contentsOf: output, encoding: .utf8)
        #expect(status == 0, "exit status \(status >> 8): \(printed)")
        let started = daemons()
        #expect(started.count >= 2, "the clean run and a killed one each start one: \(started)")
        // Gone (or a zombie about to be reaped), not re-parented to init and still writing.
        let running = started.filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
            let state = stat.split(separator: ")").last?.split(separator: " ").first
            return state != "Z" && state != "X"
        }
        #expect(running.isEmpty, "daemons still running after crashpoints returned: \(running)")
        let target = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        #expect(target["escapedProcessesKilled"] as? Int == started.count, "\(target["escapedProcessesKilled"] ?? "none"), \(started.count) started")
    }

    @Test("bad input: no folder, a program that writes nothing there, a program that fails on the data")
    func badInput() throws {
        let missing = try corruptFuzz(["crashpoints", "--target", "/bin/true @@", "--data", "/nonexistent/folder"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("--data must be a folder"), "\(missing.stderr)")
        let reports = try temporaryFolder("crashpoints-bad")
        defer { try? FileManager.default.removeItem(at: reports) }
        let nothing = try corruptFuzz(["crashpoints", "--target", "/bin/true @@", "--data", Self.data, "--reports", reports.path])
        #expect(nothing.status == 2)
        #expect(nothing.stderr.contains("the recorder saw no file operation"), "\(nothing.stderr)")
        let failing = try corruptFuzz(["crashpoints", "--target", "/bin/false @@", "--data", Self.data, "--reports", reports.path])
        #expect(failing.status == 2)
        #expect(failing.stderr.contains("the program fails on the unmodified data"), "\(failing.stderr)")
    }
}
