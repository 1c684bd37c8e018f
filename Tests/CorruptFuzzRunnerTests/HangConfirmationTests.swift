import CCorruptFuzzSpawn
import CorruptFuzzCore
import Foundation
import Testing

@testable import CorruptFuzzRunner

/// A loader that works for as much CPU time as its input asks (`work 600`), spins forever
/// (`spin`) or sleeps (`sleep`).
private let loaderSource = """
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <time.h>
    #include <unistd.h>
    static double cpu_ms(void) {
        struct timespec t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return t.tv_sec * 1000.0 + t.tv_nsec / 1e6;
    }
    int main(int argc, char **argv) {
        FILE *f = fopen(argv[1], "rb");
        if (!f) return 1;
        char buf[64] = {0};
        fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        if (strncmp(buf, "sleep", 5) == 0) { sleep(600); return 0; }
        double until = strncmp(buf, "spin", 4) == 0 ? 1e12 : atof(buf + 5);
        volatile unsigned long n = 0;
        while (cpu_ms() < until) n++;
        printf("done %lu\\n", n);
        return 0;
    }
    """

/// A suspected hang is confirmed in a fresh process with a deadline in CPU time: a loader the
/// machine starves of CPU is slow, not hung; one that spins or sleeps is a hang.
@Suite("Hang confirmation in CPU time", .serialized)
struct HangConfirmationTests {
    static let timeout = 200

    private func judge(_ text: String, binary: String) throws -> (Judge.Judgement, seconds: Double) {
        let executor = try ProcessExecutor(command: try TargetCommand("\(binary) @@"), limits: .init(timeoutMilliseconds: Self.timeout))
        let input = TestInput(bytes: Array(text.utf8), seedName: text)
        let start = ContinuousClock.now
        let judged = try Judge().run(input, on: executor, confirming: .every)
        return (judged, (ContinuousClock.now - start).seconds)
    }

    /// Whether `judged` is what a loader that needs less CPU time than the confirmation gives
    /// it may be on a starved core: slow (it finished, accepted), or undecided (the machine
    /// starved it past the confirmation's wall-clock cap) — never a finding.
    private func slowOrStarved(_ judged: Judge.Judgement) -> Bool {
        guard judged.finding == nil else { return false }
        if judged.slow, case .accepted = judged.execution.outcome { return true }
        return !judged.slow && judged.verdict == .undecided(Judge.starvedReason)
    }

    @Test(
        "a loader that needs 0.6 s of CPU on a core five other threads are busy with is never a hang: slow, or undecided when the machine starves it past the cap",
        .enabled(if: isLinux))
    func starvedLoaderIsSlow() throws {
        #if os(Linux)
            let binary = try #require(try CrashHandlerTests.buildLoader(loaderSource), "no C compiler")
            defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
            let confirmation = ConfirmationDeadline(timeout: Self.timeout)
            // The loader and five busy threads share core 0: the loader gets about a sixth of it
            // (less on a loaded machine), so its 0.6 s of CPU take 3.6 s or more, past the
            // confirmation's 2.2 s of CPU time. Whether it finishes before the 8.8 s cap depends
            // on the machine's load; the verdict never does: it used under the CPU deadline, so
            // it is no hang (cpuDeadlineVerdicts decides the same on a manual clock).
            let result = try onCoreZeroBesideBusyThreads(5) { try judge("work 600", binary: binary) }
            let (judged, seconds) = result
            // What the setup guarantees (more load only makes it truer): else the test shows nothing.
            #expect(seconds * 1000 > Double(confirmation.cpuMilliseconds), "the loader was not starved (\(seconds) s): the test shows nothing")
            #expect(slowOrStarved(judged), "\(judged.execution.outcome), \(String(describing: judged.verdict)), \(String(describing: judged.finding))")
        #endif
    }

