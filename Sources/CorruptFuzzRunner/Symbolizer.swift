import CCorruptFuzzSpawn
import CorruptFuzzCore
import Foundation

/// Names the frames of a crash report that gives each frame as its module and offset (the crash
/// reporter corrupt-fuzz preloads into targets, a sanitizer told `symbolize=0`): function,
/// source file and line, inlined frames included, from the program's own symbol table (static
/// functions too) and debug info.
///
/// It asks `llvm-symbolizer`, which every Swift toolchain ships beside `swift` (and which the
/// sanitizers use for their own reports), kept running and asked one address at a time; each
/// address is asked once per process (``cache``). Swift's mangled names are demangled by the
/// Swift runtime (``SwiftSymbolName``). Every mode that runs a target (a process per input, a
/// worker's recovered child, the check in a fresh process, `replay`, minimization) has its
/// crashes named here, so one crash site has one signature in all of them.
///
/// Without llvm-symbolizer (not found, or it fails), frames keep their module and offset, and
/// ``unavailableReason`` says why, for the report.
public final class Symbolizer: @unchecked Sendable {
    /// The one symbolizer of this process. `@unchecked Sendable`: every use of its state holds ``lock``.
    public static let shared = Symbolizer(path: Symbolizer.findTool())

    /// The environment variable naming the llvm-symbolizer to use (`0` or `off`: none).
    public static let variable = "CORRUPT_FUZZ_SYMBOLIZER"

    /// How long one address may take to be named (a large module's debug info is read on its
    /// first address); past it, the symbolizer is stopped and its frames stay unnamed.
    static let answerDeadline: Duration = .seconds(30)

    private let lock = NSLock()
    private let path: String?
    private var process: (pid: pid_t, input: Int32, output: Int32)?
    private var pending: [UInt8] = []
    private var failure: String?
    /// Named addresses: module path, then offset.
    private var cache: [String: [UInt64: [CrashSignature.SymbolicFrame]]] = [:]

    init(path: String?) {
        self.path = path
        if path == nil { failure = "llvm-symbolizer was not found (beside swift or on PATH; \(Self.variable) names one)" }
    }

    deinit { stopProcess() }

    /// Why frames are not named, when they are not.
    public var unavailableReason: String? { lock.withLock { failure } }

    /// The frames at `offset` in `module`, innermost (inlined) first; one unnamed frame when the
    /// symbolizer cannot tell.
    public func frames(module: String, offset: UInt64) -> [CrashSignature.SymbolicFrame] {
        lock.withLock {
            if let known = cache[module]?[offset] { return known }
            let named = ask(module: module, offset: offset)
            let frames = named.isEmpty ? [CrashSignature.SymbolicFrame(module: module, offset: offset)] : named
            if cache[module, default: [:]].count < 100_000 { cache[module, default: [:]][offset] = frames }
            return frames
        }
    }

    /// Names every frame of `raw`, in order, inlined frames expanded.
    public func symbolize(_ raw: [CrashSignature.RawFrame]) -> [CrashSignature.SymbolicFrame] {
        raw.flatMap { frames(module: $0.module, offset: $0.offset) }
    }

