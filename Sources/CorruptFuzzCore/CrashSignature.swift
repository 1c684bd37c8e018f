/// Reads crash reports printed by a dying process and builds deduplication signatures.
///
/// Understands Swift's backtracer (`0 [ra] 0x… main + 179 in fd at f.swift:3:8`), the Swift
/// runtime's `Fatal error:` line, sanitizer reports (`#0 0x… in foo file.c:12:3`), and glibc's
/// `malloc(): corrupted top size` style aborts.
public enum CrashSignature {
    /// How many frames a signature keeps.
    public static let frameCount = 3

    /// Builds `SIGILL: Index out of range at parse(_:) ← main`, or, when the top frame names its
    /// source line (`parse(_:) at Loader.swift:51`), `SIGILL at Loader.swift:51`: the line is the
    /// bug, whichever function the optimizer attributed it to (an inlined and an outlined copy of
    /// one line have other function names and other callers).
    public static func make(signal: Int32, frames: [String], message: String?) -> String {
        var text = SignalName.of(signal)
        if let message { text += ": " + Normalize.message(message) }
        if let top = frames.first, let at = lastAt(in: top), sourceLine(top[at...]) != nil {
            return text + " at " + top[at...]
        }
        if !frames.isEmpty { text += " at " + frames.prefix(frameCount).joined(separator: " ← ") }
        return text
    }

    /// Where the text after the last ` at ` in `frame` starts (a search from the end over its
    /// UTF-8: this runs for every crash a campaign sees).
    static func lastAt(in frame: String) -> String.Index? {
        let utf8 = frame.utf8
        let pattern = Array(" at ".utf8)
        var end = utf8.endIndex
        while let start = utf8.index(end, offsetBy: -pattern.count, limitedBy: utf8.startIndex) {
            if utf8[start..<end].elementsEqual(pattern) { return end }
            end = utf8.index(before: end)
        }
        return nil
    }

    /// The top frames of the crashing thread in `stderr`, runtime frames skipped.
    ///
    /// With `site`, the top frame also names the trap site: its source line when the backtrace
    /// has one (`loadHabits(_:) at main.swift:9`), else its offset in the function
    /// (`loadHabits(_:) + 59`). An optimized build traps without a runtime message, so two
    /// unrelated out-of-range reads in one function differ only there; callers ask for the site
    /// when ``message(in:)`` found nothing.
    public static func frames(in stderr: String, site: Bool = false) -> [String] {
        let all = crashedThreadFrames(in: stderr)
        // The loader's frames end where corrupt-fuzz's worker loop calls it: a persistent worker
        // and the same executable run once for a replay call it from different places.
        let loader = all.prefix { !isWorkerLoopFrame($0.symbol) }
        var kept = Array((loader.isEmpty ? all[...] : loader).filter { !isRuntimeFrame($0.symbol) }.prefix(frameCount))
        // Frames the crash reporter of C targets names by address (`parse+0x34`, `parser+0x11b4`):
        // only the top one keeps its offset (the site), and only when the site is asked for; a
        // caller's offset is its call site, which would split one bug by the paths to it, and a
        // caller known only by its module says nothing.
        for index in kept.indices.reversed() where kept[index].addressed && !(site && index == 0) {
            if kept[index].moduleOnly {
                kept.remove(at: index)
            } else if let plus = kept[index].symbol.range(of: "+0x", options: .backwards) {
                kept[index].symbol = String(kept[index].symbol[..<plus.lowerBound])
            }
        }
        var frames = kept.map(\.symbol)
        guard site, let top = kept.first else { return frames }
        if !top.site.isEmpty {
            frames[0] += top.site
        } else if let lined = kept.first(where: { $0.site.hasPrefix(" at ") }) {
            // An inlined top frame without a line: the line of the first frame that has one
            // (the function it was inlined into), so that the inlined and the outlined copy of
            // one line are one site.
            frames[0] += lined.site
        } else if let physical = all.first(where: { !$0.inlined }), let offset = physical.offset {
            // The first frame that is not inlined holds the crashing instruction: its offset
            // names the trap site when the top frame, inlined, has neither a line nor an offset.
            frames[0] += " [\(physical.symbol) + \(offset)]"
        }
        return frames
    }

