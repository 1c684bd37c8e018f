import CorruptFuzzCore
import SelfFuzzSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// "Fuzz the engine's own parts with themselves": property tests that feed random and hostile
// inputs to the minimizer, the byte mutators, `Normalize.message` and `CrashSignature`, with
// the package's own seeded `FuzzRNG` as the random source.
//
// By default every property runs a fixed, small number of cases with fixed seeds (the whole
// suite takes a few seconds in a debug build). With `CORRUPT_FUZZ_SELF_FUZZ_SECONDS=N` every
// property instead keeps drawing fresh seeds until N seconds have passed (the byte mutators,
// one test case each, share one property's N seconds):
//
//     CORRUPT_FUZZ_SELF_FUZZ_SECONDS=600 swift test --filter SelfFuzz
//
// There are 8 such properties (6 here, 2 in SelfFuzzReportingTests.swift) and Swift Testing
// runs them side by side, so on 2 cores the run takes about 8 × N / 2 seconds: N = 900 for an
// hour.
//
// A failing case is reported with its seed; `CORRUPT_FUZZ_SELF_FUZZ_SEED=<seed>` reruns just
// that case (combine it with `--filter` to pick the property). If the process traps, the seeds
// running at that moment are written to standard error before the crash report.

// MARK: - Random values

extension FuzzRNG {
    /// A length in `0...max`, often tiny: 0 and 1 come up often, short lengths more than long.
    fileprivate mutating func sfLength(upTo max: Int) -> Int {
        switch below(8) {
        case 0: return 0
        case 1: return Swift.min(1, max)
        case 2, 3: return below(Swift.min(max, 16) + 1)
        case 4: return max
        default: return below(max + 1)
        }
    }

    /// Bytes over a random alphabet (sometimes one byte, sometimes all 256).
    fileprivate mutating func sfBytes(count: Int) -> [UInt8] {
        let alphabet = [1, 2, 4, 16, 256][below(5)]
        let offset = UInt8(truncatingIfNeeded: below(256))
        return (0..<count).map { _ in offset &+ UInt8(truncatingIfNeeded: below(alphabet)) }
    }

    /// A Unicode scalar chosen to hurt: controls, digits, combining marks, noncharacters,
    /// grapheme-joining scalars, markup, anything.
    fileprivate mutating func sfHostileScalar() -> Unicode.Scalar {
        func scalar(_ value: Int) -> Unicode.Scalar { Unicode.Scalar(UInt32(value)) ?? "?" }
        switch below(13) {
        case 0: return scalar(0x20 + below(0x5F))  // printable ASCII
        case 1: return scalar(pick([below(0x20), 0x7F + below(0x21)]))  // C0 and C1 controls, NUL
        case 2: return scalar(0x30 + below(10))  // ASCII digits
        case 3: return pick(["a", "b", "c", "d", "e", "f", "A", "F", "x", "X", "g", "z", "#"])
        case 4: return scalar(pick([0x300 + below(0x70), 0x1AB0 + below(0x10), 0x20D0 + below(0x20), 0xFE20 + below(0x10)]))  // combining
        case 5:
            return scalar(
                pick([
                    0xFFFE, 0xFFFF, 0xFFFD, 0xFEFF, 0x200D, 0x200B, 0x202E, 0x0600, 0x0605, 0x110BD,  // BOM, ZWJ, RLO, prepend
                    0x1F1E6 + below(26), 0x1F600, 0x1F3FB, 0xE000, 0xFDD0, 0x1FFFE, 0x10FFFF, 0x85, 0x2028, 0x2029,
                    0x0660 + below(10), 0xFF10 + below(10), 0x1D7CE, 0x00BD, 0x2160, 0x1100, 0x1161, 0x11A8, 0xAC00,
                ]))
        case 6:
            let value = below(0x11_0000)
            return (0xD800...0xDFFF).contains(value) ? "\u{FFFD}" : scalar(value)
        case 7: return pick(["<", ">", "&", "\"", "'", "[", "]", ":", ";", "!", "-", "?", "/", "\\", "=", " ", "+"])
        case 8: return pick(["\n", "\r", "\t", " ", "\u{B}", "\u{C}"])
        case 9: let value = below(0xD800); return scalar(value)
        case 10: return scalar(0x4E00 + below(0x100))  // 3-byte UTF-8
        case 11: return scalar(0x1F300 + below(0x300))  // 4-byte UTF-8
        default: return scalar(0x80 + below(0x700))  // 2-byte UTF-8
        }
    }

    /// Text made of hostile scalars and fragments the engine looks for.
    fileprivate mutating func sfHostileText(maxScalars: Int) -> String {
        let fragments = [
            "]]>", " [rule: ", "[rule: ", " [rule:", "]", "0x", "0X", "0x1F", "1f0eea31", "deadbeef", "e5d3d09a-1b2c",
            "Fatal error: ", "\r\n", "&amp;", "<![CDATA[", "<!--", "\u{0}", "\\u{7}", "12345678901234567890",
            " in ", " at ", " + ", "#0 ", "Thread 0 crashed:", "ERROR: AddressSanitizer: ", "runtime error: ",
            "Swift runtime failure: ", "e\u{301}", "\u{1F1FA}\u{1F1F8}", "\u{1F469}\u{200D}\u{1F4BB}",
        ]
        return hostileText(scalars: sfLength(upTo: maxScalars), fragments: fragments, fragmentOneIn: 6) { $0.sfHostileScalar() }
    }
}

// MARK: - Minimizer predicates