    /// llvm-symbolizer: `CORRUPT_FUZZ_SYMBOLIZER`, else the one beside the `swift` on PATH (the
    /// toolchain's), else `llvm-symbolizer` on PATH.
    static func findTool(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let given = environment[variable], !given.isEmpty {
            if ["0", "off", "none", "no"].contains(given.lowercased()) { return nil }
            return FileManager.default.isExecutableFile(atPath: given) ? given : nil
        }
        let folders = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/swift") {
            // The toolchain's own, beside `swift` (its symlink resolved: /usr/bin/swift → /opt/swift/usr/bin/swift).
            let swift = URL(fileURLWithPath: folder + "/swift").resolvingSymlinksInPath().deletingLastPathComponent()
            let candidate = swift.appendingPathComponent("llvm-symbolizer").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/llvm-symbolizer") {
            return folder + "/llvm-symbolizer"
        }
        return nil
    }

    // MARK: - The llvm-symbolizer process (lock held)

    private func ask(module: String, offset: UInt64) -> [CrashSignature.SymbolicFrame] {
        guard failure == nil, !module.contains("\n"), !module.contains("\""), module.hasPrefix("/") else { return [] }
        if process == nil { startProcess() }
        guard let running = process else { return [] }
        let query = Array("\"\(module)\" 0x\(String(offset, radix: 16))\n".utf8)
        var written = 0
        while written < query.count {
            let n = query.withUnsafeBytes { write(running.input, $0.baseAddress! + written, query.count - written) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return give(up: "llvm-symbolizer stopped reading") }
            written += n
        }
        let deadline = ContinuousClock.now + Self.answerDeadline
        // One JSON line answers the query; anything else is the tool's warnings.
        while true {
            guard let line = nextLine(from: running.output, before: deadline) else {
                return give(up: "llvm-symbolizer did not answer within \(Self.answerDeadline)")
            }
            guard line.first == UInt8(ascii: "{") else { continue }
            return Self.parse(line, module: module, offset: offset)
        }
    }

    private func give(up reason: String) -> [CrashSignature.SymbolicFrame] {
        failure = reason
        stopProcess()
        return []
    }

    private func startProcess() {
        guard let path else { return }
        var toTool: [Int32] = [0, 0], fromTool: [Int32] = [0, 0]
        guard cf_pipe_cloexec(&toTool) == 0, cf_pipe_cloexec(&fromTool) == 0 else {
            failure = "cannot create pipes for llvm-symbolizer"
            return
        }
        let arguments = [path, "--inlining", "--functions=linkage", "--demangle", "--output-style=JSON"]
        let argv = arguments.map { strdup($0) } + [nil]
        let environment = ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        // Started as workers are (cf_worker_spawn): a child the run knows, in its own process
        // group, never taken for a target's leftover and reaped.
        let pid = argv.withUnsafeBufferPointer { a in
            envp.withUnsafeBufferPointer { e in
                cf_worker_spawn(path, a.baseAddress, e.baseAddress, toTool[0], fromTool[1], fromTool[1], 0)
            }
        }
        close(toTool[0])
        close(fromTool[1])
        guard pid > 0 else {
            close(toTool[1]); close(fromTool[0])
            failure = "cannot start \(path): \(String(cString: strerror(errno)))"
            return
        }
        process = (pid, toTool[1], fromTool[0])
        pending = []
    }

    private func stopProcess() {
        guard let running = process else { return }
        close(running.input)
        close(running.output)
        kill(-running.pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(running.pid, &status, 0) < 0, errno == EINTR {}
        cf_forget_child(running.pid)
        process = nil
    }

    private func nextLine(from fd: Int32, before deadline: ContinuousClock.Instant) -> [UInt8]? {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                return line
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: max(1, left.milliseconds)))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let n = read(fd, &buffer, buffer.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            pending += buffer[0..<n]
        }
    }

    /// The frames of one llvm-symbolizer JSON answer, innermost first.
    static func parse(_ line: [UInt8], module: String, offset: UInt64) -> [CrashSignature.SymbolicFrame] {
        struct Answer: Decodable {
            struct Symbol: Decodable {
                var FunctionName: String?
                var FileName: String?
                var Line: Int?
            }
            var Symbol: [Symbol]?
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(line)), let symbols = answer.Symbol else { return [] }
        var frames: [CrashSignature.SymbolicFrame] = []
        for (index, symbol) in symbols.enumerated() {
            let name = symbol.FunctionName.flatMap { $0.isEmpty || $0 == "??" ? nil : $0 }
            let file = symbol.FileName.flatMap { $0.isEmpty || $0 == "??" ? nil : $0 }
            frames.append(
                CrashSignature.SymbolicFrame(
                    module: module, offset: offset, function: name.map(SwiftSymbolName.readable), file: file,
                    line: symbol.Line.flatMap { $0 > 0 ? $0 : nil }, inlined: index < symbols.count - 1))
        }
        return frames.contains { $0.function != nil || $0.file != nil } ? frames : []
    }
}