    @Test(
        "a loader starved so hard that it reaches the confirmation's wall-clock cap with less than half its CPU time is undecided, neither a hang nor slow",
        .enabled(if: isLinux))
    func starvedPastTheCapIsUndecided() throws {
        #if os(Linux)
            let binary = try #require(try CrashHandlerTests.buildLoader(loaderSource), "no C compiler")
            defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
            let confirmation = ConfirmationDeadline(timeout: Self.timeout)
            // 40 busy threads on core 0 leave the loader about a fortieth of it: its 2.2 s of
            // CPU would take about 90 s, far past the 8.8 s cap.
            let (judged, seconds) = try onCoreZeroBesideBusyThreads(40) { try judge("work 2300", binary: binary) }
            #expect(seconds * 1000 >= Double(confirmation.wallMilliseconds) * 0.9, "\(seconds) s: the cap was not reached")
            #expect(judged.finding == nil, "\(String(describing: judged.finding))")
            #expect(!judged.slow)
            #expect(judged.verdict == .undecided(Judge.starvedReason), "\(String(describing: judged.verdict))")
        #endif
    }

    @Test(
        "a check that runs each file once (version skew, an app validator) runs a starved loader's file again before calling it a hang",
        .enabled(if: isLinux))
    func checksRunningOnceConfirm() throws {
        #if os(Linux)
            let binary = try #require(try CrashHandlerTests.buildLoader(loaderSource), "no C compiler")
            defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
            let limits = ProcessExecutor.Limits(timeoutMilliseconds: Self.timeout)
            let loader = DocumentLoader(
                name: "starved", command: "\(binary) @@", executor: try ProcessExecutor(command: try TargetCommand("\(binary) @@"), limits: limits))
            let validator = try ExternalValidator(command: try TargetCommand("\(binary) @@"), limits: limits, slots: 1, fileExtension: "")
            let file = Seed(name: "older", bytes: Array("work 600".utf8))
            let check = VersionSkewCheck(older: loader, newer: loader, olderFiles: [file], newerFiles: [])
            let (result, verdict, seconds) = try onCoreZeroBesideBusyThreads(5) {
                let start = ContinuousClock.now
                let result = try check.run()
                return (result, validator.validate(file.bytes), (ContinuousClock.now - start).seconds)
            }
            #expect(seconds > 2 * Double(Self.timeout) / 1000, "the loader was not starved (\(seconds) s): the test shows nothing")
            // Starved past the confirmation's cap (a loaded machine), the load is undecided: no
            // finding either way, and the validator's verdict says so.
            #expect(result.upgrade.findings.isEmpty, "\(result.upgrade.findings.map(\.finding.signature))")
            #expect(verdict == .valid || verdict == .undecided(Judge.starvedReason), "\(verdict)")
        #endif
    }

