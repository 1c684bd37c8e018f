import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation
import Testing

@Suite("Process executor: classifying real processes")
struct ProcessExecutorTests {
    @Test("exit 0 is acceptance and stdout is the digest")
    func accepted() throws {
        let execution = try runFixture("accept @@")
        #expect(execution.outcome == .accepted(digest: "digest: ok\n"))
    }

    @Test("a first stderr line 'reason: WORD' names the rejection's reason")
    func reasonLine() throws {
        let execution = try runFixture("reject unsupported-version @@")
        #expect(execution.outcome == .rejected(reason: "unsupported-version", exitCode: 1, message: "rejected on purpose"))
    }

    @Test("another exit code without a reason line is a rejection without a reason")
    func exitCode() throws {
        let execution = try runFixture("exit 3")
        #expect(execution.outcome == .rejected(reason: nil, exitCode: 3, message: "exiting on purpose"))
    }

    @Test("death by SIGSEGV is a crash")
    func segfault() throws {
        let execution = try runFixture("segv")
        guard case .crashed(let signal, _, _) = execution.outcome else {
            Issue.record("expected a crash, got \(execution.outcome)")
            return
        }
        #expect(signal == SIGSEGV)
    }

    @Test("abort() is a crash with SIGABRT")
    func abortCrash() throws {
        let execution = try runFixture("abort")
        guard case .crashed(let signal, _, _) = execution.outcome else {
            Issue.record("expected a crash, got \(execution.outcome)")
            return
        }
        #expect(signal == SIGABRT)
    }

    @Test("Swift's fatalError is a crash with its message and top frames")
    func swiftFatalError() throws {
        let execution = try runFixture("fatal")
        guard case .crashed(let signal, let frames, let message) = execution.outcome else {
            Issue.record("expected a crash, got \(execution.outcome)")
            return
        }
        #expect(signal == SIGILL || signal == SIGTRAP)
        #expect(message == "fixture fatal error")
        #expect(!frames.isEmpty, "no frames in: \(String(decoding: execution.stderr, as: UTF8.self))")
    }

    @Test("an infinite loop is a hang, stopped at the deadline")
    func infiniteLoop() throws {
        // Only the deadline ends a loop (the run returns): the outcome says it was that one.
        let execution = try runFixture("loop", limits: .init(timeoutMilliseconds: 300))
        #expect(execution.outcome == .hung(milliseconds: 300))
    }

    @Test("a target ignoring SIGTERM with a child holding stdout is killed with its whole group")
    func ignoresTermAndForks() throws {
        let marker = "marker-\(UUID().uuidString)"
        let execution = try runFixture("ignore-term-child \(marker)", limits: .init(timeoutMilliseconds: 300))
        #expect(execution.outcome == .hung(milliseconds: 300))
        #expect(processes(containing: marker).isEmpty, "processes left behind")
    }

    @Test("a child left behind after a normal exit neither stalls the run nor survives it")
    func leftoverChild() throws {
        let marker = "marker-\(UUID().uuidString)"
        let execution = try runFixture("leave-child \(marker)", limits: .init(timeoutMilliseconds: 5000))
        // A run that waited for the child (its end of stdout) would have ended at the deadline:
        // a hang. The run ends when the target does, and the child with it.
        #expect(execution.outcome == .accepted(digest: "parent done\n"))
        #expect(processes(containing: marker).isEmpty, "processes left behind")
    }

    @Test("100 MB on stdout is capped, not kept")
    func flood() throws {
        let execution = try runFixture("flood", limits: .init(timeoutMilliseconds: 10_000, outputCap: 4096))
        guard case .accepted = execution.outcome else {
            Issue.record("expected acceptance, got \(execution.outcome)")
            return
        }
        #expect(execution.stdout.count == 4096)
    }

    @Test("going over the memory limit is oom")
    func memoryLimit() throws {
        let execution = try runFixture("alloc 2048", limits: .init(timeoutMilliseconds: 10_000, memoryLimit: 256 << 20))
        guard case .outOfMemory = execution.outcome else {
            Issue.record("expected oom, got \(execution.outcome)")
            return
        }
    }

    @Test("without @@ the input goes to stdin")
    func stdinInput() throws {
        let execution = try runFixture("stdin", bytes: Array(repeating: 7, count: 1234))
        #expect(execution.outcome == .accepted(digest: "read 1234 bytes\n"))
    }

    @Test("a missing file is passed as a path that does not exist")
    func missingFile() throws {
        let execution = try runFixture("file @@", bytes: nil)
        #expect(execution.outcome == .rejected(reason: "not-found", exitCode: 1, message: nil))
    }

    @Test("@@ inside a word is replaced too")
    func atAtInsideWord() throws {
        let execution = try runFixture("file --input=@@", bytes: Array("OK data".utf8))
        // The fixture reads args[2] as a path: "--input=/tmp/..." does not exist.
        #expect(execution.outcome == .rejected(reason: "not-found", exitCode: 1, message: nil))
        let command = try TargetCommand("/bin/echo --input=@@ -x")
        #expect(command.arguments(forInputAt: "/p") == [command.executablePath, "--input=/p", "-x"])
    }

    @Test("a target that does not exist or is not executable is a clear error")
    func unusableTargets() throws {
        #expect(throws: CorruptFuzzError.self) { try TargetCommand("/nonexistent/loader @@") }
        #expect(throws: CorruptFuzzError.self) { try TargetCommand("no-such-program-anywhere @@") }
        let plainFile = FileManager.default.temporaryDirectory.appendingPathComponent("not-executable-\(UUID().uuidString)")
        try Data("data".utf8).write(to: plainFile)
        defer { try? FileManager.default.removeItem(at: plainFile) }
        #expect(throws: CorruptFuzzError.self) { try TargetCommand("\(plainFile.path) @@") }
        #expect(throws: CorruptFuzzError.self) { try TargetCommand("/tmp @@") }
        #expect(throws: CorruptFuzzError.self) { try TargetCommand("'unterminated @@") }
        do {
            _ = try TargetCommand("/nonexistent/loader @@")
        } catch {
            #expect(error.message.contains("not found"))
        }
    }
}

@Suite("Shell words")
struct ShellWordsTests {
    @Test(
        "quoting works as a shell user expects",
        arguments: [
            ("a b  c", ["a", "b", "c"]),
            ("python3 -c 'import sys; print(sys.argv[1])' @@", ["python3", "-c", "import sys; print(sys.argv[1])", "@@"]),
            (#"say "hello \"you\"" it\'s"#, ["say", #"hello "you""#, "it's"]),
            (#"a\ b "" ''"#, ["a b", "", ""]),
            ("x'y'\"z\"", ["xyz"]),
        ])
    func split(line: String, words: [String]) throws {
        #expect(try ShellWords.split(line) == words)
    }

    @Test("quote is the inverse of split")
    func roundTrip() throws {
        for word in ["plain", "with space", "it's", "", "$HOME", "a\"b"] {
            #expect(try ShellWords.split(ShellWords.quote(word)) == [word])
        }
    }
}
