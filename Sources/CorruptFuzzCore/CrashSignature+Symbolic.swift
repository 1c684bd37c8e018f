/// Crash reports whose frames are modules and offsets (corrupt-fuzz's crash reporter, a
/// sanitizer's unsymbolized report), named by a symbolizer, and the frames a signature keeps.
extension CrashSignature {
    /// A frame as a report gives it: the module's path and the offset of the instruction in it
    /// (the return address less one for a caller: inside its call).
    public struct RawFrame: Hashable, Sendable {
        public var module: String
        public var offset: UInt64

        public init(module: String, offset: UInt64) {
            self.module = module
            self.offset = offset
        }
    }

    /// A frame named: its function, source file and line where known. One address gives several
    /// when code was inlined there, innermost first (``inlined`` on all but the last).
    public struct SymbolicFrame: Hashable, Sendable {
        public var module: String
        public var offset: UInt64
        /// The function's readable name (``SwiftSymbolName``), nil when unknown.
        public var function: String?
        /// The name as the symbol table has it (mangled), for telling whose code it is.
        public var linkageName: String?
        public var file: String?
        public var line: Int?
        public var inlined: Bool

        public init(
            module: String, offset: UInt64, function: String? = nil, linkageName: String? = nil, file: String? = nil, line: Int? = nil,
            inlined: Bool = false
        ) {
            self.module = module
            self.offset = offset
            self.function = function
            self.linkageName = linkageName ?? function
            self.file = file
            self.line = line
            self.inlined = inlined
        }

        /// The module's file name (`parser`, `libc.so.6`).
        public var moduleName: Substring { module.split(separator: "/").last ?? Substring(module) }

        /// `parse_header`, or `parser+0x11b4` when the function is not known.
        public var name: String { function ?? "\(moduleName)+0x\(String(offset, radix: 16))" }

        /// `parser.c:12`, when the line is known.
        public var sourceLine: String? {
            guard let file, let line, !file.contains("<"), let base = file.split(separator: "/").last else { return nil }
            return "\(base):\(line)"
        }
    }

    /// The frames of the first stack in `report` given as modules and offsets: corrupt-fuzz's
    /// crash reporter (`#0 0x55d2 in (/work/parser+0x11b4)`) and a sanitizer's unsymbolized
    /// report (`#0 0x4f1b2c  (/work/parser+0x4f1b2c)`). Empty when the report has none, or names
    /// its frames already.
    public static func rawFrames(in report: String) -> [RawFrame] {
        var frames: [RawFrame] = []
        for line in report.split(whereSeparator: \.isNewline) {
            let text = line.trimmingSpaces()
            guard text.hasPrefix("#"), text.hasSuffix(")"), let open = text.lastIndex(of: "(") else {
                if !frames.isEmpty, !text.hasPrefix("#") { break }
                continue
            }
            // Another stack (where a sanitizer's memory was allocated): the crash's came first.
            if !frames.isEmpty, text.hasPrefix("#0 ") { break }
            let inner = text[text.index(after: open)..<text.index(before: text.endIndex)]
            // Only a frame named by nothing but its module: "… in (MODULE+0xOFF)" or "…  (MODULE+0xOFF)".
            let before = text[..<open].trimmingSpaces()
            guard before.hasSuffix(" in") || before.split(separator: " ").count == 2,
                let plus = inner.range(of: "+0x", options: .backwards),
                let offset = UInt64(inner[plus.upperBound...], radix: 16)
            else { return [] }
            frames.append(RawFrame(module: String(inner[..<plus.lowerBound]), offset: offset))
        }
        return frames
    }