    @Test(
        "replay confirms a hang at the confirmation's deadline, half what a campaign's reported hang took: a load between one and two of them is a hang there",
        .enabled(if: isLinux))
    func replayConfirmsAtTheDeadline() throws {
        let binary = try #require(try CrashHandlerTests.buildLoader(loaderSource), "no C compiler")
        let folder = (binary as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let confirmation = ConfirmationDeadline(timeout: Self.timeout)
        let twice = ConfirmationDeadline(timeout: Self.timeout, margin: 2)
        // 3.4 s of CPU: past the confirmation's 2.2 s, short of the 4.4 s a campaign's minimizer
        // and fresh-process check hold a hang to. Confirmed at those 4.4 s, the replay said
        // accepted for what such a check (on a slower run) had reported as a hang.
        let work = (confirmation.cpuMilliseconds + twice.cpuMilliseconds) / 2 + 100
        let file = (folder as NSString).appendingPathComponent("slow.txt")
        try Data("work \(work)".utf8).write(to: URL(fileURLWithPath: file))
        let replay = try Replay(
            target: try TargetCommand("\(binary) @@"), format: nil, validator: nil, limits: .init(timeoutMilliseconds: Self.timeout), files: [file])
        let entry = try replay.replay(file)
        // At twice the deadline it finishes (accepted, slow). On a machine so loaded that it
        // gets under half the confirmation's CPU time by its cap, it is undecided.
        let starved = entry.judgement.verdict == .undecided(Judge.starvedReason)
        #expect(entry.judgement.finding?.kind == .hang || starved, "\(entry.judgement.execution.outcome)")
    }

    @Test("a loader that sleeps is a hang; one that spins is a hang, or undecided on a machine that starves it past the cap", .enabled(if: isLinux))
    func spinAndSleepAreHangs() throws {
        let binary = try #require(try CrashHandlerTests.buildLoader(loaderSource), "no C compiler")
        defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
        // When each is decided (a sleeper at the first look, a spinner at its CPU deadline) is
        // cpuDeadlineVerdicts' to check, on a manual clock: here, only the verdicts.
        for text in ["spin", "sleep"] {
            let (judged, _) = try judge(text, binary: binary)
            let starved = text == "spin" && judged.verdict == .undecided(Judge.starvedReason)
            #expect(judged.finding?.kind == .hang || starved, "\(text): \(judged.execution.outcome)")
            #expect(!judged.slow)
        }
    }

    @Test(
        "a hang confirmed on a loaded core records how much longer than its CPU time the confirmation took, so its check in a fresh process is expected to take as much longer",
        .enabled(if: isLinux))
    func loadedConfirmationIsStretched() throws {
        #if os(Linux)
            let binary = try #require(try CrashHandlerTests.buildLoader(loaderSource), "no C compiler")
            defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
            // Two busy threads beside the spinner on core 0 leave it about a third of it: its
            // confirmation's 2.2 s of CPU take about 6.6 s.
            let (judged, _) = try onCoreZeroBesideBusyThreads(2) { try judge("spin", binary: binary) }
            // A machine loaded besides can starve it past the cap: undecided, no stretch to see.
            if judged.verdict == .undecided(Judge.starvedReason) { return }
            #expect(judged.finding?.kind == .hang, "\(judged.execution.outcome)")
            // At most a third of the core: its 2.2 s of CPU take 6.6 s or more, up to the cap.
            let stretch = judged.finding?.execution.hangConfirmationStretch ?? 0
            #expect(stretch >= 2 && stretch <= 4, "\(stretch)")
        #endif
    }

    /// How a confirmation's CPU deadline (`cpu` ms, with its wall-clock cap) ends for a target
    /// that gets `share` of a core while `runnable`, and exits once it has used `needs` ms of CPU
    /// (nil: never), driven as cf_run drives it: first asked at the CPU deadline's wall-clock
    /// time, then again after each wait it asks for, on a manual clock (microseconds).
    private enum CPUVerdict: Equatable {
        /// It exited: slow, not a hang.
        case finished
        case hang
        /// Undecided.
        case starved
    }

    /// - Parameter share: The share of a core it gets, as `1 / share` (1: a core of its own).
    /// - Returns: The verdict, and the wall-clock milliseconds of the confirmation when it came.
    private func cpuDeadline(share: Int64, runnable: Bool = true, needs: Int64?) -> (CPUVerdict, atMilliseconds: Int64) {
        let confirmation = ConfirmationDeadline(timeout: Self.timeout)
        var deadline = cf_cpu_deadline()
        deadline.cpu_limit_us = Int64(confirmation.cpuMilliseconds) * 1000
        deadline.wall_cap_us = Int64(confirmation.wallMilliseconds) * 1000
        var now = Int64(confirmation.cpuMilliseconds) * 1000
        while true {
            let used = runnable ? now / share : 0
            if let needs, used >= needs * 1000 { return (.finished, needs * share) }
            var usage = cf_usage()
            usage.cpu_us = used
            usage.runnable = runnable ? 1 : 0
            usage.processes = 1
            let more = cf_cpu_deadline_step(&deadline, now, &usage)
            if more == 0 { return (deadline.starved != 0 ? .starved : .hang, now / 1000) }
            now += more
        }
    }

    @Test(
        "the confirmation's CPU deadline decides by CPU time, at any load: on a manual clock and usage, starved is slow or undecided, spinning and sleeping hang"
    )
    func cpuDeadlineVerdicts() {
        let confirmation = ConfirmationDeadline(timeout: Self.timeout)
        let cpu = Int64(confirmation.cpuMilliseconds)
        let cap = Int64(confirmation.wallMilliseconds)
        // 0.6 s of CPU at a sixth of a core: 3.6 s, past the CPU deadline's 2.2 s; at a
        // twentieth (a loaded machine), past the 8.8 s cap with under half the CPU deadline:
        // undecided. Never a hang: it used under its CPU time.
        #expect(cpuDeadline(share: 6, needs: 600) == (.finished, 3600))
        #expect(cpuDeadline(share: 20, needs: 600) == (.starved, cap))
        // A spinner with a core: a hang at its CPU deadline; with a third, once it has used it
        // (6.6 s, looked at every 20 ms at the end); with a sixth, at the cap with more than half
        // of it (1.47 s of 2.2): a hang.
        #expect(cpuDeadline(share: 1, needs: nil) == (.hang, cpu))
        let third = cpuDeadline(share: 3, needs: nil)
        #expect(third.0 == .hang && third.atMilliseconds >= 3 * cpu && third.atMilliseconds <= 3 * cpu + 20, "\(third)")
        #expect(cpuDeadline(share: 6, needs: nil) == (.hang, cap))
        // Starved to under half of it by the cap: undecided, however long it would spin.
        #expect(cpuDeadline(share: 10, needs: nil) == (.starved, cap))
        // A sleeper (no runnable thread, no CPU): a hang at the first look.
        #expect(cpuDeadline(share: 1, runnable: false, needs: nil) == (.hang, cpu))
        // A usage that cannot be read: a hang, as at a wall-clock deadline.
        var deadline = cf_cpu_deadline()
        deadline.cpu_limit_us = cpu * 1000
        deadline.wall_cap_us = cap * 1000
        #expect(cf_cpu_deadline_step(&deadline, cpu * 1000, nil) == 0 && deadline.starved == 0)
    }

    @Test("the CPU time of a process group is read, and grows while it works")
    func groupUsage() {
        var before = cf_usage()
        #expect(cf_group_usage(getpgrp(), &before) == 0)
        #expect(before.processes >= 1 && before.cpu_us > 0, "\(before)")
        // Until this thread has used 150 ms of CPU, however long the machine takes to give it
        // (300 ms of wall-clock time got it 30 ms at a load of 20 on two cores).
        let start = Self.threadCPUMicroseconds()
        var n = 0
        while Self.threadCPUMicroseconds() - start < 150_000 {
            for _ in 0..<10_000 { n &+= 1 }
        }
        blackHole(n)
        var after = cf_usage()
        #expect(cf_group_usage(getpgrp(), &after) == 0)
        #expect(after.cpu_us - before.cpu_us >= 100_000, "\(before.cpu_us) -> \(after.cpu_us) µs")
        var none = cf_usage()
        #expect(cf_group_usage(Int32.max - 1, &none) == -1)
    }

    /// The CPU time the calling thread has used.
    private static func threadCPUMicroseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
    }

