import CCorruptFuzzLibFuzzer
import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import CorruptFuzzWorker
import Foundation

/// Turns a Swift loader, a format and a validator into a libFuzzer target: what the oracle
/// calls a bug (silent acceptance, false rejection, a wrong reason, XXE) becomes a crash
/// libFuzzer reports and saves, and the format's structure-aware mutations become libFuzzer's
/// custom mutator, so coverage guidance and structure work together (as libprotobuf-mutator
/// does for protocol buffers).
///
/// A harness is a package executable built with `-sanitize=fuzzer -parse-as-library` that
/// exports libFuzzer's entry points and calls the bridge:
///
/// ```swift
/// import CorruptFuzzLibFuzzer
///
/// let bridge = LibFuzzerBridge(name: "habit-loader", format: try! SchemaFormat(ksy: habitSchema)) { bytes in
///     try HabitStore.load(bytes)                  // the loaded value's description is its digest
/// }
///
/// @_cdecl("LLVMFuzzerTestOneInput")
/// public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { bridge.testOneInput(data, size) }
/// @_cdecl("LLVMFuzzerCustomMutator")
/// public func customMutator(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
///     bridge.mutate(data, size, maxSize, seed)
/// }
/// @_cdecl("LLVMFuzzerCustomCrossOver")
/// public func customCrossOver(
///     _ a: UnsafePointer<UInt8>?, _ aSize: Int, _ b: UnsafePointer<UInt8>?, _ bSize: Int,
///     _ out: UnsafeMutablePointer<UInt8>?, _ maxOutSize: Int, _ seed: UInt32
/// ) -> Int { bridge.crossOver(a, aSize, b, bSize, out, maxOutSize, seed) }
/// ```
///
/// Before it aborts, the bridge prints the finding on standard error, one `==corrupt-fuzz==`
/// line each for its kind, signature, target and detail; `corrupt-fuzz import` reads them back
/// from libFuzzer's log. Crashes, hangs (`-timeout`) and memory blow-ups (`-rss_limit_mb`)
/// are libFuzzer's own.
public final class LibFuzzerBridge: Sendable {
    /// The target's name, for reports and `[TARGET]` sections of a known-findings file.
    public let name: String
    public let format: any FuzzFormat
    /// What labels inputs: the app's validator, else the format's.
    public let validator: any Validator
    /// The finding kinds that become crashes; others are ignored.
    public let traps: Set<FindingKind>
    /// Findings that are expected, and so not trapped.
    public let known: KnownFindings
    private let load: @Sendable ([UInt8]) throws -> Any
    private let judge: Judge

    /// The kinds the bridge traps by default: those libFuzzer cannot see by itself.
    public static let defaultTraps: Set<FindingKind> = [.silentAcceptance, .falseRejection, .wrongReason, .xxe]

    /// Creates a bridge.
    /// - Parameters:
    ///   - name: The target's name.
    ///   - format: Its reference validator labels inputs (unless `validator` is given); its
    ///     mutator, if it has one, makes the custom mutations.
    ///   - validator: The app's own validator, if any.
    ///   - traps: The finding kinds to turn into crashes. `CORRUPT_FUZZ_TRAPS` (kinds separated
    ///     by commas, or `none`) overrides it at run time.
    ///   - known: Findings not to trap. `CORRUPT_FUZZ_KNOWN_FINDINGS` (a known-findings file),
    ///     else a `known-findings.txt` beside the fuzzer (where a ClusterFuzzLite build.sh puts
    ///     it), adds to it at run time; an unreadable file is reported on standard error.
    ///   - load: The loader: returns the loaded value (its description is the digest an XXE
    ///     canary is looked for in) or throws; an error's `reason` property is the reason word.
    public init(
        name: String, format: any FuzzFormat, validator: (any Validator)? = nil, traps: Set<FindingKind> = LibFuzzerBridge.defaultTraps,
        known: KnownFindings = KnownFindings(), load: @escaping @Sendable ([UInt8]) throws -> Any
    ) {
        let environment = ProcessInfo.processInfo.environment
        self.name = name
        self.format = format
        self.validator = validator ?? format.validator
        self.load = load
        self.traps = environment["CORRUPT_FUZZ_TRAPS"].map(Self.kinds(from:)) ?? traps
        var known = known
        let beside = ((ExecutablePath.current as NSString).deletingLastPathComponent as NSString).appendingPathComponent("known-findings.txt")
        if let path = environment["CORRUPT_FUZZ_KNOWN_FINDINGS"] ?? (FileManager.default.fileExists(atPath: beside) ? beside : nil) {
            do {
                known.entries += try KnownFindings(contentsOf: path).entries
            } catch {
                FileHandle.standardError.write(Data("corrupt-fuzz: ignoring CORRUPT_FUZZ_KNOWN_FINDINGS: \(error)\n".utf8))
            }
        }
        self.known = known
        judge = Judge(format: format, validator: validator)
    }

