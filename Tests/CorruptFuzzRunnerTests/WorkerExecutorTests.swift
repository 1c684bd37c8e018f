import CorruptFuzzCore
@testable import CorruptFuzzRunner
import CorruptFuzzWorker
import Foundation
import Testing

@Suite("Persistent workers: the protocol, crashes and hangs, stability, commands that are not workers")
struct WorkerExecutorTests {
    func worker(_ mode: String, timeout: Int = 2000) throws -> WorkerExecutor {
        try WorkerExecutor(
            path: BuiltProducts.path("WorkerFixture"), arguments: [mode], environment: [:],
            limits: .init(timeoutMilliseconds: timeout), slots: 1)
    }

    func run(_ executor: WorkerExecutor, _ text: String?) throws -> Outcome {
        try executor.execute(TestInput(bytes: text.map { Array($0.utf8) }, seedName: "test"), slot: 0).outcome
    }

    @Test("accepts, rejects with the reason, reports a missing file as not-found")
    func answers() throws {
        let executor = try worker("strict")
        #expect(try run(executor, "OK fine") == .accepted(digest: "OK fine"))
        #expect(try run(executor, "nope") == .rejected(reason: "corrupt", exitCode: 1, message: "LoadError(reason: \"corrupt\", message: \"no OK\")"))
        #expect(
            try run(executor, "OK2")
                == .rejected(reason: "unsupported-version", exitCode: 1, message: "LoadError(reason: \"unsupported-version\", message: \"version 2\")"))
        #expect(try run(executor, nil) == .rejected(reason: "not-found", exitCode: 1, message: "the file does not exist"))
    }

    @Test("a worker is replaced after its number of inputs, so what it accumulates does not end it")
    func replacedAfterItsInputs() throws {
        let aging = { (inputsPerWorker: Int) throws -> WorkerExecutor in
            try WorkerExecutor(
                path: BuiltProducts.path("WorkerFixture"), arguments: ["aging"], environment: [:],
                limits: .init(timeoutMilliseconds: 2000), slots: 1, inputsPerWorker: inputsPerWorker)
        }
        // Replaced every 40 inputs, the worker never reaches its 50th: 200 inputs, all accepted.
        let replaced = try aging(40)
        for index in 0..<200 {
            #expect(try run(replaced, "input \(index)") == .accepted(digest: "\(("input \(index)").utf8.count)"), "input \(index)")
        }
        // Kept, it runs out of memory on its 50th input, whatever that input is.
        let kept = try aging(1000)
        var outcomes: [Outcome] = []
        for index in 0..<50 { outcomes.append(try run(kept, "input \(index)")) }
        guard case .outOfMemory = outcomes.last else {
            Issue.record("the fixture did not run out of memory at its 50th input: \(String(describing: outcomes.last))")
            return
        }
        #expect(outcomes.dropLast().allSatisfy { if case .accepted = $0 { true } else { false } })
    }

    @Test("a crash is reported against the input in flight, and the next input gets a new worker")
    func crashThenGoOn() throws {
        let executor = try worker("strict")
        #expect(try run(executor, "OK before") == .accepted(digest: "OK before"))
        guard case .crashed(let signal, _, let message) = try run(executor, "OK\u{0}crash") else {
            Issue.record("the zero byte did not crash the worker")
            return
        }
        #expect(signal == SIGILL || signal == SIGTRAP)
        #expect(message?.contains("a zero byte at 2") == true, "\(message ?? "no message")")
        #expect(try run(executor, "OK after") == .accepted(digest: "OK after"))
    }

    #if os(Linux)
        @Test("a crash costs a fork: the worker's fork server outlives it, and a site's full report is made once, for all its crashes")
        func knownCrashSiteCostsAFork() throws {
            let executor = try worker("strict")
            #expect(try run(executor, "OK before") == .accepted(digest: "OK before"))
            #expect(executor.workersStarted == 1)
            // The first crash at the site: its frames named in corrupt-fuzz (the symbolizer's
            // source line and the runtime's message), with no other run.
            let first = try run(executor, "OK\u{0}crash")
            guard case .crashed(let signal, let frames, let message) = first else {
                Issue.record("the zero byte did not crash the worker: \(first)")
                return
            }
            #expect(signal == SIGILL || signal == SIGTRAP)
            #expect(message?.contains("a zero byte at 2") == true, "\(message ?? "no message")")
            #expect(frames.first?.contains("main.swift:") == true, "\(frames)")
            #expect(executor.workersStarted == 1)
            // The process that lived through a new site's crash is not trusted further: a new worker.
            #expect(try run(executor, "OK after") == .accepted(digest: "OK after"))
            #expect(executor.workersStarted == 2)
            // Later crashes at the site: the same outcome, and no worker started (the fork server
            // forks the next child), however many there are.
            for index in 0..<20 {
                #expect(try run(executor, "OK\u{0}again \(index)") == first)
                #expect(try run(executor, "OK then \(index)") == .accepted(digest: "OK then \(index)"))
            }
            #expect(executor.workersStarted == 2)
            // Turned off, every crash starts a new worker: the same outcome.
            let plain = try WorkerExecutor(
                path: BuiltProducts.path("WorkerFixture"), arguments: ["strict"], environment: [:],
                limits: .init(timeoutMilliseconds: 2000), slots: 1, forkServer: false)
            #expect(try run(plain, "OK\u{0}crash") == first)
            #expect(try run(plain, "OK after") == .accepted(digest: "OK after"))
            #expect(plain.workersStarted == 2)
        }

        @Test(
            "a fork server's child lives through a crash at a known site (a trap, an abort, a memory fault): the same outcome, the same process serves on, what it shows after is marked, and a crash it shows that a fresh worker does not is not one",
            arguments: ["trap", "abort", "fault"]
        )
        func crashLivedThrough(crashBy kind: String) throws {
            func scarred(_ environment: [String: String]) throws -> WorkerExecutor {
                try WorkerExecutor(
                    path: BuiltProducts.path("WorkerFixture"), arguments: ["scarred"],
                    environment: environment.merging(["WORKER_FIXTURE_CRASH_BY": kind]) { $1 },
                    limits: .init(timeoutMilliseconds: 2000), slots: 1)
            }
            func execute(_ executor: WorkerExecutor, _ text: String) throws -> Execution {
                try executor.execute(TestInput(bytes: Array(text.utf8), seedName: "test"), slot: 0)
            }
            /// The site's first crash (its full report from a fresh worker, then a new worker,
            /// whose first input it serves itself), then a trap at the site in a forked child, with
            /// the child's process id before and after it.
            func crashInAChild(_ executor: WorkerExecutor) throws -> (first: Execution, again: Execution, before: Outcome, after: Execution) {
                _ = try execute(executor, "first")
                let first = try execute(executor, "zero\u{0}")
                _ = try execute(executor, "warm")
                let before = try execute(executor, "child").outcome
                let again = try execute(executor, "zero again\u{0}")
                return (first, again, before, try execute(executor, "child again"))
            }
            let executor = try scarred([:])
            let lived = try crashInAChild(executor)
            guard case .crashed(let signal, _, let message) = lived.first.outcome else {
                Issue.record("the zero byte did not crash the worker: \(lived.first.outcome)")
                return
            }
            switch kind {
            case "abort": #expect(signal == SIGABRT)
            case "fault": #expect(signal == SIGSEGV)
            default:
                #expect(signal == SIGILL || signal == SIGTRAP)
                #expect(message?.contains("a zero byte at 4") == true, "\(message ?? "no message")")
            }
            #expect(lived.again.outcome == lived.first.outcome)
            #expect(!lived.again.afterRecoveredTrap, "the child that trapped had not lived through one before")
            guard case .accepted(let child) = lived.before else {
                Issue.record("the child did not accept: \(lived.before)")
                return
            }
            #expect(lived.after.outcome == .accepted(digest: child), "the same process serves after the trap")
            #expect(lived.after.afterRecoveredTrap)
            // What the trap left (the fixture's mark) traps it at another site; a fresh worker
            // accepts the input: the input's outcome is the fresh worker's.
            let marked = try execute(executor, "M")
            guard case .accepted = marked.outcome else {
                Issue.record("a crash only what the trap left made was reported: \(marked.outcome)")
                return
            }
            #expect(marked.afterRecoveredTrap)
            // A new worker serves next: no mark, no trap.
            let fresh = try execute(executor, "M again")
            #expect(!fresh.afterRecoveredTrap)
            if case .accepted = fresh.outcome {} else { Issue.record("a new worker did not accept: \(fresh.outcome)") }

            // Turned off (the user's environment), the child dies of the trap and the next serves.
            let off = try scarred([WorkerProtocol.recoverVariable: "0"])
            let died = try crashInAChild(off)
            #expect(died.again.outcome == lived.first.outcome)
            guard case .accepted(let next) = died.after.outcome else {
                Issue.record("the next child did not accept: \(died.after.outcome)")
                return
            }
            #expect(died.before != .accepted(digest: next), "another child serves after the trap")
            #expect(!died.after.afterRecoveredTrap)
        }

        @Test(
            "a child that lived through a trap while it held a lock waits for it on its next input: the input runs again in a fresh worker at the same deadline, and what it does there is its outcome"
        )
        func lockLeftByATrap() throws {
            let executor = try WorkerExecutor(
                path: BuiltProducts.path("WorkerFixture"), arguments: ["locking"], environment: [:],
                limits: .init(timeoutMilliseconds: 300), slots: 1)
            func execute(_ text: String) throws -> Execution { try executor.execute(TestInput(bytes: Array(text.utf8), seedName: "test"), slot: 0) }
            // The site's first crash (its full report from a fresh worker), a new worker's first
            // input (served before it forks), then a trap in a forked child, which lives through it.
            for text in ["OK first", "zero\u{0}", "OK warm", "OK child"] { _ = try execute(text) }
            let trapped = try execute("zero again\u{0}")
            guard case .crashed = trapped.outcome else {
                Issue.record("the zero byte did not crash the worker: \(trapped.outcome)")
                return
            }
            let workers = executor.workersStarted
            let started = ContinuousClock.now
            let stuck = try execute("OK after")
            // It waited its deadline for the lock in the child, then ran in a new worker.
            #expect(ContinuousClock.now - started >= .milliseconds(300), "the child did not wait for the lock its trap left held")
            #expect(executor.workersStarted == workers + 1)
            #expect(stuck.outcome == .accepted(digest: "OK after"))
            #expect(!stuck.afterRecoveredTrap)
            #expect(try execute("OK then").outcome == .accepted(digest: "OK then"))
        }

        @Test(
            "a child lives through a double free (glibc's check aborts): the allocator still serves it (a single-threaded process takes no lock), and the same process serves on, marked"
        )
        func doubleFreeLivedThrough() throws {
            let executor = try WorkerExecutor(
                path: BuiltProducts.path("WorkerFixture"), arguments: ["scarred"], environment: ["WORKER_FIXTURE_CRASH_BY": "double-free"],
                limits: .init(timeoutMilliseconds: 5000), slots: 1)
            func execute(_ text: String) throws -> Execution { try executor.execute(TestInput(bytes: Array(text.utf8), seedName: "test"), slot: 0) }
            // The site's first crash (its full report from a fresh worker), a new worker's first
            // input (served before it forks), then the double free in a forked child.
            _ = try execute("first")
            let first = try execute("zero\u{0}")
            guard case .crashed(SIGABRT, _, _) = first.outcome else {
                Issue.record("the double free did not abort: \(first.outcome)")
                return
            }
            _ = try execute("warm")
            let before = try execute("child").outcome
            let again = try execute("zero again\u{0}")
            var after: [Execution] = []
            for round in 0..<20 { after.append(try execute("child \(round)")) }
            // An input that waited for the allocator's lock would have hung at the 5 s deadline:
            // every outcome is the one before the double free.
            #expect(again.outcome == first.outcome)
            #expect(after.allSatisfy { $0.outcome == before && $0.afterRecoveredTrap }, "\(after.map(\.outcome))")
        }

        /// Runs the strict fixture once on an input that crashes it, with the crash reporter and
        /// `CORRUPT_FUZZ_DYING` naming a pipe and `server`: what the reporter wrote on the pipe, and
        /// the child's pid and wait status.
        func dyingNotice(server: (pid_t) -> pid_t) throws -> (notice: [UInt8], pid: pid_t, status: Int32) {
            let input = FileManager.default.temporaryDirectory.appendingPathComponent("dying-\(UUID().uuidString)")
            try Data("OK\u{0}crash".utf8).write(to: input)
            defer { try? FileManager.default.removeItem(at: input) }
            var fds: [Int32] = [0, 0]
            try #require(pipe(&fds) == 0)
            defer { close(fds[0]) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, fds[1], 3)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let reporter = try PreloadLibrary.crashHandler.path()
            let environment: [String] = [
                "WORKER_FIXTURE_MODE=strict", "LD_PRELOAD=\(reporter)", "CORRUPT_FUZZ_CRASH_FRAMES=1", "SWIFT_BACKTRACE=enable=no",
                "CORRUPT_FUZZ_DYING=3:\(server(getpid()))",
            ]
            let program = BuiltProducts.path("WorkerFixture")
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup(program), strdup(input.path), nil]
            let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var pid: pid_t = 0
            try #require(posix_spawn(&pid, program, &actions, nil, argv, envp) == 0)
            close(fds[1])
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            var notice: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64)
            while case let n = read(fds[0], &chunk, chunk.count), n > 0 { notice += chunk[0..<n] }
            return (notice, pid, status)
        }

        @Test(
            "a dying child's crash reporter tells its fork server (pid, signal, peak memory) once its report is out; a process the server did not fork says nothing"
        )
        func crashReporterTellsTheServer() throws {
            // The notice: {int pid; int signal; long peak kB}, as corrupt_fuzz_worker.c reads it.
            let told = try dyingNotice(server: { $0 })
            try #require(told.notice.count == 16, "the reporter wrote \(told.notice.count) bytes")
            let fields = told.notice.withUnsafeBytes {
                ($0.load(as: Int32.self), $0.load(fromByteOffset: 4, as: Int32.self), $0.load(fromByteOffset: 8, as: Int.self))
            }
            #expect(fields.0 == told.pid)
            #expect(told.status & 0x7F != 0, "the fixture did not die of a signal: \(told.status)")
            #expect(fields.1 == told.status & 0x7F, "the notice names the signal the child died of")
            #expect(fields.2 > 1024, "a Swift program's peak memory is more than a megabyte: \(fields.2) kB")
            // A program run by a fork server's child inherits the variable; its parent is not the
            // server, so it says nothing on a descriptor that is not the server's.
            let other = try dyingNotice(server: { $0 + 1 })
            #expect(other.notice.isEmpty)
            #expect(other.status & 0x7F == told.status & 0x7F)
        }

        @Test("a process that is ending (a crashed child still being torn down) is told apart from one that serves")
        func endingProcesses() throws {
            #expect(!OpenFiles.isExiting(getpid()))
            var pid: pid_t = 0
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
            defer { argv.forEach { free($0) } }
            try #require(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
            // Not reaped yet: a zombie once it has exited.
            var waited = 0
            while !OpenFiles.isExiting(pid), waited < 500 {
                usleep(10_000)
                waited += 1
            }
            #expect(OpenFiles.isExiting(pid), "an exited, unreaped child is ending")
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            #expect(OpenFiles.isExiting(pid), "a reaped child is gone")
        }

        @Test(
            "a Swift program's abort() in two functions is two findings, each at its own line (no bare SIGABRT), and the same signature in a worker, its fork server's child, a plain worker and a process per input"
        )
        func swiftAbortsHaveTheirOwnSites() throws {
            let fixture = BuiltProducts.path("WorkerFixture")
            let served = try worker("two-aborts")
            let plain = try WorkerExecutor(
                path: fixture, arguments: ["two-aborts"], environment: [:], limits: .init(timeoutMilliseconds: 5000), slots: 1, forkServer: false)
            let single = try ProcessExecutor(
                command: try TargetCommand("\(fixture) @@"), limits: .init(timeoutMilliseconds: 5000), environment: ["WORKER_FIXTURE_MODE": "two-aborts"])
            func signature(_ executor: any Executor, _ text: String) throws -> String? {
                let input = TestInput(bytes: Array(text.utf8), seedName: "test")
                return Judge().judge(input, execution: try executor.execute(input, slot: 0), label: nil)?.signature
            }
            let header = try #require(try signature(served, "A header"))
            let body = try #require(try signature(served, "B body"))
            #expect(header.hasPrefix("SIGABRT at main.swift:"), "\(header)")
            #expect(body.hasPrefix("SIGABRT at main.swift:"), "\(body)")
            #expect(header != body)
            for (text, expected) in [("A again", header), ("B again", body), ("A header", header)] {
                #expect(try signature(served, text) == expected, "the worker's child, again: \(text)")
                #expect(try signature(plain, text) == expected, "a plain worker: \(text)")
                #expect(try signature(single, text) == expected, "a process per input: \(text)")
            }
        }

        @Test("a worker running more than one thread is no fork server: it dies on a crash and is started again, as before")
        func threadedWorkerServesItself() throws {
            let executor = try worker("threaded")
            #expect(try run(executor, "OK before") == .accepted(digest: "OK before"))
            guard case .crashed(_, _, let message) = try run(executor, "OK\u{0}crash") else {
                Issue.record("the zero byte did not crash the worker")
                return
            }
            #expect(message?.contains("a zero byte at 2") == true, "\(message ?? "no message")")
            #expect(try run(executor, "OK after") == .accepted(digest: "OK after"))
            for index in 0..<3 { _ = try run(executor, "OK\u{0}again \(index)") }
            #expect(try run(executor, "OK end") == .accepted(digest: "OK end"))
            // One start, then one after each crash (no run for a report: the frames are named in corrupt-fuzz).
            #expect(executor.workersStarted == 5)
        }
    #endif

    @Test("a hang is killed at the deadline and the next input gets a new worker")
    func hangThenGoOn() throws {
        let executor = try worker("strict", timeout: 300)
        #expect(try run(executor, "HANG") == .hung(milliseconds: 300))
        #expect(try run(executor, "OK after") == .accepted(digest: "OK after"))
    }

    @Test("a worker that keeps its input open and locked after it answers is a held-lock finding; one that closes it is not")
    func heldFiles() throws {
        let holds = try worker("holds")
        let input = TestInput(bytes: Array("OK".utf8), seedName: "test")
        let execution = try holds.execute(input, slot: 0)
        let held = try #require(execution.held, "the first input is looked at")
        #expect(held.count == 1 && held[0].hasSuffix("/input-0 (locked)"), "\(held)")
        let finding = try #require(Oracle().judge(input, execution: execution, verdict: nil))
        #expect(finding.kind == .heldLock)
        #expect(finding.signature == "a lock on the input file is still held after the load")

        let strict = try worker("strict")
        #expect(try strict.execute(TestInput(bytes: Array("OK".utf8), seedName: "test"), slot: 0).held == nil)
        // The fork server's children share its descriptors: one entry per file, locked when the
        // lock shows under any of them.
        #expect(
            WorkerExecutor.oneEntryPerFile(["/s/input-0 (locked)", "/s/input-0", "/s/input-0", "/s/other"]) == ["/s/input-0 (locked)", "/s/other"])
    }

    @Test("held files are looked at on the first input, then once at least 256 inputs and 50 ms have passed since the last look")
    func heldCheckSpacing() {
        let start = ContinuousClock.now
        #expect(WorkerExecutor.heldCheckDue(next: 1, last: nil))
        let last = (run: 1, at: start)
        // Too few inputs since: not due, and the clock is not read.
        #expect(
            !WorkerExecutor.heldCheckDue(
                next: 256, last: last,
                now: {
                    Issue.record("read the clock"); return start
                }))
        // Enough inputs, too soon (a loader that runs 256 inputs in a millisecond).
        #expect(!WorkerExecutor.heldCheckDue(next: 257, last: last, now: { start + .milliseconds(1) }))
        #expect(!WorkerExecutor.heldCheckDue(next: 5_000, last: last, now: { start + .milliseconds(49) }))
        #expect(WorkerExecutor.heldCheckDue(next: 5_000, last: last, now: { start + .milliseconds(50) }))
        // A slow loader: every 256 inputs, however long they took.
        #expect(WorkerExecutor.heldCheckDue(next: 257, last: last, now: { start + .seconds(30) }))
        #expect(!WorkerExecutor.heldCheckDue(next: 200, last: last, now: { start + .seconds(30) }))
    }

    @Test(
        "a loader that takes bytes gets an input sent whole, whatever its bytes (newlines, #, every value, none), a large one and a missing file as before; a loader of paths gets files"
    )
    func inputsSentWhole() throws {
        func expected(_ bytes: [UInt8]) -> Outcome {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return .accepted(digest: "\(bytes.count) \(hash)")
        }
        let everyValue = (0..<4).flatMap { _ in (0...255).map(UInt8.init) }
        let inputs: [[UInt8]] = [
            Array("#12\n#\n\n".utf8), everyValue, [], Array("\n".utf8), [UInt8](repeating: 0x23, count: WorkerProtocol.maxSentBytes),
            [UInt8](repeating: 0x0A, count: WorkerProtocol.maxSentBytes + 1), Array("after a file".utf8),
        ]
        for (mode, whole) in [("digest", 6), ("digest-paths", 0)] {
            let executor = try worker(mode)
            for bytes in inputs {
                let outcome = try executor.execute(TestInput(bytes: bytes, seedName: "s"), slot: 0).outcome
                #expect(outcome == expected(bytes), "\(mode): \(bytes.count) bytes")
            }
            let missing = try executor.execute(TestInput(bytes: nil, seedName: "s"), slot: 0).outcome
            guard case .rejected(let reason, _, _) = missing else { Issue.record("\(mode): \(missing)"); continue }
            #expect(reason?.rawValue == "not-found", "\(mode): \(missing)")
            // All but the one past the limit went whole to the loader that takes bytes.
            #expect(executor.inputsSentWhole == whole, "\(mode)")
        }
    }

    @Test("with sending bytes off (CORRUPT_FUZZ_SEND_BYTES=0), every input is a file, also for a loader that takes bytes")
    func sendBytesOff() throws {
        let executor = try WorkerExecutor(
            path: BuiltProducts.path("WorkerFixture"), arguments: ["digest"], environment: [:], limits: .init(timeoutMilliseconds: 2000),
            slots: 1, sendBytes: false)
        let outcome = try executor.execute(TestInput(bytes: Array("OK".utf8), seedName: "s"), slot: 0).outcome
        #expect(outcome.word == "accepted", "\(outcome)")
        #expect(executor.inputsSentWhole == 0)
    }

    @Test("a worker that keeps state between inputs shows in its stability")
    func stability() throws {
        let leaky = try worker("leaky")
        for index in 0..<(4 * WorkerExecutor.recheckInterval) { _ = try run(leaky, "input \(index)") }
        let measured = try #require(leaky.stability)
        #expect(measured.rechecked == 4)
        #expect(measured.differed > 0)
        #expect(measured.example?.contains("later") == true)

        let strict = try worker("strict")
        for index in 0..<(2 * WorkerExecutor.recheckInterval) { _ = try run(strict, index % 2 == 0 ? "OK \(index)" : "bad \(index)") }
        #expect(strict.stability == Stability(rechecked: 2, differed: 0))
    }

    @Test("a command that does not speak the protocol is an error that says so")
    func notAWorker() throws {
        let executor = try WorkerExecutor(
            path: BuiltProducts.fixture, arguments: ["accept"], environment: [:], limits: .init(timeoutMilliseconds: 300), slots: 1)
        do {
            _ = try run(executor, "OK")
            Issue.record("a plain loader was taken for a worker")
        } catch {
            #expect("\(error)".contains("is not a corrupt-fuzz worker"), "\(error)")
        }
    }
}
