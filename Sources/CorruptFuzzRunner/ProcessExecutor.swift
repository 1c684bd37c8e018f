import CCorruptFuzzSpawn
import CorruptFuzzCore
import Foundation

/// Runs one input against a command, one process per input, observed from outside.
///
/// Each slot (one per parallel worker) owns a private temporary directory and its own output
/// buffers, so slots run concurrently without locks. The target runs in its own process group;
/// at the deadline the whole group is killed with SIGKILL, and whatever the target leaves
/// behind when it exits is killed too. Output beyond ``Limits/outputCap`` is read and dropped.
public final class ProcessExecutor: Executor, @unchecked Sendable {
    /// Resource limits for each run.
    public struct Limits: Sendable, Hashable, Codable {
        /// The deadline of one run, in milliseconds.
        public var timeoutMilliseconds: Int
        /// The address-space limit in bytes (RLIMIT_AS); 0 for none.
        public var memoryLimit: Int64
        /// How many bytes of stdout and of stderr are kept.
        public var outputCap: Int

        public init(timeoutMilliseconds: Int = 1000, memoryLimit: Int64 = 1 << 30, outputCap: Int = 1 << 20) {
            self.timeoutMilliseconds = timeoutMilliseconds
            self.memoryLimit = memoryLimit
            self.outputCap = outputCap
        }
    }

    public let command: TargetCommand
    public let limits: Limits
    public let slots: Int
    /// The folder holding each slot's input file; removed when the executor goes away.
    public let workDirectory: URL

    private let inputPaths: [String]
    private let missingPaths: [String]
    private let argvs: [[UnsafeMutablePointer<CChar>?]]
    private let missingArgvs: [[UnsafeMutablePointer<CChar>?]]
    /// The environment of each slot's runs (each names its slot's coverage segment).
    private let envps: [[UnsafeMutablePointer<CChar>?]]
    /// The slots' coverage maps, when the campaign reads coverage.
    private let coverage: CoverageSlots?
    /// The RLIMIT_AS of each run: the memory limit, or none for a sanitized executable (whose
    /// sanitizer gets the limit instead, ``SanitizedExecutable``).
    private let addressSpaceLimit: Int64
    private let outBuffers: [UnsafeMutablePointer<UInt8>]
    private let errBuffers: [UnsafeMutablePointer<UInt8>]

    /// Creates an executor.
    /// - Parameters:
    ///   - command: The target; `@@` is replaced by each input's path.
    ///   - limits: Deadline, memory limit and output cap.
    ///   - slots: How many runs may go on at once (one per worker thread).
    ///   - fileExtension: The input files' extension, for loaders that look at it.
    ///   - environment: Extra environment variables for the target.
    ///   - coverage: Whether each run's edge coverage is read (from a target built with AFL++'s
    ///     `afl-clang-fast` or linking `corrupt_fuzz_coverage.c`), into ``Execution/coverage``.
    public init(
        command: TargetCommand, limits: Limits = .init(), slots: Int = 1, fileExtension: String = "",
        environment: [String: String] = [:], coverage: Bool = false
    ) throws(CorruptFuzzError) {
        self.command = command
        self.limits = limits
        self.slots = max(1, slots)
        workDirectory = try ScratchFolder.make(prefix: "corrupt-fuzz")
        let directory = workDirectory.path
        let suffix = fileExtension.isEmpty ? "" : ".\(fileExtension)"
        inputPaths = (0..<self.slots).map { "\(directory)/input-\($0)\(suffix)" }
        missingPaths = (0..<self.slots).map { "\(directory)/missing-\($0)\(suffix)" }
        argvs = inputPaths.map { Self.cStrings(command.arguments(forInputAt: $0)) }
        missingArgvs = missingPaths.map { Self.cStrings(command.arguments(forInputAt: $0)) }
        addressSpaceLimit = SanitizedExecutable.addressSpaceLimit(forExecutableAt: command.executablePath, limit: limits.memoryLimit)
        let coverage = coverage ? try CoverageSlots(slots: self.slots) : nil
        self.coverage = coverage
        let base = Self.targetEnvironment(adding: environment, executable: command.executablePath, limit: limits.memoryLimit)
        envps = (0..<self.slots).map { slot in
            Self.cStrings(base.merging(coverage?.environment(slot: slot) ?? [:]) { $1 }.map { "\($0.key)=\($0.value)" }.sorted())
        }
        outBuffers = (0..<self.slots).map { _ in .allocate(capacity: max(1, limits.outputCap)) }
        errBuffers = (0..<self.slots).map { _ in .allocate(capacity: max(1, limits.outputCap)) }
    }