    /// Finds a file a harness needs at run time (a schema): in `CORRUPT_FUZZ_RESOURCES`, then
    /// beside the fuzzer's executable (where a ClusterFuzzLite build.sh copies it to `$OUT`),
    /// then at `checkoutPath` (the file in the source checkout the harness was built from).
    public static func locate(_ name: String, checkoutPath: String) -> String? {
        var candidates: [String] = []
        if let folder = ProcessInfo.processInfo.environment["CORRUPT_FUZZ_RESOURCES"] {
            candidates.append((folder as NSString).appendingPathComponent(name))
        }
        candidates.append(((ExecutablePath.current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(name))
        candidates.append(checkoutPath)
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// `silent-acceptance,wrong-reason` or `none`; unknown words are left out.
    static func kinds(from text: String) -> Set<FindingKind> {
        Set(text.split(separator: ",").compactMap { FindingKind(rawValue: $0.trimmingCharacters(in: .whitespaces)) })
    }

    // MARK: - Checking one input

    /// Runs the loader on `bytes` and judges what it did, as a campaign does.
    /// - Returns: The finding, or nil when the loader behaved.
    public func check(_ bytes: [UInt8]) -> Finding? {
        let input = TestInput(bytes: bytes, mutations: ["libfuzzer"], seedName: name)
        let watch = judge.watch(input)
        let outcome: Outcome
        do {
            let value = try load(watch.input.bytes ?? bytes)
            outcome = .accepted(digest: String(String(describing: value).prefix(4096)))
        } catch {
            outcome = .rejected(reason: CorruptFuzzWorker.reasonWord(of: error).map { Reason($0) }, exitCode: 1, message: String(describing: error))
        }
        var stdout: [UInt8] = []
        if case .accepted(let digest) = outcome { stdout = Array(digest.utf8) }
        return judge.judge(input, execution: Execution(outcome: outcome, stdout: stdout), watch: watch).finding
    }

    /// Whether `finding` is one to trap: its kind is trapped and it is not known.
    public func traps(_ finding: Finding) -> Bool {
        traps.contains(finding.kind) && known.entry(for: finding.key, target: name) == nil
    }

    /// The lines printed before the abort, which `corrupt-fuzz import` reads: the kind, the
    /// signature, the target, the detail and the input's SHA-1 (libFuzzer names the file it
    /// saves `crash-<sha1>`, so the lines find their file even when libFuzzer runs jobs in
    /// forked processes whose output it drops).
    public func report(_ finding: Finding) -> String {
        func line(_ label: String, _ text: String) -> String {
            "\(Self.marker) \(label): \(text.replacingOccurrences(of: "\n", with: " "))\n"
        }
        return line("finding", finding.kind.rawValue) + line("signature", finding.signature) + line("target", name)
            + line("detail", String(finding.detail.prefix(2000))) + line("input", SHA1.hex(finding.input.bytes ?? []))
    }

    /// Where the reports also go when `CORRUPT_FUZZ_FINDINGS_LOG` names a file (appended),
    /// for `-fork` runs, whose jobs' output libFuzzer does not keep.
    private static func appendToFindingsLog(_ text: String) {
        guard let path = ProcessInfo.processInfo.environment["CORRUPT_FUZZ_FINDINGS_LOG"] else { return }
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// What starts each line the bridge prints about a finding.
    public static let marker = LibFuzzerBridgeMarker.text

    /// libFuzzer's `LLVMFuzzerTestOneInput`: checks one input, and aborts with the finding
    /// printed when it is one to trap.
    public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        if let finding = check(bytes), traps(finding) {
            let text = report(finding)
            Self.appendToFindingsLog(text)
            cf_libfuzzer_report_and_abort(text)
        }
        return 0
    }

    /// Runs libFuzzer on the process's command line with `testOneInput` as the target, and
    /// exits with its status: a fuzzer's `main`. A package executable needs it: SwiftPM gives
    /// the executable's entry point a name of its own, so libFuzzer's `main` never runs.
    ///
    /// ```swift
    /// @main enum HabitFuzzer {
    ///     static func main() { LibFuzzerBridge.runDriver(testOneInput) }
    /// }
    /// ```
    public static func runDriver(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        let status = cf_libfuzzer_run_driver(&argc, &argv, testOneInput)
        if status == -1 {
            FileHandle.standardError.write(Data("this fuzzer was built without libFuzzer: build it with -sanitize=fuzzer\n".utf8))
            exit(2)
        }
        exit(status)
    }

    // MARK: - Mutation

    /// libFuzzer's `LLVMFuzzerCustomMutator`: mutates `size` bytes at `data` in place (at most
    /// `maxSize`) and returns the new size. Half the time, when the format has a mutator and
    /// the input parses, one structure-aware mutation (lengths, counts and checksums kept
    /// consistent, or a deliberate lie); one time in 32 an entry of the format's catalogue;
    /// one in 16 a freshly generated valid file (out of inputs that do not parse, more often);
    /// otherwise libFuzzer's own byte-level mutation (`LLVMFuzzerMutate`).
    public func mutate(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
        guard let data, maxSize > 0 else { return 0 }
        var rng = FuzzRNG(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1)
        let bytes = Array(UnsafeBufferPointer(start: data, count: min(size, maxSize)))
        if let replacement = structuredMutation(of: bytes, maxSize: maxSize, using: &rng) {
            replacement.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: replacement.count) }
            return replacement.count
        }
        if cf_libfuzzer_has_mutate() != 0 { return cf_libfuzzer_mutate(data, size, maxSize) }
        var mutated = bytes
        byteMutation(&mutated, maxSize: maxSize, using: &rng)
        mutated.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: mutated.count) }
        return mutated.count
    }

    /// The structure-aware part of ``mutate(_:_:_:_:)``: new bytes, or nil to mutate byte-wise.
    public func structuredMutation(of bytes: [UInt8], maxSize: Int, using rng: inout FuzzRNG) -> [UInt8]? {
        guard let mutator = format.mutator else { return nil }
        let roll = rng.below(32)
        if roll == 0 {
            let context = CatalogueContext(traps: judge.traps, maxInputLength: maxSize)
            // One entry, made: the others are not built.
            let entries = mutator.catalogueEntries(of: bytes, context: context).filter { $0.minimumLength <= maxSize }
            if !entries.isEmpty {
                let made = entries[rng.below(entries.count)].mutation().bytes
                if made.count <= maxSize { return made }
            }
        }
        if roll < 16, let mutation = mutator.mutate(bytes, using: &rng) {
            return mutation.bytes.count <= maxSize ? mutation.bytes : nil
        }
        // 16 and 17, or an input that does not parse one time in four.
        if roll < 18 && (roll >= 16 || rng.oneIn(4)) {
            let generated = mutator.generate(using: &rng)
            return generated.count <= maxSize ? generated : nil
        }
        return nil
    }

    /// One of corrupt-fuzz's byte-level mutations, when libFuzzer's is not linked (in tests).
    private func byteMutation(_ bytes: inout [UInt8], maxSize: Int, using rng: inout FuzzRNG) {
        let mutators = Mutator.byteLevel
        let partner = bytes
        _ = mutators[rng.below(mutators.count)].mutate(&bytes, using: &rng, context: MutationContext(partner: partner, maxLength: maxSize))
        if bytes.count > maxSize { bytes.removeLast(bytes.count - maxSize) }
    }

    /// libFuzzer's `LLVMFuzzerCustomCrossOver`: writes a child of the two inputs to `out` (at
    /// most `maxOutSize` bytes) and returns its size: a prefix of the first and the rest of
    /// the second from about the same offset (a header from one, records from the other);
    /// half the time the second is first given one structure-aware mutation. The protocol of
    /// formats has no structure-aware cross-over of its own.
    public func crossOver(
        _ a: UnsafePointer<UInt8>?, _ aSize: Int, _ b: UnsafePointer<UInt8>?, _ bSize: Int, _ out: UnsafeMutablePointer<UInt8>?, _ maxOutSize: Int,
        _ seed: UInt32
    ) -> Int {
        guard let out, maxOutSize > 0 else { return 0 }
        let first = a.map { Array(UnsafeBufferPointer(start: $0, count: aSize)) } ?? []
        let second = b.map { Array(UnsafeBufferPointer(start: $0, count: bSize)) } ?? []
        var rng = FuzzRNG(seed: UInt64(seed) &* 0xD1B5_4A32_D192_ED03 | 1)
        let child = crossOver(first, second, maxSize: maxOutSize, using: &rng)
        child.withUnsafeBufferPointer { if let base = $0.baseAddress { out.update(from: base, count: child.count) } }
        return child.count
    }

    /// The child of two inputs (see ``crossOver(_:_:_:_:_:_:_:)``).
    public func crossOver(_ first: [UInt8], _ second: [UInt8], maxSize: Int, using rng: inout FuzzRNG) -> [UInt8] {
        var parent = second
        if let mutator = format.mutator, rng.oneIn(2), let mutation = mutator.mutate(second, using: &rng) {
            parent = mutation.bytes
        }
        let cut = rng.below(first.count + 1)
        let from = min(parent.count, max(0, cut + rng.below(9) - 4))
        var child = Array(first.prefix(cut)) + parent.dropFirst(from)
        if child.count > maxSize { child.removeLast(child.count - maxSize) }
        return child
    }
}
