import CCorruptFuzzWorker
import CorruptFuzzCore
import CorruptFuzzRunner
import CorruptFuzzWorker
import Foundation

/// How a check runs the loader.
public enum Isolation: Sendable, Hashable {
    /// In the test process: fastest, but a loader that traps ends the whole test run.
    case inProcess
    /// In worker processes that are the test binary itself, restarted after every crash:
    /// a trap becomes a finding and the rest of the suite goes on.
    case process
}

/// Settings of one check, with defaults for a unit-test budget.
public struct CorruptFuzzOptions: Sendable {
    /// How many inputs to run (after the regressions), unless ``duration`` is set.
    public var runs: Int
    /// When set, the check runs for this long instead of ``runs`` inputs: the whole check's wall
    /// time, minimization included (a time-boxed check in a nightly test plan).
    public var duration: Duration?
    /// The seed of every random choice; nil takes `CORRUPT_FUZZ_SEED`, else 0.
    public var seed: UInt64?
    public var isolation: Isolation
    /// The deadline of one input.
    public var timeout: Duration
    /// The worker's address-space limit in bytes (process isolation only; 0 for none).
    public var memoryLimit: Int64
    /// Where failing inputs are kept and replayed from first; nil: `Corpus/regressions/<id>`
    /// in the package the test lives in (`CORRUPT_FUZZ_REGRESSIONS` overrides the folder).
    public var regressions: URL?
    /// Parallel workers (process isolation).
    public var jobs: Int
    /// Whether the loader's edge coverage guides the check, when its code is instrumented
    /// (`swiftSettings: [.unsafeFlags(["-sanitize=fuzzer"])]` on the loader's target; the
    /// README's "Coverage guidance"): inputs that reach new code are kept, and comparisons that
    /// did not hold become mutations. An uninstrumented loader runs as without it.
    public var coverage: Bool

    public init(
        runs: Int = 500, seed: UInt64? = nil, isolation: Isolation = .process, timeout: Duration = .seconds(1),
        memoryLimit: Int64 = 1 << 30, regressions: URL? = nil, jobs: Int = 1, duration: Duration? = nil, coverage: Bool = true
    ) {
        self.coverage = coverage
        self.runs = runs
        self.duration = duration
        self.seed = seed
        self.isolation = isolation
        self.timeout = timeout
        self.memoryLimit = memoryLimit
        self.regressions = regressions
        self.jobs = jobs
    }
}

/// One bug a check found, ready to read in a test failure.
public struct CorruptFuzzFinding: Sendable, CustomStringConvertible {
    public var kind: FindingKind
    public var signature: String
    public var detail: String
    public var hits: Int
    /// The minimized input, saved in the regression store.
    public var reproducer: String?
    /// The command that replays it (the regression store runs it first).
    public var replay: String
    /// How the input was made.
    public var input: String

    public var description: String {
        var text = "\(kind.rawValue): \(signature) (hit \(hits)x)\n  \(detail)\n  input: \(input)"
        if let reproducer { text += "\n  reproducer: \(reproducer)" }
        text += "\n  replay: \(replay)"
        return text
    }
}

/// What a check did and found.
public struct CorruptFuzzReport: Sendable {
    public var id: String
    public var findings: [CorruptFuzzFinding]
    public var executions: Int
    public var seconds: Double
    public var seed: UInt64
    /// A hash of every input run, in order: equal for equal seeds.
    public var inputSequenceHash: UInt64
    /// Edges of the loader's instrumented code the inputs reached (nil: it is not instrumented,
    /// or ``CorruptFuzzOptions/coverage`` was off).
    public var edges: Int? = nil

    public var executionsPerSecond: Double { seconds > 0 ? Double(executions) / seconds : 0 }
    /// The kinds of the findings.
    public var kinds: Set<FindingKind> { Set(findings.map(\.kind)) }
}

/// A loader of `Data` as the checks run it: on the input's bytes, copied into a `Data`.
func dataLoader<Value>(_ load: @escaping @Sendable (Data) throws -> Value) -> @Sendable ([UInt8]) throws -> Value {
    { try load(Data($0)) }
}