    deinit {
        for argv in argvs + missingArgvs { argv.forEach { free($0) } }
        envps.joined().forEach { free($0) }
        outBuffers.forEach { $0.deallocate() }
        errBuffers.forEach { $0.deallocate() }
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// The environment every target runs in: this process's, with crash reports without prompts
    /// or colour, sanitizers that abort (so that a report is a crash), the crash reporter of
    /// targets without one preloaded (``PreloadLibrary/crashHandler``; `CORRUPT_FUZZ_CRASH_HANDLER=0`
    /// leaves it out), then `extra` (whose `LD_PRELOAD` is added to the crash reporter's).
    /// For a sanitized `executable`, the sanitizer's options carry `limit` (``SanitizedExecutable``).
    public static func targetEnvironment(adding extra: [String: String], executable: String? = nil, limit: Int64 = 0) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        let handler = crashHandler()
        // Swift's backtracer off when corrupt-fuzz's crash reporter names the frames (its report
        // takes microseconds, goes through libc's abort(), and reads the same in every mode);
        // the user's SWIFT_BACKTRACE wins.
        env["SWIFT_BACKTRACE"] =
            env["SWIFT_BACKTRACE"] ?? (handler != nil ? "enable=no" : "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none,limit=128")
        // A sanitizer runtime linked dynamically (gcc's) refuses to start when another library
        // is preloaded before it, unless told not to check.
        var asan = env["ASAN_OPTIONS"] ?? "abort_on_error=1:detect_leaks=0:allocator_may_return_null=1"
        if !asan.contains("verify_asan_link_order") { asan += (asan.isEmpty ? "" : ":") + "verify_asan_link_order=0" }
        env["ASAN_OPTIONS"] = asan
        env["UBSAN_OPTIONS"] = env["UBSAN_OPTIONS"] ?? "halt_on_error=1:abort_on_error=1:print_stacktrace=1"
        var preload = [handler].compactMap { $0 } + (env["LD_PRELOAD"].map { [$0] } ?? [])
        for (key, value) in extra {
            if key == "LD_PRELOAD" { preload.append(value) } else { env[key] = value }
        }
        if !preload.isEmpty { env["LD_PRELOAD"] = preload.filter { !$0.isEmpty }.joined(separator: ":") }
        guard let executable else { return env }
        return SanitizedExecutable.environment(env, forExecutableAt: executable, limit: limit)
    }

    /// The crash reporter's path, unless `CORRUPT_FUZZ_CRASH_HANDLER` is `0`, `off` or `none`, or
    /// it cannot be had here (no C compiler): then targets run without it, as before.
    static func crashHandler() -> String? {
        #if os(Linux)
            let setting = ProcessInfo.processInfo.environment[PreloadLibrary.crashHandler.variable] ?? ""
            if ["0", "off", "none", "no"].contains(setting.lowercased()) { return nil }
            return try? PreloadLibrary.crashHandler.path()
        #else
            return nil
        #endif
    }