    /// A cheap key of a crash site: the signal and the frames (up to 64) as module file name and
    /// offset, as the crash reporter of C targets and an unsymbolized sanitizer report print them
    /// (`#0 0x55d2 in (/work/parser+0x11b4)`), hashed; nil when the report names no frame that
    /// way. Offsets within a module are the same in every run of the same binary, so two crashes
    /// with one key crashed at the same instruction by the same path, and the outcome made for
    /// one (its frames named) is the other's too. Frames of the C library and the Swift runtime
    /// on top (``isRuntimeModule(_:)``: `abort`, `raise`, `__assert_fail`, `swift::fatalError`)
    /// are passed over: every failed `assert` of a loader has the same four of them. What the
    /// program printed before the report is in the key too (its digits aside), so that a key's
    /// crashes share their message. It reads the report's bytes once and builds no strings: it
    /// runs for every crash of a campaign.
    public static func siteKey(signal: Int32, in stderr: [UInt8]) -> UInt64? {
        var hash = FNV1a()
        hash.add(withUnsafeBytes(of: signal.littleEndian) { Array($0) })
        // The frames' "MODULE+0xOFFSET" ranges, and whether each is the runtime's.
        let most = 64
        var frames: [(range: Range<Int>, runtime: Bool)] = []
        frames.reserveCapacity(most)
        var lineStart = 0
        // Where the line before the first frame (the report's header) starts.
        var headerStart: Int?
        var previousLineStart = 0
        stderr.withUnsafeBufferPointer { bytes in
            while lineStart < bytes.count, frames.count < most {
                var lineEnd = lineStart
                while lineEnd < bytes.count, bytes[lineEnd] != 0x0A { lineEnd += 1 }
                var end = lineEnd
                while end > lineStart, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x20 { end -= 1 }
                var first = lineStart
                while first < end, bytes[first] == 0x20 || bytes[first] == 0x09 { first += 1 }
                // "#N … (MODULE+0xOFFSET)": the module's file name and the offset.
                if first < end, bytes[first] == UInt8(ascii: "#"), bytes[end - 1] == UInt8(ascii: ")") {
                    var open = end - 1
                    while open > first, bytes[open] != UInt8(ascii: "(") { open -= 1 }
                    var plus = end - 1
                    while plus > open, bytes[plus] != UInt8(ascii: "+") { plus -= 1 }
                    if bytes[open] == UInt8(ascii: "("), plus > open {
                        var name = plus
                        while name > open + 1, bytes[name - 1] != UInt8(ascii: "/") { name -= 1 }
                        if frames.isEmpty { headerStart = previousLineStart }
                        frames.append((name..<(end - 1), isRuntimeModule(UnsafeBufferPointer(rebasing: bytes[name..<plus]))))
                    }
                }
                previousLineStart = lineStart
                lineStart = lineEnd + 1
            }
            // What the program printed before the report (its last 64 KiB, each run of digits
            // and each 0x literal as one mark, as the signature's message has them): the
            // runtime's message, which the signature holds (`Fatal error: …`, glibc's
            // `Assertion … failed`), so two crashes with one key have one message; the Swift
            // runtime's own `Current stack trace:` after a fatal error has addresses that move.
            if let headerStart {
                var number = false
                var index = max(0, headerStart - 65_536)
                while index < headerStart {
                    let byte = bytes[index]
                    let digit = byte >= 0x30 && byte <= 0x39
                    if byte == 0x30, index + 1 < headerStart, bytes[index + 1] | 0x20 == 0x78, !number {
                        // "0x7f3c55f5f130": one mark.
                        hash.add(CollectionOfOne(UInt8(ascii: "#")))
                        index += 2
                        while index < headerStart, bytes[index] >= 0x30 && bytes[index] <= 0x39 || (bytes[index] | 0x20 >= 0x61 && bytes[index] | 0x20 <= 0x66)
                        {
                            index += 1
                        }
                        number = true
                        continue
                    }
                    if !digit { hash.add(CollectionOfOne(byte)) } else if !number { hash.add(CollectionOfOne(UInt8(ascii: "#"))) }
                    number = digit
                    index += 1
                }
                hash.add(CollectionOfOne(0))
            }
            // Every frame below the raising ones: which frames a signature keeps is decided by
            // their names (a program's own `die()` is passed over), which the key does not know.
            let own = frames.firstIndex { !$0.runtime } ?? 0
            for frame in frames[own...] {
                hash.add(UnsafeBufferPointer(rebasing: bytes[frame.range]))
                hash.add(CollectionOfOne(0))
            }
        }
        return frames.isEmpty ? nil : hash.value
    }