    #if os(Linux)
        /// Runs `body` on a thread of its own pinned to core 0, with `count` threads spinning on
        /// core 0 beside it (the target inherits the pinning), and stops them after.
        private func onCoreZeroBesideBusyThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable () throws -> T) throws -> T {
            let stop = LockedBox(false)
            let group = DispatchGroup()
            for _ in 0..<count {
                group.enter()
                Thread.detachNewThread {
                    Self.pinToCoreZero()
                    var n = 0
                    while !stop.value {
                        for _ in 0..<100_000 { n &+= 1 }
                    }
                    blackHole(n)
                    group.leave()
                }
            }
            let result = LockedBox<Result<T, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                Self.pinToCoreZero()
                result.set(Result { try body() })
                done.signal()
            }
            done.wait()
            stop.set(true)
            group.wait()
            return try result.value!.get()
        }

        /// sched_setaffinity, looked up at run time (Glibc's module does not export it).
        private static func pinToCoreZero() {
            typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity") else { return }
            var mask = [UInt64](repeating: 0, count: 16)  // a cpu_set_t: 1024 bits
            mask[0] = 1
            _ = mask.withUnsafeBytes { unsafeBitCast(symbol, to: SetAffinity.self)(0, $0.count, $0.baseAddress!) }
        }
    #endif
}

@inline(never) private func blackHole(_ value: Int) { _ = value }
