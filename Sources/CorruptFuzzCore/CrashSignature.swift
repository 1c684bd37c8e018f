/// Reads crash reports printed by a dying process and builds deduplication signatures.
///
/// Understands Swift's backtracer (`0 [ra] 0x… main + 179 in fd at f.swift:3:8`), the Swift
/// runtime's `Fatal error:` line, sanitizer reports (`#0 0x… in foo file.c:12:3`), and glibc's
/// `malloc(): corrupted top size` style aborts.
public enum CrashSignature {
    /// How many frames a signature keeps.
    public static let frameCount = 3

    /// Builds `SIGILL: Index out of range at parse(_:) ← main`.
    public static func make(signal: Int32, frames: [String], message: String?) -> String {
        var text = SignalName.of(signal)
        if let message { text += ": " + Normalize.message(message) }
        if !frames.isEmpty { text += " at " + frames.prefix(frameCount).joined(separator: " ← ") }
        return text
    }

    /// The top frames of the crashing thread in `stderr`, runtime frames skipped.
    public static func frames(in stderr: String) -> [String] {
        var frames: [String] = []
        var inCrashedThread = false
        for line in stderr.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("Thread "), line.hasSuffix("crashed:") { inCrashedThread = true; continue }
            if line.hasPrefix("Thread "), inCrashedThread, !frames.isEmpty { break }
            if let symbol = swiftBacktraceSymbol(line) ?? sanitizerSymbol(line) {
                if isRuntimeFrame(symbol) { continue }
                frames.append(symbol)
                if frames.count == frameCount { break }
            }
        }
        return frames
    }

    /// The runtime's own explanation of the crash, if it printed one.
    public static func message(in stderr: String) -> String? {
        for line in stderr.split(separator: "\n") {
            if let range = line.firstRange(of: "Fatal error: ") {
                let text = line[range.upperBound...].trimmingSpaces()
                return text.isEmpty ? "Fatal error" : String(text.prefix(160))
            }
            if let range = line.firstRange(of: "ERROR: AddressSanitizer: ") ?? line.firstRange(of: "ERROR: UndefinedBehaviorSanitizer: ") {
                return String(line[range.upperBound...].prefix(while: { $0 != " " }))
            }
            if line.contains("runtime error: ") { return String(line.prefix(160)) }
            if line.hasPrefix("malloc(): ") || line.hasPrefix("free(): ") || line.hasPrefix("double free")
                || line.hasPrefix("*** stack smashing") || line.hasPrefix("corrupted ") {
                return String(line.prefix(160))
            }
        }
        return nil
    }

    // MARK: - Frame formats

    private static func swiftBacktraceSymbol(_ line: Substring) -> String? {
        // "  3 [ra] [inlined] 0x000055707349f014 main + 179 in fd at /tmp/exp/f.swift:3:8"
        var rest = line.trimmingSpaces()
        guard let first = rest.first, first.isNumber else { return nil }
        rest = rest.drop(while: \.isNumber).trimmingSpaces()
        while rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            rest = rest[rest.index(after: close)...].trimmingSpaces()
        }
        guard rest.hasPrefix("0x") else { return nil }
        rest = rest.drop(while: { !$0.isWhitespace }).trimmingSpaces()
        guard let plus = rest.firstRange(of: " + ") ?? rest.firstRange(of: " in ") else { return nil }
        let symbol = rest[..<plus.lowerBound].trimmingSpaces()
        return symbol.isEmpty || symbol.hasPrefix("<") ? nil : String(symbol)
    }

    private static func sanitizerSymbol(_ line: Substring) -> String? {
        // "    #0 0x4f1b2c in parse_header /src/loader.c:12:3"
        let rest = line.trimmingSpaces()
        guard rest.hasPrefix("#"), let inRange = rest.firstRange(of: " in ") else { return nil }
        let symbol = rest[inRange.upperBound...].prefix(while: { $0 != " " })
        return symbol.isEmpty ? nil : String(symbol)
    }

    private static let runtimePrefixes = [
        "_assertionFailure", "closure #1 in closure #1 in _assertionFailure", "_fatalErrorMessage",
        "swift_", "_swift_", "abort", "raise", "gsignal", "__libc_", "__GI_", "__pthread_kill",
        "pthread_kill", "__interceptor_", "__sanitizer", "__asan", "__ubsan", "fatalError",
        "Swift._assertionFailure", "Swift.fatalError", "$ss17_assertionFailure", "precondition",
        "preconditionFailure", "specialized Array.subscript", "Array.subscript",
        "specialized _ArrayBuffer", "_ArrayBuffer", "ContiguousArray", "_checkIndex",
        "Swift.Array", "Swift._ArrayBuffer", "Slice.subscript", "specialized Slice.subscript",
        "_start", "main.cold",
    ]

    private static let runtimeFragments = ["_checkIndex", "_checkSubscript", "_assertionFailure", "_fatalErrorMessage", "_precondition"]

    private static func isRuntimeFrame(_ symbol: String) -> Bool {
        runtimePrefixes.contains { symbol.hasPrefix($0) } || runtimeFragments.contains { symbol.contains($0) }
    }
}

extension StringProtocol {
    /// The text without leading and trailing whitespace.
    func trimmingSpaces() -> SubSequence {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace })
        else { return self[endIndex...] }
        return self[first...last]
    }
}