/// A predicate for the minimizer, as data so that a failure can say what it was.
private indirect enum Predicate: CustomStringConvertible {
    case containsByte(UInt8)
    case lengthAtLeast(Int)
    /// Holds the bytes in order, not necessarily adjacent.
    case subsequence([UInt8])
    /// Holds the bytes adjacent (not monotone under deletion).
    case substring([UInt8])
    /// A chaotic one: hash(bytes) % m == r.
    case hash(seed: UInt64, m: Int, r: Int)
    case oddCount(UInt8)
    case lengthIn(Set<Int>)
    case firstByte(UInt8, lengths: Set<Int>?)
    case both(Predicate, Predicate)
    case either(Predicate, Predicate)
    /// Answers as the inner predicate for the first n calls, then nil (stop, as on a deadline).
    case stopsAfter(Int, Predicate)

    var description: String {
        switch self {
        case .containsByte(let b): "contains byte \(b)"
        case .lengthAtLeast(let k): "length >= \(k)"
        case .subsequence(let s): "has subsequence \(s)"
        case .substring(let s): "has substring \(s)"
        case .hash(let seed, let m, let r): "fnv1a(seed \(seed)) % \(m) == \(r)"
        case .oddCount(let b): "count of byte \(b) is odd"
        case .lengthIn(let set): "length in \(set.sorted())"
        case .firstByte(let b, let lengths): "first byte == \(b)" + (lengths.map { " and length in \($0.sorted())" } ?? "")
        case .both(let a, let b): "(\(a)) and (\(b))"
        case .either(let a, let b): "(\(a)) or (\(b))"
        case .stopsAfter(let n, let p): "(\(p)), then nil after \(n) calls"
        }
    }

    /// The answer for `bytes`; `calls` counts calls for `stopsAfter`.
    func holds(_ bytes: [UInt8], calls: Int = 0) -> Bool? {
        switch self {
        case .containsByte(let b): return bytes.contains(b)
        case .lengthAtLeast(let k): return bytes.count >= k
        case .subsequence(let s):
            var i = s.startIndex
            for byte in bytes where i < s.endIndex && byte == s[i] { i += 1 }
            return i == s.endIndex
        case .substring(let s): return s.isEmpty || bytes.firstRange(of: s) != nil
        case .hash(let seed, let m, let r): return Int(SelfFuzz.fnv1a(bytes, seed: seed) % UInt64(m)) == r
        case .oddCount(let b): return bytes.reduce(0) { $0 + ($1 == b ? 1 : 0) } % 2 == 1
        case .lengthIn(let set): return set.contains(bytes.count)
        case .firstByte(let b, let lengths): return bytes.first == b && (lengths?.contains(bytes.count) ?? true)
        case .both(let a, let b):
            guard let x = a.holds(bytes, calls: calls), let y = b.holds(bytes, calls: calls) else { return nil }
            return x && y
        case .either(let a, let b):
            guard let x = a.holds(bytes, calls: calls), let y = b.holds(bytes, calls: calls) else { return nil }
            return x || y
        case .stopsAfter(let n, let p): return calls >= n ? nil : p.holds(bytes, calls: calls)
        }
    }

    /// The lengths successive tail cuts reach when every cut of `n / 2` bytes succeeds:
    /// n, n - n/2, n - 2(n/2), … (the tail-cut regression: the next cut is longer than what is left).
    static func tailCutChain(_ n: Int) -> Set<Int> {
        let cut = max(1, n / 2)
        return Set(stride(from: n, through: 0, by: -cut))
    }

    /// A random predicate, most often one that `input` satisfies.
    static func random(for input: [UInt8], rng: inout FuzzRNG, depth: Int = 0) -> Predicate {
        let n = input.count
        func someByte(_ rng: inout FuzzRNG) -> UInt8 {
            !input.isEmpty && !rng.oneIn(8) ? input[rng.below(n)] : UInt8(truncatingIfNeeded: rng.next())
        }
        switch rng.below(depth == 0 ? 11 : 9) {
        case 0: return .containsByte(someByte(&rng))
        case 1: return .lengthAtLeast(rng.oneIn(8) ? n + 1 : rng.below(n + 1))
        case 2:
            // A subsequence of the input: pick sorted positions.
            let k = rng.below(min(n, 12) + 1)
            let positions = Set((0..<k).map { _ in rng.below(max(n, 1)) }).sorted()
            return .subsequence(n == 0 ? [] : positions.map { input[$0] })
        case 3:
            guard n > 0 else { return .substring([]) }
            let start = rng.below(n), length = rng.below(min(n - start, 8) + 1)
            return .substring(Array(input[start..<(start + length)]))
        case 4:
            let seed = rng.next(), m = 1 + rng.below(rng.oneIn(2) ? 3 : 64)
            let r = rng.oneIn(8) ? rng.below(m) : Int(SelfFuzz.fnv1a(input, seed: seed) % UInt64(m))
            return .hash(seed: seed, m: m, r: r)
        case 5:
            let b = someByte(&rng)
            return .oddCount(b)
        case 6:
            var set = tailCutChain(n)
            for _ in 0..<rng.below(6) { set.insert(rng.below(n + 2)) }
            if rng.oneIn(3) { set.insert(n / 2 + 1); set.insert(3) }
            return .lengthIn(set)
        case 7:
            let b = input.first ?? 0
            return .firstByte(b, lengths: rng.oneIn(3) ? nil : tailCutChain(n).union([3, n / 2 + 1]))
        case 8:
            return .stopsAfter(rng.below(40), random(for: input, rng: &rng, depth: depth + 1))
        case 9:
            return .both(random(for: input, rng: &rng, depth: depth + 1), random(for: input, rng: &rng, depth: depth + 1))
        default:
            return .either(random(for: input, rng: &rng, depth: depth + 1), random(for: input, rng: &rng, depth: depth + 1))
        }
    }
}

