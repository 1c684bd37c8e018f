import CorruptFuzzCore
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// The loop of the engine's self-fuzz properties (Tests/CorruptFuzzCoreTests/SelfFuzzTests.swift
// and Tests/CorruptFuzzReportingTests/SelfFuzzReportingTests.swift): seeds, the long mode
// (CORRUPT_FUZZ_SELF_FUZZ_SECONDS), replay (CORRUPT_FUZZ_SELF_FUZZ_SEED), and the note of the
// running seeds written when the test process traps.

// MARK: - The loop

/// Runs one property over many seeds. Shared by the self-fuzz suites of this test target.
///
/// Both self-fuzz suites (Core and Reporting) use it: test targets cannot share source files,
/// so it lives in this small support target.
public enum SelfFuzz {
    public static let secondsVariable = "CORRUPT_FUZZ_SELF_FUZZ_SECONDS"
    public static let seedVariable = "CORRUPT_FUZZ_SELF_FUZZ_SEED"

    /// Seconds each property runs for, when the long mode is on.
    public static var seconds: Double? {
        guard let text = ProcessInfo.processInfo.environment[secondsVariable], let value = Double(text), value > 0 else { return nil }
        return value
    }

    /// The single seed to replay, when one is given.
    public static var replaySeed: UInt64? {
        ProcessInfo.processInfo.environment[seedVariable].flatMap { UInt64($0) }
    }

