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
    /// How many inputs to run (after the regressions).
    public var runs: Int
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

    public init(
        runs: Int = 500, seed: UInt64? = nil, isolation: Isolation = .process, timeout: Duration = .seconds(1),
        memoryLimit: Int64 = 1 << 30, regressions: URL? = nil, jobs: Int = 1
    ) {
        self.runs = runs
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

    public var executionsPerSecond: Double { seconds > 0 ? Double(executions) / seconds : 0 }
    /// The kinds of the findings.
    public var kinds: Set<FindingKind> { Set(findings.map(\.kind)) }
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
/// value's description (its first 4 KiB) is the digest, where a leaked canary shows up.
func runLoader<Value>(
    _ load: (Data) throws -> Value, validate: ((Value) -> String?)?, bytes: [UInt8], digest: Bool = false
) -> Outcome {
    do {
        let value = try load(Data(bytes))
        if let message = validate?(value), !message.isEmpty { return .acceptedInvalid(message: message) }
        return .accepted(digest: digest ? String(String(describing: value).prefix(4096)) : "")
    } catch {
        let (reason, message) = RejectionDescriber.shared.describe(error)
        return .rejected(reason: reason, exitCode: 1, message: message)
    }
}

/// A rejection's reason word and message. Both take reflection (microseconds, more than most
/// loaders spend on a corrupt file), so an error that is `Hashable` is described once per
/// distinct value and looked up after that. The lookup runs on every rejected input, so it
/// is built to cost little more than hashing the error: each error type gets its own table,
/// found by the type's identity (the last type asked for is kept apart), and the error is
/// opened as its own type rather than cast (a cast from `any Error` costs runtime metadata
/// lookups on every call). One lock is taken per lookup.
final class RejectionDescriber: @unchecked Sendable {
    static let shared = RejectionDescriber()
    /// Distinct errors remembered per error type; the memory is cleared when it is full.
    static let capacity = 4096

    private let lock = NSLock()
    private var byType: [ObjectIdentifier: any ErrorDescriptions] = [:]
    private var lastType: ObjectIdentifier?
    private var lastTable: (any ErrorDescriptions)?
    /// Error types' names, as `String(describing:)` spells them (it demangles every time).
    private var typeNames: [ObjectIdentifier: String] = [:]

    func describe(_ error: any Error) -> (reason: Reason, message: String) {
        let type = ObjectIdentifier(Swift.type(of: error))
        // lock() and unlock() rather than withLock: its generic result type costs a metadata
        // lookup on every call, from outside Foundation.
        lock.lock()
        let table: (any ErrorDescriptions)?
        if lastType == type {
            table = lastTable
        } else {
            table = byType[type]
            if table != nil { (lastType, lastTable) = (type, table) }
        }
        if let table, let found = table.find(error) {
            lock.unlock()
            return found
        }
        let typeName = typeNames[type]
        lock.unlock()
        // Not known: described outside the lock (reflection may take a while), then stored.
        let name = typeName ?? String(describing: Swift.type(of: error))
        let made = Self.reflect(error, typeName: name)
        lock.lock()
        defer { lock.unlock() }
        if typeName == nil { typeNames[type] = name }
        let stored = table ?? Self.descriptions(for: error)
        if table == nil {
            byType[type] = stored
            (lastType, lastTable) = (type, stored)
        }
        stored.store(error, made)
        return made
    }

    /// The reason word and `String(describing: error)`. The common shape of an app's error, a
    /// struct of Strings, Ints and Bools (`HabitLoadError(reason: "corrupt", message: "…")`), is
    /// written from one reflection of it, as the standard library's printing would write it;
    /// any other error is described by the standard library (a second reflection, for the
    /// reason word: together 4-5 times the cost, tens of microseconds).
    static func reflect(_ error: any Error, typeName: String) -> (reason: Reason, message: String) {
        if let fields = StructFields(error, typeName: typeName) {
            return (Reason(fields.reason ?? typeName), fields.message)
        }
        return (reasonWord(for: error), String(describing: error))
    }

    /// The table for `error`'s type. The type itself must be Hashable: any error converts to a
    /// Hashable NSError, whose equality (domain and code) would merge different messages.
    private static func descriptions(for error: any Error) -> any ErrorDescriptions {
        guard Swift.type(of: error) is any Hashable.Type, let hashable = (error as Any) as? any Hashable else {
            return Undescribed()
        }
        func table<E: Hashable>(_: E) -> any ErrorDescriptions { Described<E>() }
        return table(hashable)
    }
}

/// An error that is a plain struct of Strings, Ints and Bools, read by one reflection: its
/// `reason` property and the text `String(describing:)` gives it. Nil for any other error
/// (an enum, a class, a struct with other properties, or one that describes itself).
struct StructFields {
    var reason: String?
    var message: String

    /// `typeName`: `String(describing: type(of: error))`.
    init?(_ error: any Error, typeName: String) {
        // `String(describing:)` prefers these to reflection; a custom mirror changes what
        // reflection shows, and a class prints differently.
        if Self.describesItself(error) { return nil }
        let mirror = Mirror(reflecting: error)
        guard mirror.displayStyle == .struct else { return nil }
        var reason: String?
        var message = typeName + "("
        var first = true
        for child in mirror.children {
            guard let label = child.label else { continue }
            let text: String
            switch child.value {
            case let string as String:
                if label == "reason" { reason = string }
                text = Self.quoted(string)
            case let number as Int: text = String(number)
            case let flag as Bool: text = flag ? "true" : "false"
            default: return nil
            }
            if !first { message += ", " }
            first = false
            message += label + ": " + text
        }
        self.reason = reason
        self.message = message + ")"
    }

    /// `string.debugDescription`: in quotes, with quotes, backslashes and what is not printable
    /// ASCII escaped. Most messages are printable ASCII with nothing to escape, and are quoted
    /// here at once (the standard library walks the Unicode scalars of every string).
    static func quoted(_ string: String) -> String {
        let plain = string.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        return plain ? "\"" + string + "\"" : string.debugDescription
    }

    /// Whether `String(describing:)` would ask the value rather than reflect it. Generic over
    /// any type, as the standard library's printing is, so the casts ask what the error's own
    /// type conforms to (a cast of an `any Error` would convert it to NSError, which does).
    private static func describesItself<T>(_ value: T) -> Bool {
        value is any CustomStringConvertible || value is any CustomDebugStringConvertible || value is any TextOutputStreamable
            || value is any CustomReflectable
    }
}

/// How the errors of one type are described: found and stored by the describer, under its
/// lock.
private protocol ErrorDescriptions: AnyObject {
    func find<T: Error>(_ error: T) -> (reason: Reason, message: String)?
    func store<T: Error>(_ error: T, _ description: (reason: Reason, message: String))
}

/// Errors that are not Hashable: described every time.
private final class Undescribed: ErrorDescriptions {
    func find<T: Error>(_ error: T) -> (reason: Reason, message: String)? { nil }
    func store<T: Error>(_ error: T, _ description: (reason: Reason, message: String)) {}
}

/// The descriptions of one Hashable error type's values, found by the value's hash, with the
/// last few looked up kept apart: a loader rejects most inputs with the same few errors, and
/// comparing four numbers is cheaper than a dictionary. Code generic over the error type is
/// not specialized here (the type is known only at run time), and every generic step then
/// costs metadata lookups, so only the hash is generic. Two distinct errors of one campaign
/// share a 64-bit hash with a chance of about 1 in 10^12 (4,096 values remembered), which
/// would give the second the first's message.
private final class Described<E: Hashable>: ErrorDescriptions {
    private var known: [Int: (reason: Reason, message: String)] = [:]
    private var recentKeys: [Int] = []
    private var recent: [(reason: Reason, message: String)] = []
    private var nextRecent = 0

    /// The error's hash: the opened error is this table's type (one value of an `any Error`
    /// box has one dynamic type), read in place as `E`.
    private func key<T: Error>(_ error: T) -> Int? {
        guard T.self == E.self else { return nil }
        return withUnsafePointer(to: error) { $0.withMemoryRebound(to: E.self, capacity: 1) { $0.pointee.hashValue } }
    }

    func find<T: Error>(_ error: T) -> (reason: Reason, message: String)? {
        guard let key = key(error) else { return nil }
        for index in recentKeys.indices where recentKeys[index] == key { return recent[index] }
        guard let found = known[key] else { return nil }
        remember(key, found)
        return found
    }

    func store<T: Error>(_ error: T, _ description: (reason: Reason, message: String)) {
        guard let key = key(error) else { return }
        if known.count >= RejectionDescriber.capacity { known.removeAll(keepingCapacity: true) }
        known[key] = description
        remember(key, description)
    }

    private func remember(_ key: Int, _ description: (reason: Reason, message: String)) {
        if recentKeys.count < 4 {
            recentKeys.append(key)
            recent.append(description)
        } else {
            recentKeys[nextRecent] = key
            recent[nextRecent] = description
            nextRecent = (nextRecent + 1) % 4
        }
    }
}

/// Runs inputs by calling the loader in this process.
struct InProcessExecutor: Executor {
    let slots = 1
    let batchSize = 64
    let body: @Sendable ([UInt8]) -> Outcome

    /// Runs the loader. The call is not timed: reading the clock twice would cost more than
    /// many loaders take, and no finding of an in-process call depends on its duration.
    func execute(_ input: TestInput, slot: Int) -> Execution {
        guard let bytes = input.bytes else {
            return Execution(outcome: .rejected(reason: .notFound, exitCode: 1, message: nil))
        }
        let outcome = body(bytes)
        if case .accepted(let text) = outcome, !text.isEmpty { return Execution(outcome: outcome, stdout: Array(text.utf8)) }
        return Execution(outcome: outcome)
    }
}