/// A structure closure that returns random candidates: shorter, longer, empty, duplicated,
/// the input itself, and random bytes. Each call draws from its own generator, so it is not
/// even a function of its argument.
private func randomStructure(seed: UInt64) -> ([UInt8]) -> [[UInt8]] {
    var rng = FuzzRNG(seed: seed)
    let style = rng.below(4)
    return { bytes in
        var candidates: [[UInt8]] = []
        let count = style == 0 ? 0 : rng.below(style == 3 ? 40 : 8)
        for _ in 0..<count {
            switch rng.below(8) {
            case 0: candidates.append([])
            case 1: candidates.append(bytes)
            case 2: candidates.append(bytes + rng.sfBytes(count: 1 + rng.below(64)))  // longer than the input
            case 3:
                guard !bytes.isEmpty else { continue }
                var shorter = bytes
                let start = rng.below(bytes.count)
                shorter.removeSubrange(start..<min(bytes.count, start + 1 + rng.below(bytes.count)))
                candidates.append(shorter)
            case 4: candidates.append(rng.sfBytes(count: rng.below(bytes.count + 1)))
            case 5: candidates.append(Array(bytes.prefix(rng.below(bytes.count + 1))))
            case 6: if let last = candidates.last { candidates.append(last) }
            default: candidates.append(Array(bytes.suffix(rng.below(bytes.count + 1))))
            }
        }
        return candidates
    }
}

// MARK: - Crash report text

/// Lines in the shapes `CrashSignature` reads (copied from its comments and tests).
private let backtraceLines = [
    "Swift/ContiguousArrayBuffer.swift:692: Fatal error: Index out of range",
    "*** Program crashed: Illegal instruction at 0x00007fddc816df7f ***",
    "Thread 0 \"fd\" crashed:",
    "Thread 1 \"other\":",
    "Thread 2 crashed:",
    "  0      0x00007fddc816df7f closure #1 in closure #1 in _assertionFailure(_:_:file:line:flags:) + 623 in libswiftCore.so",
    "  1 [ra] 0x00007fddc82f961f _assertionFailure(_:_:file:line:flags:) + 302 in libswiftCore.so",
    "  2 [ra] 0x00007fddc888ef65 specialized Array.subscript.getter + 84 in libswiftSwiftOnoneSupport.so",
    "  3 [ra] 0x000055707349f014 parseHabit(_:at:) + 179 in fd at /tmp/exp/f.swift:3:8",
    "  3 [ra] [inlined] 0x000055707349f014 main + 179 in fd at /tmp/exp/f.swift:3:8",
    "  4 [ra] [inlined] 0x000055707349f014 loadDocument() in fd at /tmp/exp/f.swift:9:8",
    "  5 [ra] 0x000055707349f014 main + 179 in fd at /tmp/exp/f.swift:12:8",
    "  6 [ra] [system] 0x000055707349f014 thunk + 4 in fd at //<compiler-generated>:0",
    "0 [inlined] [system] 0x0000 Swift runtime failure: arithmetic overflow in loader at /x/f.swift:3:1",
    "==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011",
    "==9==ERROR: UndefinedBehaviorSanitizer: SEGV on unknown address",
    "READ of size 1 at 0x602000000011 thread T0",
    "    #0 0x4f1b2c in parse_header /src/loader.c:12:3",
    "    #1 0x4f1c00 in load /src/loader.c:40:9",
    "    #2 0x4f1d00 in main /src/loader.c:60:5",
    "    #3 0x4f1d00 in __libc_start_main",
    "loader.c:12:3: runtime error: signed integer overflow: 2147483647 + 1",
    "malloc(): corrupted top size",
    "free(): invalid pointer",
    "double free or corruption (out)",
    "*** stack smashing detected ***: terminated",
    "corrupted size vs. prev_size",
]

extension FuzzRNG {
    /// One backtrace-like line, often damaged: cut short, joined, its numbers replaced.
    fileprivate mutating func sfBacktraceLine() -> String {
        var line = oneIn(10) ? sfHostileText(maxScalars: 80) : pick(backtraceLines)
        switch below(10) {
        case 0: line = String(line.prefix(below(line.count + 1)))  // cut short
        case 1: line = String(line.dropFirst(below(line.count + 1)))
        case 2:
            // Insert hostile text somewhere.
            let at = line.index(line.startIndex, offsetBy: below(line.count + 1))
            line.insert(contentsOf: sfHostileText(maxScalars: 12), at: at)
        case 3: line = line.replacingOccurrences(of: "0x", with: pick(["0x", "0x0x", "", "0X", "0x "]))
        case 4: line = line.replacingOccurrences(of: "]", with: "")  // an unclosed "[ra"
        case 5: line = line.replacingOccurrences(of: ":", with: pick(["::", "", ":99999999999999999999999:", ":-1:"]))
        case 6: line = line.replacingOccurrences(of: " in ", with: pick([" in  in ", " in", "in ", " + "]))
        default: break
        }
        return line
    }

