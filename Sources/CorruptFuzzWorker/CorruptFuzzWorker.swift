#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CCorruptFuzzWorker
import Foundation

/// Makes a loader executable a persistent worker for `corrupt-fuzz run --worker`: the process
/// starts once and loads input after input, instead of paying a process start (milliseconds for
/// anything that links Foundation) for every input.
///
/// ```swift
/// import CorruptFuzzWorker
///
/// CorruptFuzzWorker.serve { data in try FriendListLoader.load(data) }
/// ```
///
/// The same executable still works one input at a time: when corrupt-fuzz did not start it as
/// a worker, `serve` loads the file named by its first argument (or standard input) once, prints
/// the digest and exits 0, or prints `reason: WORD` and the message on standard error and exits
/// 1, the target protocol. So replay commands, other tools and `--target 'loader @@'` without
/// `--worker` keep working.
///
/// The protocol, for workers written in other languages (a C header with the same loop is
/// `corrupt_fuzz_worker.h` in the `CCorruptFuzzWorker` target): corrupt-fuzz sets
/// ``descriptorVariable`` to the number of the result descriptor (3), then writes one input
/// path per line on the worker's standard input. For each, the worker loads the file and writes
/// one line to the result descriptor:
///
/// - `A <digest>`: accepted (the digest is what the loader read, where a leaked canary shows);
/// - `V <message>`: accepted, but the app's own check of the loaded value failed;
/// - `R <reason> <message>`: rejected, with the reason word (`-` when there is none).
///
/// Newlines in digests and messages are written as spaces; a missing file is `R not-found`.
/// Before reading the first path, the worker writes `H 1` (its protocol version), so
/// corrupt-fuzz can tell a command that is not a worker from one that crashed; `H 1 bytes` when
/// its loader takes bytes (``serve(_:validate:digest:)``): then an input of up to
/// ``WorkerProtocol/maxSentBytes`` comes whole, as the line `#<size>` and its bytes
/// (``WorkerProtocol/bytesFeature``), not as a file.
/// Standard output and error go to a log that corrupt-fuzz reads after a crash. A crash or hang
/// ends the worker: corrupt-fuzz reports it against the input in flight and starts a new worker.
/// When corrupt-fuzz sets ``WorkerProtocol/forkServerVariable`` to 1, a single-threaded worker
/// becomes a fork server after its first input (`cf_worker_fork_server` in
/// `corrupt_fuzz_worker.h`): a child serves the inputs, and a crash costs a fork (the server
/// writes `C <wait status> <peak kB>` for the input and lets the next child, forked ahead of
/// need, serve). On Linux, with corrupt-fuzz's crash reporter preloaded, a child lives through a
/// crash (a failed Swift check, an abort, a memory fault) up to ``WorkerProtocol/recoverVariable``
/// times: it abandons the input's stack and writes `C <wait status> <peak kB> r` itself.
/// State must not leak from one input to the next: corrupt-fuzz re-runs an earlier input now and
/// then and reports the campaign's stability.
public enum CorruptFuzzWorker {
    /// Set by corrupt-fuzz to the result descriptor's number when it starts a worker.
    public static let descriptorVariable = WorkerProtocol.descriptorVariable

    /// Whether corrupt-fuzz started this process as a worker.
    public static var isWorker: Bool { resultDescriptor != nil }

    static var resultDescriptor: Int32? {
        ProcessInfo.processInfo.environment[descriptorVariable].flatMap { Int32($0) }
    }

    /// What one load did, in the protocol's words.
    public enum Reply: Sendable, Hashable {
        case accepted(digest: String)
        case acceptedInvalid(message: String)
        case rejected(reason: String?, message: String)

        /// The protocol line, without its newline.
        public var line: String {
            switch self {
            case .accepted(let digest): "A " + Self.flatten(digest)
            case .acceptedInvalid(let message): "V " + Self.flatten(message)
            case .rejected(let reason, let message): "R \(reason.map(Self.word) ?? "-") " + Self.flatten(message)
            }
        }