    /// Runs `command` once, with each `placeholder` in its arguments replaced by `value` and
    /// `environment` added (a crash-point run, a folder check), as ``execute(_:slot:)`` runs
    /// an input: the same environment, limits and classification; standard input is empty.
    public static func runOnce(
        _ command: TargetCommand, replacing placeholder: String, with value: String, environment: [String: String] = [:], limits: Limits
    ) throws(CorruptFuzzError) -> Execution {
        let argv = cStrings([command.executablePath] + command.words.dropFirst().map { $0.replacing(placeholder, with: value) })
        let envp = cStrings(
            targetEnvironment(adding: environment, executable: command.executablePath, limit: limits.memoryLimit).map { "\($0.key)=\($0.value)" }.sorted())
        let out = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, limits.outputCap))
        let err = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, limits.outputCap))
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
            out.deallocate()
            err.deallocate()
        }
        let stdinFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if stdinFD >= 0 { close(stdinFD) } }
        return try spawn(
            command.executablePath, argv: argv, envp: envp, stdin: stdinFD, limits: limits,
            addressSpace: SanitizedExecutable.addressSpaceLimit(forExecutableAt: command.executablePath, limit: limits.memoryLimit), out: out, err: err)
    }

    /// Starts one run and waits for it, its output into `out` and `err`.
    private static func spawn(
        _ executable: String, argv: [UnsafeMutablePointer<CChar>?], envp: [UnsafeMutablePointer<CChar>?], stdin: Int32, limits: Limits,
        cpuTimeoutMilliseconds: Int = 0, addressSpace: Int64, out: UnsafeMutablePointer<UInt8>, err: UnsafeMutablePointer<UInt8>
    ) throws(CorruptFuzzError) -> Execution {
        var result = cf_result()
        result.out.bytes = out
        result.out.cap = limits.outputCap
        result.err.bytes = err
        result.err.cap = limits.outputCap
        let status = argv.withUnsafeBufferPointer { argvPointer in
            envp.withUnsafeBufferPointer { envPointer in
                cf_run(
                    executable, argvPointer.baseAddress, envPointer.baseAddress, stdin, addressSpace,
                    Int32(clamping: limits.timeoutMilliseconds), Int32(clamping: cpuTimeoutMilliseconds), &result)
            }
        }
        if status != 0 || result.end == CF_SPAWN_FAILED {
            let reason = String(cString: strerror(result.code))
            throw CorruptFuzzError(.unusableTarget, "cannot run \(executable): \(reason)")
        }
        let stdout = Array(UnsafeBufferPointer(start: result.out.bytes, count: result.out.length))
        let stderr = Array(UnsafeBufferPointer(start: result.err.bytes, count: result.err.length))
        let outcome = classify(result, stdout: stdout, stderr: stderr, limits: limits)
        let failed = result.end == CF_SIGNALED || (result.end == CF_EXITED && result.code != 0)
        if failed,
            let error = SanitizedExecutable.startFailure(executable, stderr: String(decoding: stderr.prefix(4096), as: UTF8.self))
        {
            throw error
        }
        var execution = Execution(outcome: outcome, stdout: stdout, stderr: stderr, microseconds: result.elapsed_us)
        execution.starved = result.end == CF_TIMED_OUT && result.starved != 0
        return execution
    }

    /// Runs `input` in `slot`.
    /// - Throws: ``CorruptFuzzError`` when the target cannot be started or the input file
    ///   cannot be written; a target that misbehaves is an ``Outcome``, never an error.
    public func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
        try execute(input, slot: slot, limits: limits)
    }

    /// Runs `input` again with the confirmation deadline, in CPU time (every run is a fresh
    /// process).
    public func confirmHang(_ input: TestInput, slot: Int, margin: Int) throws(CorruptFuzzError) -> Execution {
        let confirmation = ConfirmationDeadline(timeout: limits.timeoutMilliseconds, margin: margin)
        var longer = limits
        longer.timeoutMilliseconds = confirmation.wallMilliseconds
        var execution = try execute(input, slot: slot, limits: longer, cpuTimeoutMilliseconds: confirmation.cpuMilliseconds)
        if case .hung = execution.outcome { execution.outcome = .hung(milliseconds: confirmation.cpuMilliseconds) }
        return execution
    }

    private func execute(_ input: TestInput, slot: Int, limits: Limits, cpuTimeoutMilliseconds: Int = 0) throws(CorruptFuzzError) -> Execution {
        let path = inputPaths[slot]
        var stdinFD: Int32 = -1
        if let bytes = input.bytes {
            try Self.writeFile(bytes, to: path)
            if !command.takesPath {
                stdinFD = open(path, O_RDONLY | O_CLOEXEC)
                guard stdinFD >= 0 else { throw CorruptFuzzError(.system, "cannot reopen \(path): \(String(cString: strerror(errno)))") }
            }
        } else {
            unlink(missingPaths[slot])
        }
        defer { if stdinFD >= 0 { close(stdinFD) } }

        let argv = input.bytes == nil ? missingArgvs[slot] : argvs[slot]
        coverage?.beforeRun(slot: slot)
        var execution = try Self.spawn(
            command.executablePath, argv: argv, envp: envps[slot], stdin: stdinFD, limits: limits, cpuTimeoutMilliseconds: cpuTimeoutMilliseconds,
            addressSpace: limits.memoryLimit == 0 ? 0 : addressSpaceLimit, out: outBuffers[slot], err: errBuffers[slot])
        execution.coverage = coverage?.afterRun(slot: slot, input: input)
        return execution
    }

    // MARK: - Classification

    /// Messages that mean an allocation failed: the run is a memory blow-up, not a crash.
    static let outOfMemoryMarkers = [
        "Could not allocate memory", "could not allocate memory", "std::bad_alloc", "MemoryError",
        "out of memory", "Out of memory", "Cannot allocate memory", "allocation-size-too-big",
        "requested allocation size", "out-of-memory", "failed to allocate", "rss limit exhausted",
    ]

    /// Whether a report may be of running out of memory (a marker in `stderr`, or a peak near
    /// the limit): a search of the bytes, for a crash whose report ``classify(_:stdout:stderr:limits:)``
    /// is not asked to read (a persistent worker's cheap report).
    static func mayBeOutOfMemory(stderr: [UInt8], peakKilobytes: Int64, limits: Limits) -> Bool {
        if limits.memoryLimit > 0, peakKilobytes * 1024 >= limits.memoryLimit * 9 / 10 { return true }
        return stderr.withUnsafeBytes { text in outOfMemoryMarkerBytes.contains { Self.find($0, in: text) } }
    }

    /// Whether `needle` (not empty) occurs in `text`: memchr for its first byte, then memcmp.
    private static func find(_ needle: [UInt8], in text: UnsafeRawBufferPointer) -> Bool {
        guard let base = text.baseAddress, needle.count <= text.count else { return false }
        return needle.withUnsafeBytes { wanted in
            var from = 0
            let last = text.count - needle.count
            while from <= last, let hit = memchr(base + from, Int32(needle[0]), last - from + 1) {
                let at = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + at, wanted.baseAddress!, needle.count) == 0 { return true }
                from = at + 1
            }
            return false
        }
    }

    private static let outOfMemoryMarkerBytes = outOfMemoryMarkers.map { Array($0.utf8) }

    static let sanitizerMarkers = [
        "ERROR: AddressSanitizer", "ERROR: MemorySanitizer", "ERROR: ThreadSanitizer",
        "ERROR: LeakSanitizer", "runtime error: ", "ERROR: UndefinedBehaviorSanitizer",
    ]

    static func classify(_ r: cf_result, stdout: [UInt8], stderr: [UInt8], limits: Limits) -> Outcome {
        let errText = String(decoding: stderr, as: UTF8.self)
        let peakKB = Int64(r.max_rss_kb)
        func oomMessage() -> String? {
            if let marker = outOfMemoryMarkers.first(where: { errText.contains($0) }) {
                return errText.split(whereSeparator: \.isNewline).first { $0.contains(marker) }.map { String($0.prefix(200)) } ?? marker
            }
            if limits.memoryLimit > 0, peakKB * 1024 >= limits.memoryLimit * 9 / 10 {
                return "peak memory \(peakKB / 1024) MiB of a \(limits.memoryLimit >> 20) MiB limit"
            }
            return nil
        }
        switch r.end {
        case CF_TIMED_OUT:
            return .hung(milliseconds: limits.timeoutMilliseconds)
        case CF_SIGNALED:
            if let message = oomMessage() { return .outOfMemory(peakKilobytes: peakKB, message: message) }
            return crash(signal: r.code, errText)
        default:
            if r.code == 0 {
                return .accepted(digest: String(decoding: stdout, as: UTF8.self))
            }
            if sanitizerMarkers.contains(where: { errText.contains($0) }) {
                if let message = oomMessage() { return .outOfMemory(peakKilobytes: peakKB, message: message) }
                return crash(signal: SIGABRT, errText)
            }
            if let message = oomMessage() { return .outOfMemory(peakKilobytes: peakKB, message: message) }
            let (reason, message) = ReasonLine.parse(errText)
            return .rejected(reason: reason, exitCode: r.code, message: message)
        }
    }

    /// A crash's signal, top frames and message; without a message, the top frame names the
    /// trap site, so distinct traps in one function stay distinct findings.
    ///
    /// A report whose frames are modules and offsets (corrupt-fuzz's crash reporter, a
    /// sanitizer's unsymbolized report) has them named here (``Symbolizer``), the same way in
    /// every mode that runs a target; a report that names its frames itself (Swift's
    /// backtracer, when `SWIFT_BACKTRACE` turns it on; a sanitizer that symbolized) is read as
    /// it is.
    static func crash(signal: Int32, _ stderr: String, symbolizer: Symbolizer = .shared) -> Outcome {
        let message = CrashSignature.message(in: stderr)
        let raw = CrashSignature.rawFrames(in: stderr)
        if !raw.isEmpty {
            let frames = symbolizer.symbolize(raw)
            if signal == SIGSEGV || signal == SIGBUS || message == "stack-overflow", let function = CrashSignature.recursion(in: frames) {
                return .crashed(signal: signal, frames: [function], message: "stack overflow (unbounded recursion)")
            }
            // Without a message, the site (a line, or the instruction) tells traps apart.
            let chosen = CrashSignature.signatureFrames(frames, site: message == nil)
            return .crashed(signal: signal, frames: chosen.frames, message: message ?? chosen.runtimeFailure)
        }
        // A stack overflow (a fault, or a sanitizer's report of one; a trap 16 calls deep in a
        // recursive parser is that trap): one bug wherever the stack happened to run out.
        if signal == SIGSEGV || signal == SIGBUS || message == "stack-overflow", let function = CrashSignature.recursion(in: stderr) {
            return .crashed(signal: signal, frames: [function], message: "stack overflow (unbounded recursion)")
        }
        return .crashed(signal: signal, frames: CrashSignature.frames(in: stderr, site: message == nil), message: message)
    }

    // MARK: - Helpers

    private static func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] {
        strings.map { strdup($0) } + [nil]
    }

    static func writeFile(_ bytes: [UInt8], to path: String) throws(CorruptFuzzError) {
        // Written over and then cut to length, not truncated first: ext4 writes a file back to
        // disk when it is closed after a truncation to zero, which costs more than most loaders.
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CorruptFuzzError(.system, "cannot write input file \(path): \(String(cString: strerror(errno)))") }
        defer {
            _ = ftruncate(fd, off_t(bytes.count))
            close(fd)
        }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CorruptFuzzError(.system, "cannot write input file \(path): \(String(cString: strerror(errno)))")
            }
            written += n
        }
    }
}

/// Reads the target protocol's reason line: the first stderr line `reason: WORD`. Libraries
/// log before the loader gets to say why (Foundation's NSKeyedUnarchiver does), so the reason
/// line need not be the very first line.
public enum ReasonLine {
    /// Returns the reason word of the first `reason:` line, if any, and the first non-empty line
    /// after it (or the first non-empty line, without a reason line).
    public static func parse(_ stderr: String) -> (reason: Reason?, message: String?) {
        var lines = stderr.split(whereSeparator: \.isNewline)[...]
        var reason: Reason?
        if let index = lines.firstIndex(where: { $0.hasPrefix("reason:") }) {
            let word = lines[index].dropFirst("reason:".count).trimmingCharacters(in: .whitespaces)
            reason = word.isEmpty ? nil : Reason(String(word.prefix(64)))
            lines = lines[(index + 1)...]
        }
        let message = lines.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { String($0.trimmingCharacters(in: .whitespaces).prefix(300)) }
        return (reason, message)
    }
}