    /// A crash report: lines joined by LF, CRLF, CR or blank lines, with leading spaces.
    fileprivate mutating func sfCrashReport() -> String {
        let count = sfLength(upTo: 40)
        var text = ""
        for _ in 0..<count {
            text += String(repeating: " ", count: oneIn(4) ? below(6) : 0) + sfBacktraceLine()
            text += pick(["\n", "\n", "\n", "\r\n", "\r", "\n\n", ""])
        }
        return text
    }
}

// MARK: - The properties

@Suite("SelfFuzz: engine parts under random and hostile input")
struct SelfFuzzTests {
    // MARK: Minimizer

    @Test("Minimizer: random inputs, predicates, structure closures and budgets keep its contract")
    func minimizer() {
        SelfFuzz.run("minimizer", iterations: 300) { rng, _, v in
            let n = rng.oneIn(4) ? rng.below(2001) : rng.sfLength(upTo: rng.oneIn(2) ? 64 : 400)
            let input = rng.sfBytes(count: n)
            let predicate = Predicate.random(for: input, rng: &rng)
            let maxTests = rng.oneIn(10) ? rng.below(3) : rng.below(501)
            let structure: (([UInt8]) -> [[UInt8]])? = rng.oneIn(3) ? nil : randomStructure(seed: rng.next())
            checkMinimizer(input: input, predicate: predicate, maxTests: maxTests, structure: structure, &v)
        }
    }

    @Test("Minimizer: monotone predicates reach the single byte, the k bytes, the subsequence")
    func minimizerMonotone() {
        SelfFuzz.run("minimizer-monotone", iterations: 150) { rng, _, v in
            let input = rng.sfBytes(count: 1 + rng.below(rng.oneIn(3) ? 2000 : 200))
            let predicate: Predicate
            switch rng.below(3) {
            case 0: predicate = .containsByte(input[rng.below(input.count)])
            case 1: predicate = .lengthAtLeast(rng.below(input.count + 1))
            default:
                let positions = Set((0..<rng.below(min(input.count, 6) + 1)).map { _ in rng.below(input.count) }).sorted()
                predicate = .subsequence(positions.map { input[$0] })
            }
            let structure: (([UInt8]) -> [[UInt8]])? = rng.oneIn(2) ? nil : randomStructure(seed: rng.next())
            let result = checkMinimizer(input: input, predicate: predicate, maxTests: 400 + rng.below(2000), structure: structure, &v)
            guard !result.exhausted else { return }
            switch predicate {
            case .containsByte(let b):
                v.check(
                    result.bytes == [b], "\(predicate): not exhausted, but the result is \(result.bytes.count) bytes, not [\(b)] (input \(input.count) bytes)")
            case .lengthAtLeast(let k):
                v.check(result.bytes.count == k, "\(predicate): not exhausted, but the result is \(result.bytes.count) bytes (input \(input.count) bytes)")
            case .subsequence(let s):
                v.check(result.bytes == s, "\(predicate): not exhausted, but the result is \(result.bytes) (input \(input.count) bytes)")
            default: break
            }
        }
    }

    @Test("Minimizer: successive tail cuts longer than what is left do not trap (regression)")
    func minimizerTailCut() {
        // Predicates true exactly at the lengths successive cuts of n/2 reach (n, n - n/2, …, and
        // 1 for odd n), so that after two successful cuts the next cut is longer than the input
        // left. `current.prefix(current.count - cut)` trapped there before the fix.
        var v = SelfFuzz.Violations()
        for n in 0...300 {
            var rng = FuzzRNG(seed: UInt64(n))
            let x = UInt8(truncatingIfNeeded: n) | 1
            let input = [x] + rng.sfBytes(count: max(0, n - 1))
            let chain = Predicate.tailCutChain(input.count)
            for predicate in [
                Predicate.lengthIn(chain), .lengthIn(chain.union([3, input.count / 2 + 1])),
                .firstByte(x, lengths: chain), .firstByte(x, lengths: chain.union([3, input.count / 2 + 1])),
                .both(.lengthAtLeast(1), .firstByte(x, lengths: nil)),
            ] {
                for maxTests in [400, 3, 1, 0] {
                    let result = checkMinimizer(input: input, predicate: predicate, maxTests: maxTests, structure: nil, &v)
                    if input.count % 2 == 1, input.count >= 3, maxTests == 400, case .firstByte(_, .some) = predicate {
                        // Odd n: the cuts reach length 1, and [x] is 1-minimal.
                        v.check(result.bytes == [x], "n \(input.count), \(predicate): result \(result.bytes), expected [\(x)]")
                    }
                }
            }
        }
        #expect(!v.failed, "\(v.messages.joined(separator: "\n"))")
    }

    @Test("Minimizer: a budget or a stop that cuts the last check short leaves the result exhausted")
    func minimizerLastCheck() {
        // The last step, "a single byte left: does [] still fail?", treats a nil from check (the
        // budget is spent, or the predicate asked to stop) as "no", so the result claims to be
        // 1-minimal although [] was never tried. Found by `minimizer` and `minimizerTailCut`.
        let budget = Minimizer(maxTests: 0).minimize([7]) { _ in true }
        #expect(budget.exhausted, "maxTests 0, input [7], predicate always true: \(budget.bytes), \(budget.tests) tests, not exhausted")
        let stop = Minimizer().minimize([7]) { _ in nil }
        #expect(stop.exhausted, "input [7], predicate nil (stop): \(stop.bytes), \(stop.tests) tests, not exhausted")
    }

    // MARK: Mutators