        static func flatten(_ text: String) -> String {
            String(text.prefix(2000).map { $0.isNewline ? " " : $0 })
        }

        static func word(_ reason: String) -> String {
            let word = reason.filter { !$0.isWhitespace }
            return word.isEmpty ? "-" : word
        }
    }

    /// Loads inputs with `load` until corrupt-fuzz closes standard input (as a worker), or
    /// loads the one file named on the command line, or standard input (otherwise); then exits.
    /// - Parameters:
    ///   - load: The app's loader: returns the loaded value or throws why it cannot. An error
    ///     with a `reason` property (a String or a String-backed enum) gives the reason word.
    ///     A missing file is `not-found` without calling it.
    ///   - validate: The app's own check of a loaded value (`validateUserData`), nil when fine.
    ///   - digest: What the loaded value shows of the file (default: its description).
    ///
    /// As a worker, it gets an input's bytes sent whole (``WorkerProtocol/bytesFeature``): no
    /// file is written or read for an input of up to ``WorkerProtocol/maxSentBytes``.
    public static func serve<Value>(
        _ load: (Data) throws -> Value, validate: ((Value) -> String?)? = nil,
        digest: (Value) -> String = { String(String(describing: $0).prefix(4096)) }
    ) -> Never {
        func fromFile(_ path: String?) throws -> Value {
            let contents = path.map { FileManager.default.contents(atPath: $0) } ?? FileHandle.standardInput.readDataToEndOfFile()
            guard let data = contents else { throw MissingFile() }
            return try load(data)
        }
        if let descriptor = resultDescriptor {
            serveInputs(
                resultDescriptor: descriptor, takesBytes: true, bytes: { data in reply(data, load: load, validate: validate, digest: digest) },
                paths: { path in reply(path, load: fromFile, validate: validate, digest: digest) })
        }
        loadOnce { path in reply(path, load: fromFile, validate: validate, digest: digest) }
    }

    /// ``serve(_:validate:digest:)`` for a loader that opens the file itself, as apps do: `load`
    /// gets the input's path (nil: read standard input), and finds out for itself when there is
    /// no file.
    public static func serveFiles<Value>(
        _ load: (String?) throws -> Value, validate: ((Value) -> String?)? = nil,
        digest: (Value) -> String = { String(String(describing: $0).prefix(4096)) }
    ) -> Never {
        if let descriptor = resultDescriptor {
            serveInputs(resultDescriptor: descriptor) { path in reply(path, load: load, validate: validate, digest: digest) }
        }
        loadOnce { path in reply(path, load: load, validate: validate, digest: digest) }
    }

    /// The file the input names does not exist (``serve(_:validate:digest:)`` says `not-found`).
    struct MissingFile: Error, CustomStringConvertible {
        let reason = "not-found"
        var description: String { "the file does not exist" }
    }

    /// One load, as a reply.
    public static func reply<Input, Value>(
        _ input: Input, load: (Input) throws -> Value, validate: ((Value) -> String?)?, digest: (Value) -> String
    ) -> Reply {
        do {
            let value = try load(input)
            if let message = validate?(value), !message.isEmpty { return .acceptedInvalid(message: message) }
            return .accepted(digest: digest(value))
        } catch {
            return .rejected(reason: reasonWord(of: error), message: String(describing: error))
        }
    }