    /// Whether a module's file name is the C library's or the Swift runtime's: where an abort, a
    /// failed `assert` and a runtime error are raised, for every caller alike.
    static func isRuntimeModule(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        func starts(_ prefix: StaticString) -> Bool {
            prefix.withUTF8Buffer { name.count >= $0.count && name.prefix($0.count).elementsEqual($0) }
        }
        return starts("libc.so") || starts("libc-") || starts("libpthread") || starts("libsystem_") || starts("libswiftCore")
    }

    /// What recursed without bound, when the crashed thread's frames repeat one function 16
    /// times in a row, or a cycle of up to 24 frames (A calls B calls A: a decoder decoding an
    /// array that holds an array; a function may be in it more than once) over 28 frames or more
    /// (full reports ask Swift's backtracer for the top 124): a stack overflow's top frame is
    /// wherever the stack ran out, so only the recursion names the bug. A cycle is named by its
    /// frames from the rotation that sorts first, each followed by its caller (`A ← B ← C`), the
    /// same wherever the stack ran out. Callers ask only for a memory fault (a trap 16 calls deep
    /// into a recursive parser is that trap).
    public static func recursion(in stderr: String) -> String? {
        recursion(symbols: crashedThreadFrames(in: stderr).map(\.symbol))
    }

    /// ``recursion(in:)`` of the crashed thread's frames' names, top first.
    static func recursion(symbols: [String]) -> String? {
        for period in 1...24 {
            // Positions whose frame is the one `period` further down, in a row.
            let wanted = min(max(15, 6 * period), 28)
            var run = 0
            for index in symbols.indices.dropLast(period) {
                run = symbols[index] == symbols[index + period] ? run + 1 : 0
                guard run >= wanted else { continue }
                let cycle = Array(symbols[(index + 1)..<(index + 1 + period)])
                // A shorter cycle twice over is that cycle, found at its own period if at all.
                let rotations = cycle.indices.map { Array(cycle[$0...] + cycle[..<$0]) }
                guard !rotations.dropFirst().contains(cycle) else { break }
                let first = rotations.min { $0.lexicographicallyPrecedes($1) } ?? cycle
                return first.joined(separator: " ← ")
            }
        }
        return nil
    }