    @Test("Mutators: every byte-level mutator keeps its contract on random, empty and tiny buffers", arguments: Mutator.byteLevel.map(\.name))
    func mutator(name: String) throws {
        let mutator = try #require(Mutator.byteLevel.first { $0.name == name })
        // In the long mode the mutators share one property's time.
        SelfFuzz.run("mutator \(name)", iterations: 400, share: 1 / Double(Mutator.byteLevel.count)) { rng, _, v in
            let input = rng.sfBytes(count: rng.oneIn(20) ? rng.below(4097) : rng.sfLength(upTo: 300))
            let partner: [UInt8]? =
                switch rng.below(6) {
                case 0: nil
                case 1: []
                case 2: input
                default: rng.sfBytes(count: rng.sfLength(upTo: 300))
                }
            let maxLength = randomMaxLength(for: input, &rng)
            checkMutation(mutator, input: input, partner: partner, maxLength: maxLength, &rng, &v)
        }
    }

    @Test("Mutators: stacked havoc never grows an input past maxLength")
    func havocStack() {
        SelfFuzz.run("havoc stack", iterations: 300) { rng, _, v in
            let original = rng.sfBytes(count: rng.sfLength(upTo: 200))
            let maxLength = randomMaxLength(for: original, &rng)
            let bound = max(maxLength, original.count)
            var bytes = original
            var applied: [String] = []
            for _ in 0..<(1 + rng.below(32)) {
                let mutator = rng.pick(Mutator.byteLevel)
                let partner: [UInt8]? = rng.oneIn(3) ? nil : rng.sfBytes(count: rng.sfLength(upTo: 300))
                let before = bytes
                checkMutation(mutator, input: before, partner: partner, maxLength: maxLength, &rng, &v)
                if let what = mutator.mutate(&bytes, using: &rng, context: MutationContext(partner: partner, maxLength: maxLength)) { applied.append(what) }
                v.check(bytes.count <= bound, "after \(applied), \(bytes.count) bytes: over max(maxLength \(maxLength), original \(original.count))")
                if v.failed { return }
            }
        }
    }

    // MARK: Normalize.message

    @Test("Normalize.message: hostile text never traps, stays within 200 characters, numbers do not split it")
    func normalize() {
        SelfFuzz.run("normalize", iterations: 400) { rng, _, v in
            let text = hostileMessage(&rng)
            checkNormalize(text, &rng, &v)
        }
    }

    @Test("Normalize.message: fixed hostile texts")
    func normalizeFixed() {
        let megabyte = 1 << 20
        var rng = FuzzRNG(seed: 1)
        let texts: [String] = [
            "", "]", " [rule: ", " [rule: ]", "x [rule: ", "x [rule: ]]", " [rule:  [rule: ]", "0x", "0X", "abc 0x", "0x0x0x",
            String(repeating: "7", count: megabyte), String(repeating: "0x", count: megabyte / 2),
            String(repeating: "a", count: megabyte), String(repeating: "é", count: megabyte / 2),
            String(repeating: "\u{0}", count: 5000), "a" + String(repeating: "\u{301}", count: 100_000),
            String(repeating: "1", count: 4095) + "é", String(repeating: "1", count: 4094) + "😀",
            String(repeating: "x", count: 10_000) + " [rule: " + String(repeating: "y", count: 10_000) + "]",
            String(repeating: "\u{1F1FA}", count: 999), String(repeating: "👩‍💻", count: 1000),
            "\u{FFFE}\u{FFFF}\u{0}\u{1B}[31m 12 ]]>", "٣٤٥ ０１２ 𝟎", "\r\n\r\n", "\u{600} [rule: x]", " [rule: \u{301}x]",
        ]
        var v = SelfFuzz.Violations()
        for text in texts { checkNormalize(text, &rng, &v) }
        #expect(!v.failed, "\(v.messages.joined(separator: "\n"))")
    }

    // MARK: CrashSignature

    @Test("CrashSignature: random text and damaged backtraces never trap, frames stay within their contract")
    func crashSignature() {
        SelfFuzz.run("crash-signature", iterations: 400) { rng, _, v in
            let report = rng.oneIn(4) ? rng.sfHostileText(maxScalars: 2000) : rng.sfCrashReport()
            let frames = CrashSignature.frames(in: report)
            let sited = CrashSignature.frames(in: report, site: true)
            let message = CrashSignature.message(in: report)
            let describe = { "report \(String(reflecting: report.prefix(600)))" }
            v.check(frames.count <= CrashSignature.frameCount, "\(frames.count) frames: \(frames); \(describe())")
            v.check(frames.allSatisfy { !$0.isEmpty }, "an empty frame in \(frames); \(describe())")
            v.check(!sited.contains { $0.unicodeScalars.contains("\n") }, "a frame spans lines: \(sited); \(describe())")
            v.check(
                !frames.contains { $0.contains("_assertionFailure") || $0.hasPrefix("swift_") || $0.contains("_checkIndex") },
                "a runtime frame was kept: \(frames); \(describe())")
            v.check(sited.count == frames.count, "site: true gives \(sited), site: false gives \(frames); \(describe())")
            if sited.count == frames.count, !frames.isEmpty {
                v.check(
                    // By scalars: a frame ending in a prepended mark (U+0600) joins the space
                    // after it into one Character, so Character-wise hasPrefix says no.
                    sited[0].unicodeScalars.starts(with: frames[0].unicodeScalars) && sited.dropFirst() == frames.dropFirst(),
                    "site: true gives \(sited), site: false gives \(frames); \(describe())")
            }
            // make takes any signal, frames and message.
            let signal: Int32 = rng.oneIn(2) ? Int32(rng.below(40)) : Int32(truncatingIfNeeded: rng.next())
            let madeFrames = rng.oneIn(2) ? sited : (0..<rng.below(6)).map { _ in rng.sfHostileText(maxScalars: 40) }
            let madeMessage = rng.oneIn(3) ? message : rng.oneIn(2) ? nil : rng.sfHostileText(maxScalars: 500)
            let signature = CrashSignature.make(signal: signal, frames: madeFrames, message: madeMessage)
            v.check(signature.hasPrefix(SignalName.of(signal)), "make: \(String(reflecting: signature)) does not start with \(SignalName.of(signal))")
        }
    }