    /// The reason word of an error, as apps write their errors. The first rule that gives one:
    ///
    /// 1. a stored `reason` property: a String, or a String-backed value (`Reason`-like, an
    ///    enum with raw values);
    /// 2. the error is itself an enum with String raw values that are words
    ///    (`enum LoadError: String, Error { case corrupt, notFound = "not-found" }`);
    /// 3. `corrupt` for Codable's decoding errors; `not-found`, `corrupt` or `too-large` for
    ///    Foundation's file and property-list errors;
    /// 4. a `LocalizedError`'s `failureReason` or `errorDescription`, or a
    ///    `CustomStringConvertible` error's `description`, that starts with one of the words
    ///    corrupt-fuzz knows (``knownWords``), alone or before `:` (`"corrupt: bad header"`);
    /// 5. an enum's case name, in the words' spelling (`case unsupportedVersion(found: 3)` gives
    ///    `unsupported-version`).
    ///
    /// Else nil (the type's name stands in). A computed `reason` property is not stored, so
    /// reflection cannot see it: make it stored, or start the description with the word.
    public static func reasonWord(of error: any Error) -> String? {
        let mirror = Mirror(reflecting: error)
        let property = mirror.children.first { $0.label == "reason" }?.value
        if let word = (property as? String) ?? (property as? any RawRepresentable<String>)?.rawValue { return word }
        if let raw = (error as? any RawRepresentable<String>)?.rawValue, isWord(raw) { return raw }
        if error is DecodingError { return "corrupt" }
        if let cocoa = error as? CocoaError {
            switch cocoa.code {
            case .fileReadNoSuchFile, .fileNoSuchFile: return "not-found"
            case .fileReadCorruptFile, .propertyListReadCorrupt: return "corrupt"
            case .fileReadTooLarge: return "too-large"
            default: break
            }
        }
        if let localized = error as? any LocalizedError {
            for text in [localized.failureReason, localized.errorDescription] {
                if let text, let word = knownWord(startingWith: text) { return word }
            }
        }
        if let description = ownDescription(error), let word = knownWord(startingWith: description) { return word }
        if mirror.displayStyle == .enum {
            let name = String(describing: error).prefix { $0 != "(" }
            if let word = Self.kebab(String(name)), isWord(word) { return word }
        }
        return nil
    }

    /// The description a value gives of itself, if its type is CustomStringConvertible. Generic,
    /// so the cast asks the error's own type (a cast of `any Error` always succeeds here, by
    /// bridging to NSError).
    static func ownDescription<T>(_ value: T) -> String? {
        (value as? any CustomStringConvertible)?.description
    }

    /// The reason words corrupt-fuzz's oracles and formats use.
    public static let knownWords = ["not-found", "empty", "corrupt", "unsupported-version", "too-large"]

    /// A word: lowercase letters, digits and hyphens, starting with a letter, at most 40 long.
    static func isWord(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, ("a"..."z").contains(first), text.utf8.count <= 40 else { return false }
        return text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    /// The known word `text` starts with, alone or followed by `:`, a space, `,`, `.` or `(`.
    static func knownWord(startingWith text: String) -> String? {
        let lowered = text.lowercased()
        for word in knownWords where lowered.hasPrefix(word) {
            let rest = lowered.dropFirst(word.count)
            if rest.isEmpty || [":", " ", ",", ".", "("].contains(rest.first!) { return word }
        }
        return nil
    }

    /// `unsupportedVersion` as `unsupported-version`; nil for a name that is not an identifier.
    static func kebab(_ name: String) -> String? {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        var word = ""
        for character in name {
            if character.isUppercase {
                if !word.isEmpty { word.append("-") }
                word += character.lowercased()
            } else if character == "_" {
                word.append("-")
            } else {
                word.append(character)
            }
        }
        return word
    }

    /// The worker loop: a path per line on standard input, a reply per line on `descriptor`,
    /// until standard input closes; then exits.
    public static func serveInputs(resultDescriptor descriptor: Int32, _ run: (String) -> Reply) -> Never {
        serveInputs(resultDescriptor: descriptor, takesBytes: false, bytes: { _ in .rejected(reason: nil, message: "no bytes") }, paths: run)
    }

    /// The worker loop, for a loader that also takes an input's bytes (`takesBytes`: the hello
    /// says ``WorkerProtocol/bytesFeature``, and inputs sent whole go to `bytes`) or only paths.
    static func serveInputs(
        resultDescriptor descriptor: Int32, takesBytes: Bool, bytes: (Data) -> Reply, paths run: (String) -> Reply
    ) -> Never {
        func send(_ line: String) {
            let bytes = Array((line + "\n").utf8)
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
                if n < 0, errno == EINTR { continue }
                if n <= 0 { exit(0) }  // corrupt-fuzz is gone
                written += n
            }
        }
        send(takesBytes ? WorkerProtocol.bytesHello : WorkerProtocol.hello)
        // The loop never returns: the closures are stored for it, and never checked for escaping.
        withoutActuallyEscaping(run) { run -> Never in
            withoutActuallyEscaping(bytes) { bytes -> Never in
                serveLoop(GuardedRun(run: run, runBytes: takesBytes ? bytes : nil), descriptor, send)
            }
        }
    }