    /// Every frame of the crashed thread, top first (the report's frames when it names no
    /// thread, as a sanitizer's does).
    static func crashedThreadFrames(in stderr: String) -> [Frame] {
        var frames: [Frame] = []
        var inCrashedThread = false
        // Lines may end in CRLF (a log that passed through Windows, a pty): "\r\n" is one
        // Character, so split on any newline.
        for line in stderr.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("Thread "), line.hasSuffix("crashed:") { inCrashedThread = true; continue }
            if line.hasPrefix("Thread "), inCrashedThread, !frames.isEmpty { break }
            if let frame = swiftBacktraceFrame(line) {
                frames.append(frame)
            } else if let frame = sanitizerFrame(line) {
                // A sanitizer's report holds more stacks after the crash's (where the memory was
                // allocated, freed): each starts again at #0.
                if !frames.isEmpty, line.trimmingSpaces().hasPrefix("#0 ") { break }
                frames.append(frame)
            }
        }
        return frames
    }

    /// The runtime's own explanation of the crash, if it printed one.
    public static func message(in stderr: String) -> String? {
        var inlinedFailure: String?
        for line in stderr.split(whereSeparator: \.isNewline) {
            // An optimized build with debug info names the check in an inlined frame:
            // "0 [inlined] [system] 0x… Swift runtime failure: arithmetic overflow in loader at …".
            if inlinedFailure == nil, let range = line.firstRange(of: "Swift runtime failure: ") {
                let rest = line[range.upperBound...]
                let text = rest.firstRange(of: " in ").map { rest[..<$0.lowerBound] } ?? rest
                // The backtracer's header says it too: "*** Swift runtime failure: X ***".
                let check = text.trimmingSpaces()
                let trimmed = check.hasSuffix("***") ? check.dropLast(3).trimmingSpaces() : check
                if !trimmed.isEmpty { inlinedFailure = String(trimmed.prefix(160)) }
            }
            if let range = line.firstRange(of: "Fatal error: ") {
                let text = line[range.upperBound...].trimmingSpaces()
                return text.isEmpty ? "Fatal error" : String(text.prefix(160))
            }
            if let range = line.firstRange(of: "ERROR: AddressSanitizer: ") ?? line.firstRange(of: "ERROR: UndefinedBehaviorSanitizer: ") {
                return String(line[range.upperBound...].prefix(while: { $0 != " " }))
            }
            if line.contains("runtime error: ") { return String(line.prefix(160)) }
            // glibc's assert: "parser: parser.c:12: parse_header: Assertion `n < 4' failed."
            if let range = line.firstRange(of: "Assertion `"), line.contains("' failed") {
                var parts = line[..<range.lowerBound].split(separator: ": ", omittingEmptySubsequences: false)
                // Without the program's name, which comes first when a file and a function follow.
                if parts.count >= 3 { parts.removeFirst() }
                return String((parts.joined(separator: ": ") + line[range.lowerBound...]).prefix(200))
            }
            // A Rust panic: "thread 'main' panicked at src/lib.rs:5:9:" (the message follows).
            if line.hasPrefix("thread '"), let range = line.firstRange(of: "panicked at ") {
                return String(line[range.lowerBound...].prefix(160)).trimmingSuffix(":")
            }
            // C++: "terminate called after throwing an instance of 'std::out_of_range'".
            if line.hasPrefix("terminate called") { return String(line.prefix(160)) }
            if line.hasPrefix("malloc(): ") || line.hasPrefix("free(): ") || line.hasPrefix("double free")
                || line.hasPrefix("*** stack smashing") || line.hasPrefix("corrupted ")
            {
                return String(line.prefix(160))
            }
        }
        return inlinedFailure
    }

    // MARK: - Frame formats

    /// A frame's function and where in it the crash happened (` at FILE:LINE` or ` + OFFSET`).
    struct Frame {
        var symbol: String
        var site: String
        /// An inlined frame shares its instruction with the frame below it.
        var inlined = false
        /// The instruction's offset in the function, when the backtrace gives one.
        var offset: Substring?
        /// Named with an address offset (`symbol+0x34`, `module+0x11b4`): the crash reporter of C targets.
        var addressed = false
        /// Known only by its module and offset.
        var moduleOnly = false
    }

    private static func swiftBacktraceFrame(_ line: Substring) -> Frame? {
        // "  3 [ra] [inlined] 0x000055707349f014 main + 179 in fd at /tmp/exp/f.swift:3:8"
        var rest = line.trimmingSpaces()
        guard let first = rest.first, first.isNumber else { return nil }
        rest = rest.drop(while: \.isNumber).trimmingSpaces()
        var inlined = false
        while rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            if rest[..<close] == "[inlined" { inlined = true }
            rest = rest[rest.index(after: close)...].trimmingSpaces()
        }
        guard rest.hasPrefix("0x") else { return nil }
        rest = rest.drop(while: { !$0.isWhitespace }).trimmingSpaces()
        guard let end = rest.firstRange(of: " + ") ?? rest.firstRange(of: " in ") else { return nil }
        let symbol = rest[..<end.lowerBound].trimmingSpaces()
        guard !symbol.isEmpty, !symbol.hasPrefix("<") else { return nil }
        var offset: Substring?
        if rest[end.lowerBound...].hasPrefix(" + ") {
            let digits = rest[end.upperBound...].prefix(while: \.isNumber)
            if !digits.isEmpty { offset = digits }
        }
        var site = offset.map { " + " + $0 } ?? ""
        if let at = rest.ranges(of: " at ").last, let file = sourceLine(rest[at.upperBound...]) {
            site = " at " + file
        }
        return Frame(symbol: String(symbol), site: site, inlined: inlined, offset: offset)
    }

    /// `main.swift:9` from `/tmp/x/main.swift:9:25`; nil for `//<compiler-generated>`.
    static func sourceLine(_ location: Substring) -> String? {
        let path = location.trimmingSpaces()
        guard !path.contains("<"), let name = path.split(separator: "/").last else { return nil }
        let parts = name.split(separator: ":")
        guard parts.count >= 2, Int(parts[1]) != nil else { return nil }
        return "\(parts[0]):\(parts[1])"
    }

    private static func sanitizerFrame(_ line: Substring) -> Frame? {
        // "    #0 0x4f1b2c in parse_header /src/loader.c:12:3" (a sanitizer), or the crash
        // reporter of C targets: "    #0 0x55d2 in parse_header+0x34 (/work/parser+0x11b4)" and,
        // without a symbol, "    #1 0x55d2 in (/work/parser+0x12f0)".
        let rest = line.trimmingSpaces()
        guard rest.hasPrefix("#"), let inRange = rest.firstRange(of: " in ") else { return nil }
        var symbol = String(rest[inRange.upperBound...].prefix(while: { $0 != " " }))
        guard !symbol.isEmpty else { return nil }
        let after = rest[inRange.upperBound...].dropFirst(symbol.count).trimmingSpaces()
        var moduleOnly = false
        if symbol.hasPrefix("("), symbol.hasSuffix(")") {
            // A module and an offset: the module's file name, so the signature is the same
            // wherever the binary lives.
            symbol = String(symbol.dropFirst().dropLast().split(separator: "/").last ?? "")
            moduleOnly = true
        }
        return Frame(
            symbol: symbol, site: sourceLine(after).map { " at " + $0 } ?? "", addressed: symbol.contains("+0x"), moduleOnly: moduleOnly)
    }

    private static let runtimePrefixes = [
        "_assertionFailure", "closure #1 in closure #1 in _assertionFailure", "_fatalErrorMessage",
        "swift_", "_swift_", "abort", "raise", "gsignal", "__libc_", "__GI_", "__pthread_kill",
        "pthread_kill", "__interceptor_", "__sanitizer", "__asan", "__ubsan", "fatalError",
        "Swift._assertionFailure", "Swift.fatalError", "$ss17_assertionFailure", "precondition",
        "preconditionFailure", "specialized Array.subscript", "Array.subscript",
        "specialized _ArrayBuffer", "_ArrayBuffer", "ContiguousArray", "_checkIndex",
        "Swift.Array", "Swift._ArrayBuffer", "Slice.subscript", "specialized Slice.subscript",
        "_start", "main.cold", "Swift runtime failure", "__assert_fail", "__assert_perror_fail", "__libc_message", "__fortify_fail",
        "__chk_fail", "__stack_chk_fail", "malloc_printerr", "__restore_rt", "libc.so", "libc-", "libpthread", "ld-linux", "libgcc_s",
        "libstdc++", "libc++", "__gnu_cxx", "std::terminate", "__cxa_", "__clang_call_terminate", "libswift",
        // Swift's compiler-made glue between a closure and its caller.
        "reabstraction thunk", "partial apply", "thunk for", "merged ", "outlined ",
    ]

    private static let runtimeFragments = ["_checkIndex", "_checkSubscript", "_assertionFailure", "_fatalErrorMessage", "_precondition"]

    /// A frame of CorruptFuzzWorker's loop (`corrupt_fuzz_worker.c`'s `cf_worker_` functions, the
    /// Swift module's `CorruptFuzzWorker.` ones), which calls the loader.
    static func isWorkerLoopFrame(_ symbol: String) -> Bool {
        symbol.hasPrefix("cf_worker_") || symbol.contains("CorruptFuzzWorker.")
    }

    static func isRuntimeFrame(_ symbol: String) -> Bool {
        runtimePrefixes.contains { symbol.hasPrefix($0) } || runtimeFragments.contains { symbol.contains($0) }
    }
}

extension String {
    /// The text without one trailing `suffix`, when it ends with it.
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
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