    @Test("CrashSignature: a report with CRLF line ends reads as the same report with LF")
    func crashSignatureCRLF() {
        // split(separator: "\n") splits Characters, and "\r\n" is one Character: CRLF lines are
        // never split. Found by `crashSignature` ("a frame spans lines").
        let reports = [
            """
            Swift/ContiguousArrayBuffer.swift:692: Fatal error: Index out of range

            Thread 0 "fd" crashed:

              0      0x00007fddc816df7f closure #1 in closure #1 in _assertionFailure(_:_:file:line:flags:) + 623 in libswiftCore.so
              3 [ra] 0x000055707349f014 parseHabit(_:at:) + 179 in fd at /tmp/exp/f.swift:3:8
              5 [ra] 0x000055707349f014 main + 179 in fd at /tmp/exp/f.swift:12:8

            """,
            """
            ==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011
                #0 0x4f1b2c in parse_header /src/loader.c:12:3
                #1 0x4f1c00 in main /src/loader.c:40:9

            """,
        ]
        for lf in reports {
            let crlf = lf.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
            #expect(CrashSignature.frames(in: crlf) == CrashSignature.frames(in: lf))
            #expect(CrashSignature.frames(in: crlf, site: true) == CrashSignature.frames(in: lf, site: true))
            #expect(CrashSignature.message(in: crlf) == CrashSignature.message(in: lf))
        }
    }

    // MARK: Checks

    /// Runs the minimizer once and checks its contract; returns its result.
    @discardableResult
    private func checkMinimizer(
        input: [UInt8], predicate: Predicate, maxTests: Int, structure: (([UInt8]) -> [[UInt8]])?, _ v: inout SelfFuzz.Violations
    ) -> Minimizer.Result {
        let what =
            "input \(input.count) bytes\(input.count <= 48 ? " \(input)" : ""), predicate \(predicate), maxTests \(maxTests), structure \(structure == nil ? "none" : "random")"
        var calls = 0
        var tested = Set<[UInt8]>()
        var passed = Set<[UInt8]>()
        var stopped = false
        var longer = 0, repeated = 0, original = 0
        let result = Minimizer(maxTests: maxTests).minimize(input, structure: structure) { candidate in
            defer { calls += 1 }
            if candidate.count >= input.count { longer += 1 }
            if candidate == input { original += 1 }
            if !tested.insert(candidate).inserted { repeated += 1 }
            let answer = predicate.holds(candidate, calls: calls)
            if answer == true { passed.insert(candidate) }
            if answer == nil { stopped = true }
            return answer
        }
        v.check(result.tests == calls, "result.tests \(result.tests) but the predicate ran \(calls) times; \(what)")
        v.check(calls <= max(0, maxTests), "the predicate ran \(calls) times, over maxTests \(maxTests); \(what)")
        v.check(longer == 0, "\(longer) candidates were not shorter than the input; \(what)")
        v.check(original == 0, "the input itself was tested again \(original) times; \(what)")
        v.check(repeated == 0, "\(repeated) candidates were tested twice (the cache missed); \(what)")
        v.check(result.bytes.count <= input.count, "result \(result.bytes.count) bytes is longer than the input; \(what)")
        v.check(
            result.bytes == input || passed.contains(result.bytes),
            "result \(result.bytes.count) bytes\(result.bytes.count <= 48 ? " \(result.bytes)" : "") is neither the input nor a candidate that passed; \(what)")
        if stopped {
            v.check(
                result.exhausted,
                "the predicate returned nil (stop), but the result is not marked exhausted; result \(result.bytes), tests \(result.tests); \(what)")
        }
        // Deterministic predicates: the result still fails, and is 1-minimal unless exhausted.
        if !stopped, predicate.holds(input) == true {
            v.check(predicate.holds(result.bytes) == true, "the result does not satisfy the predicate; \(what)")
            if !result.exhausted {
                for i in result.bytes.indices {
                    var smaller = result.bytes
                    smaller.remove(at: i)
                    if predicate.holds(smaller) == true {
                        v.fail(
                            "not exhausted, but the result \(result.bytes.count <= 48 ? "\(result.bytes)" : "(\(result.bytes.count) bytes)") is not 1-minimal: without byte \(i) it still satisfies the predicate; tests \(result.tests); \(what)"
                        )
                        break
                    }
                }
                if result.bytes.count == 1, predicate.holds([]) == true {
                    v.fail("not exhausted, but the result \(result.bytes) is not 1-minimal: [] satisfies the predicate; tests \(result.tests); \(what)")
                }
            }
        }
        return result
    }

    private func randomMaxLength(for input: [UInt8], _ rng: inout FuzzRNG) -> Int {
        switch rng.below(8) {
        case 0: return 0
        case 1: return input.count
        case 2: return max(0, input.count - 1 - rng.below(4))
        case 3: return input.count + 1 + rng.below(4)
        case 4: return 1 << 20
        case 5: return -1 - rng.below(100)  // not a sensible limit, but MutationContext takes it
        default: return rng.below(65)
        }
    }