    /// The worker loop's inputs, run by `call` (stored, not captured: a crash a child lives
    /// through, in `cf_worker_guarded`, abandons the frames that run it, with what they retained).
    private static func serveLoop(_ call: GuardedRun, _ descriptor: Int32, _ send: (String) -> Void) -> Never {
        var served = 0
        while let line = readLine(strippingNewline: true) {
            // Retired (WorkerProtocol.retireLine): a child that lived through a crash makes way
            // for one that did not.
            if line == WorkerProtocol.retireLine { cf_worker_retire() }
            // An input sent whole (`#<size>`, then its bytes), to a loader that takes bytes.
            if call.runBytes != nil, let size = WorkerProtocol.sentSize(line.utf8) {
                guard let sent = cf_worker_read_sent_bytes(size) else { exit(0) }  // corrupt-fuzz is gone
                call.bytes = Data(bytesNoCopy: sent, count: size, deallocator: .free)
            } else {
                call.bytes = nil
                call.path = line
            }
            let crashed = cf_worker_guarded({ Unmanaged<GuardedRun>.fromOpaque($0!).takeUnretainedValue().start() }, Unmanaged.passUnretained(call).toOpaque())
            // An instrumented loader's 8-bit counters into corrupt-fuzz's edge map.
            cf_coverage_collect()
            guard crashed == 0, let reply = call.reply else {
                // Lived through a crash (a fork server's child, WorkerProtocol.recoverVariable):
                // this input's reply says it crashed.
                var line = [CChar](repeating: 0, count: 64)
                let count = cf_worker_recovered_line(&line, line.count, crashed)
                send(String(decoding: line[0..<Int(count)].map { UInt8(bitPattern: $0) }.dropLast(), as: UTF8.self))
                continue
            }
            call.reply = nil
            call.bytes = nil
            send(reply.line)
            served += 1
            // After the first input, when the loader's code, its types' metadata and its lazy
            // globals are warm: every forked child starts from there (a fork server, when
            // corrupt-fuzz asked for one).
            if served == 1 { cf_worker_fork_server(descriptor) }
        }
        exit(0)
    }

    /// One input's run, as `cf_worker_guarded` calls it: the file at ``path``, or the ``bytes``
    /// sent whole.
    final class GuardedRun {
        let run: (String) -> Reply
        let runBytes: ((Data) -> Reply)?
        var path = ""
        var bytes: Data?
        var reply: Reply?

        init(run: @escaping (String) -> Reply, runBytes: ((Data) -> Reply)?) {
            self.run = run
            self.runBytes = runBytes
        }

        func start() {
            if let bytes, let runBytes { reply = runBytes(bytes) } else { reply = run(path) }
        }
    }

    /// The protocol version a worker announces in its first line, `H 1`.
    public static var protocolVersion: Int { WorkerProtocol.version }

    /// One input, the target protocol's way: the file named by the first argument, or
    /// standard input (nil).
    static func loadOnce(_ run: (String?) -> Reply) -> Never {
        let arguments = CommandLine.arguments
        switch run(arguments.count > 1 ? arguments[1] : nil) {
        case .accepted(let digest):
            print(digest)
            exit(0)
        case .acceptedInvalid(let message):
            // Loaded, but the app's own check says the value is wrong: a one-shot run accepts
            // (exit 0) and says so, for the app's validator to judge.
            print(message)
            exit(0)
        case .rejected(let reason, let message):
            FileHandle.standardError.write(Data("reason: \(reason.map(Reply.word) ?? "-")\n\(message)\n".utf8))
            exit(1)
        }
    }
}