/// Why a loader rejected data, as a reason word: an error's `reason` property if it has one
/// (`HabitLoadError(reason: "corrupt", …)`; a ``Reason``, a String or a String-backed enum),
/// `empty`/`not-found`/`corrupt` for Foundation's file and decoding errors
/// (``CorruptFuzzWorker/reasonWord(of:)``), and the error's type name otherwise.
func reasonWord(for error: any Error) -> Reason {
    // A `Reason` property is a String-backed RawRepresentable: the worker library reads it too.
    Reason(CorruptFuzzWorker.reasonWord(of: error) ?? String(describing: type(of: error)))
}

/// Runs a loader on one input in-process and says what it did. With `digest`, an accepted
/// value's description (its first 4 KiB) is the digest, where a leaked canary shows up. A
/// loader of `Data` comes wrapped (``dataLoader(_:)``).
func runLoader<Value>(
    _ load: ([UInt8]) throws -> Value, validate: ((Value) -> String?)?, bytes: [UInt8], digest: Bool = false
) -> Outcome {
    do {
        let value = try load(bytes)
        if let message = validate?(value), !message.isEmpty { return .acceptedInvalid(message: message) }
        return .accepted(digest: digest ? String(String(describing: value).prefix(4096)) : "")
    } catch {
        let (reason, message) = RejectionDescriber.shared.describe(error)
        return .rejected(reason: reason, exitCode: 1, message: message)
    }
}

/// A rejection's reason word and message. Both take reflection (microseconds, more than most
/// loaders spend on a corrupt file), so each distinct error is described once and looked up
/// after that. The lookup runs on every rejected input, so it is built to cost little more than
/// hashing the error: each error type gets its own table, found by the type's identity (the
/// last type asked for is kept apart); a plain struct of Strings, Ints and Bools is hashed from
/// its fields read in place (``ErrorLayout``), another Hashable error is opened as its own type
/// and hashed (a cast from `any Error` costs runtime metadata lookups on every call), and any
/// other error is described every time. One lock is taken per lookup.
final class RejectionDescriber: @unchecked Sendable {
    static let shared = RejectionDescriber()
    /// Slots for distinct errors per error type (a power of two).
    static let capacity = 8192

    private let lock = NSLock()
    private var byType: [ObjectIdentifier: ErrorType] = [:]
    private var last: (type: ObjectIdentifier, entry: ErrorType)?

    func describe(_ error: any Error) -> (reason: Reason, message: String) {
        let type = ObjectIdentifier(Swift.type(of: error))
        // lock() and unlock() rather than withLock: its generic result type costs a metadata
        // lookup on every call, from outside Foundation.
        lock.lock()
        let entry: ErrorType
        if let last, last.type == type {
            entry = last.entry
        } else if let known = byType[type] {
            entry = known
            last = (type, known)
        } else {
            // A new type: its layout is worked out outside the lock (by reflection), once.
            lock.unlock()
            let made = ErrorType(of: error)
            lock.lock()
            entry = byType[type] ?? made
            byType[type] = entry
            last = (type, entry)
        }
        let key = entry.key(error)
        if let key, let found = entry.find(key) {
            lock.unlock()
            return found
        }
        lock.unlock()
        // Not known: described outside the lock, then stored.
        let made = entry.layout.describe(error)
        if let key {
            lock.lock()
            entry.store(key, made)
            lock.unlock()
        }
        return made
    }
}

/// The errors of one type a describer has met: how they are hashed and written, and the
/// descriptions of the distinct ones in a table found by their hash (direct-mapped: an error
/// whose slot another took is described again). Used under the describer's lock. Two distinct
/// errors of one campaign share a 64-bit hash with a chance of about 1 in 10^12, which would
/// give the second the first's message.
private final class ErrorType {
    let layout: ErrorLayout
    /// For a Hashable error that is not a plain struct: its hash, computed as its own type.
    private let hasher: (any ErrorHasher)?
    private struct Slot {
        var key: Int
        var description: (reason: Reason, message: String)
    }
    /// `RejectionDescriber.capacity` slots, allocated once: looked up for every rejected input,
    /// so without an array's exclusivity checks and copy-on-write.
    private let slots: UnsafeMutablePointer<Slot?>

    init(of error: any Error) {
        layout = ErrorLayout(of: error)
        hasher = layout.fields == nil ? Self.hasher(for: error) : nil
        slots = .allocate(capacity: RejectionDescriber.capacity)
        slots.initialize(repeating: nil, count: RejectionDescriber.capacity)
    }

    deinit {
        slots.deinitialize(count: RejectionDescriber.capacity)
        slots.deallocate()
    }