    /// The contract of the byte-level mutators, from their doc comments in Mutator+Bytes.swift:
    ///
    /// - A mutator that returns nil ("cannot apply") leaves the bytes alone; one that applies
    ///   returns a non-empty description, and the same generator state gives the same result.
    /// - An input never grows past `maxLength` ("Inputs never grow beyond this many bytes"):
    ///   the output is at most `max(maxLength, input length)` bytes. An input already longer
    ///   than `maxLength` may keep its length or shrink; a negative `maxLength` acts as 0.
    /// - Each mutator does what its comment says: bit-flip changes one bit; byte-flip inverts
    ///   1, 2 or 4 adjacent bytes (fewer when the input is shorter); random-byte changes one
    ///   byte; arithmetic and interesting-int rewrite one field of at most 8 bytes; insert adds
    ///   1 to 32 bytes in one place; delete removes one range of 1 to max(1, n/4) bytes;
    ///   duplicate inserts a copy of a range of 1 to 64 bytes right after it; copy keeps the
    ///   length; truncate keeps a strict prefix; splice is a prefix of the input (shorter than
    ///   it) followed by bytes of the partner from one offset on.
    private func checkMutation(
        _ mutator: Mutator, input: [UInt8], partner: [UInt8]?, maxLength: Int, _ rng: inout FuzzRNG, _ v: inout SelfFuzz.Violations
    ) {
        let context = MutationContext(partner: partner, maxLength: maxLength)
        var replay = rng
        var bytes = input
        let what = mutator.mutate(&bytes, using: &rng, context: context)
        var again = input
        let whatAgain = mutator.mutate(&again, using: &replay, context: context)
        let name = mutator.name
        let describe =
            "\(name) on \(input.count) bytes\(input.count <= 32 ? " \(input)" : ""), partner \(partner.map { "\($0.count) bytes" } ?? "nil"), maxLength \(maxLength)"
        v.check(again == bytes && whatAgain == what, "\(describe): not deterministic (\(what ?? "nil") vs \(whatAgain ?? "nil"))")
        guard let what else {
            v.check(bytes == input, "\(describe): returned nil but changed the bytes")
            return
        }
        v.check(!what.isEmpty, "\(describe): empty description")
        v.check(bytes.count <= max(maxLength, input.count), "\(describe): \(what) made \(bytes.count) bytes, over max(maxLength, input length)")
        let n = input.count, m = bytes.count
        let prefix = zip(input, bytes).prefix { $0 == $1 }.count
        let suffix = zip(input.reversed(), bytes.reversed()).prefix { $0 == $1 }.count
        let differing = (0..<min(n, m)).filter { input[$0] != bytes[$0] }
        switch name {
        case "bit-flip":
            let bits = zip(input, bytes).reduce(0) { $0 + ($1.0 ^ $1.1).nonzeroBitCount }
            v.check(m == n && bits == 1, "\(describe): \(what) changed \(bits) bits, length \(n) -> \(m)")
        case "byte-flip":
            let width = differing.count
            let adjacent = differing.last.map { $0 - differing[0] + 1 == width } ?? false
            let inverted = differing.allSatisfy { bytes[$0] == ~input[$0] }
            v.check(
                m == n && adjacent && inverted && ([1, 2, 4].contains(width) || width == n),
                "\(describe): \(what) changed \(width) bytes \(differing), length \(n) -> \(m)")
        case "random-byte":
            v.check(m == n && differing.count == 1, "\(describe): \(what) changed \(differing.count) bytes, length \(n) -> \(m)")
        case "arithmetic", "interesting-int":
            let span = differing.last.map { $0 - differing[0] + 1 } ?? 0
            v.check(m == n && span <= 8, "\(describe): \(what) changed bytes \(differing), length \(n) -> \(m)")
        case "insert":
            v.check((1...32).contains(m - n) && prefix + suffix >= n, "\(describe): \(what) is not an insertion of 1 to 32 bytes (\(n) -> \(m))")
        case "delete":
            v.check(
                (1...max(1, n / 4)).contains(n - m) && prefix + suffix >= m, "\(describe): \(what) is not a deletion of 1 to max(1, n/4) bytes (\(n) -> \(m))")
        case "duplicate":
            let c = m - n
            // A copy of input[at..<at+c] right after it: the first at+c bytes are the input's,
            // and so are the last n-at-c.
            let isDuplicate =
                (1...64).contains(c) && c <= n && prefix >= c && max(0, n - c - suffix) <= min(n - c, prefix - c)
                && (max(0, n - c - suffix)...min(n - c, prefix - c)).contains { at in
                    bytes[(at + c)..<(at + 2 * c)].elementsEqual(input[at..<(at + c)])
                }
            v.check(isDuplicate, "\(describe): \(what) is not a range inserted after itself (\(n) -> \(m))")
        case "copy":
            v.check(m == n, "\(describe): \(what) changed the length \(n) -> \(m)")
        case "truncate":
            v.check(m < n && prefix == m, "\(describe): \(what) is not a strict prefix (\(n) -> \(m))")
        case "splice":
            let partner = partner ?? []
            // Some cut no longer than the common prefix, after which come partner bytes (the
            // longest such cut is nearly always the one, so try those first).
            let isSplice =
                n > 0
                && (0...min(prefix, n - 1, m)).reversed().contains { cut in
                    bytes.count == cut || partner.firstRange(of: bytes[cut...]) != nil
                }
            v.check(isSplice, "\(describe): \(what) is not a prefix of the input followed by a suffix of the partner (\(n) -> \(m))")
        default:
            break  // a mutator added later: the generic contract above still holds
        }
    }