    /// What a signature keeps of a crash's named frames, top first (for ``make(signal:frames:message:)``),
    /// and the runtime's own name for the check that failed when a frame gives one (an
    /// optimized Swift build's `Swift runtime failure: Index out of range`).
    ///
    /// As ClusterFuzz does, the frames that only raise the signal are passed over: the C
    /// library's, the Swift runtime's and the sanitizers' (`abort`, `raise`, `__assert_fail`,
    /// `fatalError`, the standard library's checks), then the program's own helpers that end in
    /// them (``isRaiseHelper(_:)``: `die`, `fatal`, `panic`, a project's assert), so two callers of
    /// one `die()` are two findings. Frames below corrupt-fuzz's worker loop are cut: a
    /// persistent worker and the same executable run once call the loader from different
    /// places. With `site`, the top frame names the crashing instruction when it has no source
    /// line and no runtime failure names the check (`parse_a [parser+0x11b4]`), so that two
    /// traps in one function stay apart.
    public static func signatureFrames(_ all: [SymbolicFrame], site: Bool) -> (frames: [String], runtimeFailure: String?) {
        let failureMarker = "Swift runtime failure: "
        var runtimeFailure: String?
        var loader = all.prefix { !isWorkerLoopFrame($0) }
        if loader.isEmpty { loader = all[...] }
        // Past the raising frames: the runtime's, then the program's helpers, but only when
        // something raised (a memory fault in a function named `fail` is that function's).
        var first = loader.startIndex
        var raised = false
        while first < loader.endIndex {
            let frame = loader[first]
            if let name = frame.function, name.hasPrefix(failureMarker) {
                if runtimeFailure == nil { runtimeFailure = String(name.dropFirst(failureMarker.count).prefix(160)) }
                raised = true
            } else if isRuntimeModule(frame.moduleName) || frame.function.map(isRuntimeFrame) == true {
                raised = true
            } else if !(raised && frame.function.map(isRaiseHelper) == true) {
                break
            }
            first = loader.index(after: first)
        }
        var kept = Array(loader[first...].filter { !isRuntimeModule($0.moduleName) && !($0.function.map(isRuntimeFrame) ?? false) })
        if kept.isEmpty { kept = Array(loader.prefix(1)) }
        let named = kept.contains { $0.function != nil }
        guard let top = kept.first else { return ([], runtimeFailure) }
        // A frame without a line that was inlined takes the line of the frame it was inlined into.
        let line = top.sourceLine ?? (top.inlined ? kept.first { $0.offset == top.offset && $0.sourceLine != nil }?.sourceLine : nil)
        var frames = kept.prefix(frameCount).map(\.name)
        if let line {
            frames[0] += " at " + line
        } else if site, named, runtimeFailure == nil {
            frames[0] += " [\(top.moduleName)+0x\(String(top.offset, radix: 16))]"
        }
        return (frames, runtimeFailure)
    }

    /// What recursed without bound in named frames (``recursion(in:)``'s rule), or nil.
    public static func recursion(in frames: [SymbolicFrame]) -> String? {
        recursion(symbols: frames.map(\.name))
    }

    /// Whether `frame` is corrupt-fuzz's worker loop (C's `cf_worker_` functions, the Swift
    /// module CorruptFuzzWorker's), which calls the loader.
    static func isWorkerLoopFrame(_ frame: SymbolicFrame) -> Bool {
        guard let linkage = frame.linkageName else { return false }
        return linkage.hasPrefix("cf_worker_") || linkage.contains("17CorruptFuzzWorker") || linkage.contains("CorruptFuzzWorker.")
    }

    /// Whether a module's file name is a runtime's, where signals are raised for every caller
    /// alike: the C library, the dynamic linker, the unwinder, C++'s and Swift's runtimes, a
    /// sanitizer's.
    static func isRuntimeModule(_ name: Substring) -> Bool {
        let prefixes = [
            "libc.so", "libc-", "libpthread", "ld-linux", "ld-musl", "libgcc_s", "libstdc++", "libc++", "libswiftCore", "libswift_",
            "libclang_rt", "libasan", "libubsan", "libtsan", "libsystem_", "libdyld",
        ]
        return prefixes.contains { name.hasPrefix($0) }
    }

    /// Whether `name` is a helper of the program's own that exists to end it: `die`,
    /// `fatal_error`, `panic`, `xmlFatalErr`, `g_assertion_message`, `my_assert_fail`,
    /// `reportFatalError(_:)`. Its words (split at `_` and at case changes) start with one of
    /// die, fatal, panic, abort, assert, bail, croak, oops, or end with one of those or fail,
    /// failed, failure.
    public static func isRaiseHelper(_ name: String) -> Bool {
        let base = name.prefix { $0 != "(" && $0 != " " && $0 != "<" }.split(separator: ".").last.map(String.init) ?? name
        var words: [String] = []
        var current = ""
        var previousLower = false
        for character in base {
            if character == "_" || character == "$" {
                if !current.isEmpty { words.append(current) }
                current = ""
                previousLower = false
                continue
            }
            if character.isUppercase, previousLower, !current.isEmpty {
                words.append(current)
                current = ""
            }
            current.append(contentsOf: character.lowercased())
            previousLower = character.isLowercase || character.isNumber
        }
        if !current.isEmpty { words.append(current) }
        // A library's short prefix (`g_error`, `xmlFatalErr`, `png_error`): the words after it.
        if words.count > 1, let prefix = words.first, prefix.count <= 3, !["die", "err"].contains(prefix) { words.removeFirst() }
        guard let firstWord = words.first, let lastWord = words.last else { return false }
        let starting: Set = ["die", "fatal", "panic", "abort", "assert", "assertion", "bail", "croak", "oops"]
        let ending: Set = ["die", "fatal", "panic", "abort", "assert", "fail", "failed", "failure"]
        if lastWord == "error" || lastWord == "err" {
            // `fatal_error`, `xmlFatalErr`, `die_with_error`, `g_error` (GLib's, which aborts):
            // an error helper that is fatal, or a library's error that only ends the program.
            return words.count == 1 || words.contains { starting.contains($0) }
        }
        return starting.contains(firstWord) || ending.contains(lastWord)
    }
}