    /// The hash of `error`, which is of this type; nil when errors of this type cannot be
    /// told apart (then each is described).
    func key(_ error: any Error) -> Int? {
        layout.key(error) ?? hasher?.key(error)
    }

    func find(_ key: Int) -> (reason: Reason, message: String)? {
        let slot = slots + (key & (RejectionDescriber.capacity - 1))
        guard let found = slot.pointee, found.key == key else { return nil }
        return found.description
    }

    func store(_ key: Int, _ description: (reason: Reason, message: String)) {
        slots[key & (RejectionDescriber.capacity - 1)] = Slot(key: key, description: description)
    }

    /// The type itself must be Hashable: any error converts to a Hashable NSError, whose
    /// equality (domain and code) would merge different messages.
    private static func hasher(for error: any Error) -> (any ErrorHasher)? {
        guard Swift.type(of: error) is any Hashable.Type, let hashable = (error as Any) as? any Hashable else { return nil }
        func hasher<E: Hashable>(_: E) -> any ErrorHasher { HashableError<E>() }
        return hasher(hashable)
    }
}

/// Hashes the errors of one Hashable type.
private protocol ErrorHasher {
    func key<T: Error>(_ error: T) -> Int?
}

/// Code generic over the error type is not specialized here (the type is known only at run
/// time), and every generic step then costs metadata lookups, so only the hash is generic.
private struct HashableError<E: Hashable>: ErrorHasher {
    /// The error's hash: the opened error is this type (one value of an `any Error` box has
    /// one dynamic type), read in place as `E`.
    func key<T: Error>(_ error: T) -> Int? {
        guard T.self == E.self else { return nil }
        return withUnsafePointer(to: error) { $0.withMemoryRebound(to: E.self, capacity: 1) { $0.pointee.hashValue } }
    }
}

/// Runs inputs by calling the loader in this process.
struct InProcessExecutor: Executor {
    let slots = 1
    let batchSize = 64
    let body: @Sendable ([UInt8]) -> Outcome
    /// Reads this process's edge map around each call, when code in it is instrumented.
    let coverage: InProcessCoverage?

    /// Whether this process has instrumented code (its edge map is the process's, one for all
    /// threads).
    let instrumented: Bool

    /// Inputs of in-process checks run one at a time in a process with instrumented code: the
    /// edge map counts every thread's edges, so an input run beside another check's (Swift
    /// Testing runs tests in parallel) would take the other loader's edges for its own, and a
    /// seeded check would not make the same inputs twice (with coverage off too: its loader's
    /// edges would land in the other check's map).
    static let oneInputAtATime = NSLock()

    init(coverage: Bool = false, body: @escaping @Sendable ([UInt8]) -> Outcome) {
        self.body = body
        instrumented = cf_coverage_edges() > 0
        self.coverage = coverage && instrumented ? InProcessCoverage() : nil
    }

    /// Runs the loader. The call is not timed: reading the clock twice would cost more than
    /// many loaders take, and no finding of an in-process call depends on its duration.
    func execute(_ input: TestInput, slot: Int) -> Execution {
        guard let bytes = input.bytes else {
            return Execution(outcome: .rejected(reason: .notFound, exitCode: 1, message: nil))
        }
        if instrumented { Self.oneInputAtATime.lock() }
        coverage?.beforeRun()
        let outcome = body(bytes)
        let sample = coverage?.afterRun(input: input)
        if instrumented { Self.oneInputAtATime.unlock() }
        // The digest is read through a property rather than matched here: binding it copied
        // the whole outcome for every input.
        return Execution(outcome: outcome, stdout: outcome.acceptedDigest.map { Array($0.utf8) } ?? [], coverage: sample)
    }
}

/// The edge map and comparison log of this process (`corrupt_fuzz_coverage.h`), read around
/// each in-process call (one slot: never from two threads at once).
final class InProcessCoverage: @unchecked Sendable {
    private var reader = CoverageReader()

    func beforeRun() {
        if reader.isActive { cf_coverage_reset() }
    }

    func afterRun(input: TestInput) -> CoverageSample? {
        guard reader.isActive else { return nil }
        cf_coverage_collect()
        return reader.sample(map: cf_coverage_map(), log: cf_coverage_comparisons(), allComparisons: input.steps.isEmpty)
    }
}