    /// What one case found wrong.
    public struct Violations {
        public init() {}
        public var messages: [String] = []
        /// Records `message` unless `condition` holds (only the first few are kept).
        public mutating func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            guard !condition else { return }
            if messages.count < 5 { messages.append(message()) }
        }
        public mutating func fail(_ message: String) { check(false, message) }
        public var failed: Bool { !messages.isEmpty }
    }

    /// Runs `body` once per seed: `iterations` fixed seeds by default, fresh seeds until the
    /// time is up in the long mode, or just the replay seed. Stops at the first failing case,
    /// which it records as an issue naming the seed.
    /// - Parameters:
    ///   - share: The part of the long mode's time this run gets (a property split into several
    ///     test cases gives each its share).
    ///   - batch: How often `flush` runs (and it runs at the end), for checks made in batches
    ///     (xmllint over many documents at once).
    ///   - flush: Returns the failures of the batch's cases.
    /// - Returns: How many cases ran.
    @discardableResult
    public static func run(
        _ property: String, iterations: Int, share: Double = 1, batch: Int = .max, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (_ rng: inout FuzzRNG, _ seed: UInt64, _ violations: inout Violations) -> Void,
        flush: () -> [(seed: UInt64, message: String)] = { [] }
    ) -> Int {
        let slot = CrashNote.claimSlot()
        defer { CrashNote.release(slot) }
        let started = Date()
        // Fixed seeds by default (a failure reproduces by rerunning), fresh ones in the long mode.
        let fresh = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        let base: UInt64 = seconds == nil ? fnv1a(Array(property.utf8)) : fnv1a(Array(property.utf8), seed: fresh)
        var cases = 0
        func record(_ seed: UInt64, _ messages: [String]) {
            Issue.record(
                Comment(
                    rawValue: "\(property): seed \(seed) failed (rerun it with \(seedVariable)=\(seed)):\n- "
                        + messages.joined(separator: "\n- ")),
                sourceLocation: sourceLocation)
        }
        /// Whether the batch passed.
        func flushed() -> Bool {
            guard let first = flush().first else { return true }
            record(first.seed, [first.message])
            return false
        }
        var failed = false
        while true {
            let seed: UInt64
            if let replay = replaySeed {
                guard cases == 0 else { break }
                seed = replay
            } else if let seconds {
                guard Date().timeIntervalSince(started) < seconds * share else { break }
                seed = base &+ UInt64(cases)
            } else {
                guard cases < iterations else { break }
                seed = base &+ UInt64(cases)
            }
            CrashNote.note(slot, "self-fuzz: \(property) was running seed \(seed) (rerun it with \(seedVariable)=\(seed))\n")
            var rng = FuzzRNG(seed: seed)
            var violations = Violations()
            body(&rng, seed, &violations)
            cases += 1
            if violations.failed {
                record(seed, violations.messages)
                _ = flush()
                failed = true
                break
            }
            if cases % batch == 0, !flushed() {
                failed = true
                break
            }
        }
        if !failed { _ = flushed() }
        let elapsed = Date().timeIntervalSince(started)
        print(
            "self-fuzz: \(property): \(cases) cases in \(String(format: "%.2f", elapsed)) s (\(replaySeed.map { "replayed seed \($0)" } ?? "first seed \(base)"))"
        )
        return cases
    }

    /// FNV-1a, for stable per-property seeds and for the minimizer's chaotic predicate.
    public static func fnv1a(_ bytes: some Sequence<UInt8>, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// Writes the seeds that were running to standard error when the test process traps, so that
/// a crash in the long mode (fresh seeds) can be replayed. The signal handler prints the notes,
/// restores the previous handler and returns: the faulting instruction runs again and the
/// previous handler (the Swift backtracer, or the default action) reports the crash as usual.
public enum CrashNote {
    static let slotCount = 64
    static let slotSize = 256

    private final class Slots: @unchecked Sendable {
        let lock = NSLock()
        var used = [Bool](repeating: false, count: CrashNote.slotCount)
    }

    private static let slots = Slots()

    /// Claims a slot for one running property; nil when all are taken (no note then).
    static func claimSlot() -> Int? {
        #if os(Linux)
            _ = installed
        #endif
        slots.lock.lock()
        defer { slots.lock.unlock() }
        guard let free = slots.used.firstIndex(of: false) else { return nil }
        slots.used[free] = true
        return free
    }

    static func release(_ slot: Int?) {
        guard let slot else { return }
        #if os(Linux)
            crashNoteBuffer[slot * slotSize] = 0
        #endif
        slots.lock.lock()
        slots.used[slot] = false
        slots.lock.unlock()
    }

    static func note(_ slot: Int?, _ text: String) {
        #if os(Linux)
            guard let slot else { return }
            // The first byte goes last, so that the signal handler never reads half a note.
            let start = crashNoteBuffer + slot * slotSize
            start[0] = 0
            let bytes = Array(text.utf8.prefix(slotSize - 1))
            for i in bytes.indices.dropFirst() { start[i] = bytes[i] }
            start[bytes.count] = 0
            if let first = bytes.first { start[0] = first }
        #endif
    }

    #if os(Linux)
        static let crashSignals: [Int32] = [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE]

        private static let installed: Bool = {
            for signal in crashSignals {
                var action = sigaction()
                action.__sigaction_handler.sa_sigaction = crashNoteHandler
                action.sa_flags = SA_SIGINFO
                sigemptyset(&action.sa_mask)
                sigaction(signal, &action, crashNotePrevious + Int(signal))
            }
            return true
        }()
    #endif
}

#if os(Linux)
    nonisolated(unsafe) let crashNoteBuffer: UnsafeMutablePointer<UInt8> = {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: CrashNote.slotCount * CrashNote.slotSize)
        buffer.initialize(repeating: 0, count: CrashNote.slotCount * CrashNote.slotSize)
        return buffer
    }()

    nonisolated(unsafe) let crashNotePrevious: UnsafeMutablePointer<sigaction> = {
        let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
        previous.initialize(repeating: sigaction(), count: 65)
        return previous
    }()

    private func crashNoteHandler(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
        for slot in 0..<CrashNote.slotCount {
            let start = crashNoteBuffer + slot * CrashNote.slotSize
            if start[0] != 0 { _ = write(2, start, strlen(UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self))) }
        }
        sigaction(signal, crashNotePrevious + Int(signal), nil)
    }
#endif

// MARK: - Hostile values

extension FuzzRNG {
    /// One of `values`, uniformly.
    public mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }

    /// Text of at least `count` scalars: one time in `fragmentOneIn` a whole fragment (the
    /// strings the code under test looks for), else one scalar from `scalar`.
    public mutating func hostileText(
        scalars count: Int, fragments: [String], fragmentOneIn: Int, scalar: (inout FuzzRNG) -> Unicode.Scalar
    ) -> String {
        var text = ""
        var made = 0
        while made < count {
            if oneIn(fragmentOneIn) {
                let fragment = pick(fragments)
                text += fragment
                made += fragment.unicodeScalars.count
            } else {
                text.unicodeScalars.append(scalar(&self))
                made += 1
            }
        }
        return text
    }
}