    /// Text for `Normalize.message`, from many hostile families.
    private func hostileMessage(_ rng: inout FuzzRNG) -> String {
        let part = { (rng: inout FuzzRNG) -> String in rng.sfHostileText(maxScalars: rng.oneIn(8) ? 3000 : 200) }
        switch rng.below(14) {
        case 0: return part(&rng)
        case 1: return String(repeating: "0123456789".randomSlice(&rng), count: 1 + rng.below(2000))  // only digits
        case 2: return String((0..<rng.below(500)).map { _ in Character(Unicode.Scalar(0x0660 + UInt32(rng.below(10)))!) })  // other digits
        case 3: return part(&rng) + rng.pick(["0x", "0X", " 0x", "0x0", "0xg"])
        case 4: return part(&rng) + rng.pick([" [rule: ", " [rule:", "[rule: ", " [rule: ]", " [rule: ]]"])
        case 5: return part(&rng) + " [rule: " + part(&rng) + "]"
        case 6:
            return rng.pick(["a", "", "0", " "]) + String(repeating: Character(Unicode.Scalar(0x300 + UInt32(rng.below(0x70)))!), count: rng.below(10_000))
        case 7:
            // Around 1 MB, now and then (each costs a little).
            guard rng.oneIn(8) else { return part(&rng) }
            let chunk = part(&rng) + "x"
            return String(repeating: chunk, count: (1 << 20) / max(1, chunk.utf8.count) + 1)
        case 8: return String(repeating: "\u{0}", count: rng.below(300)) + part(&rng) + String(repeating: "\u{0}", count: rng.below(300))
        case 9:
            // Multi-byte scalars straddling the 4096-byte cut.
            let pad = String(repeating: "1", count: 4096 - 1 - rng.below(4))
            return pad + rng.pick(["é", "✓", "😀", "\u{301}\u{301}", "👩‍💻", "a\u{FFFE}"]) + part(&rng)
        case 10:
            // About 200 characters, so that the cut at 200 lands near a "]" or a " [rule: ".
            let filler = String(repeating: rng.pick(["a", "1", "é", "\u{1F1FA}"]), count: 180 + rng.below(30))
            return filler + " [rule: " + part(&rng) + rng.pick(["]", "] tail", "]" + String(repeating: "z", count: rng.below(40))])
        case 11: return (0..<rng.below(40)).map { _ in String(rng.next(), radix: 16) }.joined(separator: rng.pick(["-", " ", "", "x", ": "]))
        case 12: return part(&rng) + part(&rng) + " [rule: " + part(&rng) + " [rule: " + part(&rng) + "]"
        default: return rng.sfHostileText(maxScalars: 20)
        }
    }

    /// The contract of `Normalize.message`: it never traps and keeps at most 200 characters;
    /// outside the ` [rule: NAME]` form it replaces every ASCII number (so the output holds no
    /// ASCII digit, and other digits in the same places give the same output) and is idempotent.
    private func checkNormalize(_ text: String, _ rng: inout FuzzRNG, _ v: inout SelfFuzz.Violations) {
        let out = Normalize.message(text)
        let describe = {
            "input (\(text.utf8.count) bytes, \(text.unicodeScalars.count) scalars) \(String(reflecting: String(text.prefix(300))))\(text.count > 300 ? "…" : ""), output \(String(reflecting: out))"
        }
        v.check(out.count <= 200, "output has \(out.count) characters; \(describe())")
        // The ` [rule: NAME]` form keeps NAME as it is, digits and all: it is not re-normalized
        // and so not idempotent ("libxml2 error 77" would become "libxml# error #"), by design.
        let ruleForm = text.hasSuffix("]") && text.ranges(of: " [rule: ").last != nil
        guard !ruleForm else {
            // (Searched for as Characters, as message(_:) does: a space that joins the scalar
            // before it, such as U+0605, into one Character is not a marker's space.)
            v.check(out.ranges(of: " [rule: ").isEmpty, "the rule form kept a rule marker; \(describe())")
            return
        }
        v.check(!out.unicodeScalars.contains { ("0"..."9").contains($0) }, "an ASCII digit survived; \(describe())")
        // Numbers do not split it: other non-zero digits in the places of non-zero digits (so
        // that "0x" prefixes stay what they are) give the same output.
        var changed = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if ("1"..."9").contains(scalar) {
                changed.append(Unicode.Scalar(UInt8(ascii: "1") + UInt8(rng.below(9))))
            } else {
                changed.append(scalar)
            }
        }
        let other = Normalize.message(String(changed))
        v.check(other == out, "other digits gave \(String(reflecting: other)); \(describe())")
        // Idempotent, except where the 200-character cut leaves text that ends in "]" and holds
        // " [rule: ": that output reads as the rule form the second time (reported, not asserted).
        let cutIntoRuleForm = out.hasSuffix("]") && out.ranges(of: " [rule: ").last != nil
        if !cutIntoRuleForm {
            let twice = Normalize.message(out)
            v.check(twice == out, "not idempotent: message(message(x)) is \(String(reflecting: twice)); \(describe())")
        }
    }
}

extension String {
    /// A random non-empty run of this string's characters.
    fileprivate func randomSlice(_ rng: inout FuzzRNG) -> String {
        let start = rng.below(count)
        let length = 1 + rng.below(count - start)
        return String(dropFirst(start).prefix(length))
    }
}
