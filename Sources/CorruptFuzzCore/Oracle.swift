import Foundation

/// Decides whether one execution shows a bug.
///
/// The label of an input is the mutation's expectation when there is one (a missing file must
/// be rejected as `not-found`), otherwise the validator's verdict. Crashes, hangs and memory
/// blow-ups are bugs whatever the label.
///
/// With ``OutsideTraps``, a loader whose output holds the canary file's content, or that
/// contacted the loopback listener while it ran, has an `xxe` finding.
public struct Oracle: Sendable {
    /// The traps to check for, if the campaign set them.
    public var traps: OutsideTraps?

    public init(traps: OutsideTraps? = nil) { self.traps = traps }

    /// Whether the oracle needs the validator's verdict to judge `outcome`.
    public func needsVerdict(for outcome: Outcome, input: TestInput) -> Bool {
        switch outcome {
        case .accepted, .rejected: Expectation.intrinsic(for: input.bytes) == nil
        case .acceptedInvalid: false
        case .crashed, .hung, .outOfMemory: false
        }
    }

    /// Judges one execution.
    /// - Parameters:
    ///   - input: The input, with its expectation if its mutation knows one.
    ///   - execution: What the loader did.
    ///   - verdict: The validator's verdict, or nil when there is no validator.
    ///   - fetched: URLs of the loopback listener that were requested while the loader ran.
    /// - Returns: The finding, or nil when the loader behaved.
    public func judge(_ input: TestInput, execution: Execution, verdict: Verdict?, fetched: [String] = []) -> Finding? {
        // Most inputs, first: a corrupt file rejected, with no trap, no expectation and nothing
        // held, whose label cannot fault the rejection (what the general path below decides,
        // without building its label and findings).
        if fetched.isEmpty, traps == nil, execution.held == nil, input.expectation == nil, let bytes = input.bytes, !bytes.isEmpty,
            case .rejected(let reason, _, _) = execution.outcome
        {
            switch verdict {
            case nil, .undecided?: return nil
            case .invalid(let violation)?:
                if violation.reason == nil || reason == nil || violation.reason == reason { return nil }
            case .valid?, .error?: break
            }
        }
        let label: Verdict?
        if let intrinsic = Expectation.intrinsic(for: input.bytes) {
            label = .invalid(Violation(intrinsic.reason, intrinsic.because))
        } else if let expectation = input.expectation {
            // The validator's message is more precise; use it when it agrees on the reason,
            // so one bug keeps one signature however the input was made.
            if case .invalid(let violation)? = verdict, violation.reason == expectation.reason {
                label = verdict
            } else if expectation.mayBeAccepted, !execution.outcome.isRejection {
                // Accepted: the validator's verdict decides, as for any input.
                switch verdict {
                case .invalid?, .valid?: label = verdict
                case .undecided?, .error?, nil: label = nil
                }
            } else {
                label = .invalid(Violation(expectation.reason, expectation.because))
            }
        } else if case .undecided? = verdict {
            label = nil
        } else if case .error? = verdict {
            label = nil
        } else {
            label = verdict
        }
        func finding(_ kind: FindingKind, _ signature: String, _ detail: String) -> Finding {
            Finding(kind: kind, signature: signature, detail: detail, input: input, execution: execution, verdict: label)
        }
        if let leak = outsideReach(execution, input: input.bytes ?? [], fetched: fetched) {
            return finding(.xxe, leak.signature, leak.detail)
        }
        if let loaderFinding = judgeLoader(execution.outcome, label: label, finding) { return loaderFinding }
        if let held = execution.held, let first = held.first {
            // A loader that returns with its file still open or locked: an app suspended then
            // is killed by the system for the lock (0xdead10cc); a descriptor leaks per load.
            let locked = first.hasSuffix(" (locked)")
            return finding(
                .heldLock, locked ? "a lock on the input file is still held after the load" : "the input file is still open after the load",
                "after it answered, the loader still holds: \(held.joined(separator: ", "))")
        }
        if case .error(let signature, let detail)? = verdict {
            // The loader did nothing wrong that a label could show, and the validator failed:
            // a problem of the validator, reported as such.
            return finding(.validatorError, "validator " + Normalize.message(signature), "the validator failed on this input: \(detail)")
        }
        return nil
    }

    /// The loader's finding for `outcome` under `label`, if it misbehaved.
    private func judgeLoader(
        _ outcome: Outcome, label: Verdict?, _ finding: (FindingKind, String, String) -> Finding
    ) -> Finding? {
        switch outcome {
        case .crashed(let signal, let frames, let message):
            return finding(.crash, CrashSignature.make(signal: signal, frames: frames, message: message), outcome.summary)
        case .hung(let ms):
            return finding(.hang, "no exit within the timeout", "no exit within \(ms) ms")
        case .outOfMemory(_, let message):
            return finding(.oom, "over the memory limit", message ?? outcome.summary)
        case .acceptedInvalid(let message):
            return finding(.silentAcceptance, "value: " + Normalize.message(message), "accepted, but the loaded value is invalid: \(message)")
        case .accepted:
            guard case .invalid(let violation)? = label else { return nil }
            let signature = violation.reason.map { "\($0): " } ?? ""
            // Written once: a schema's violation is written by parsing the input again.
            let described = violation.description
            return finding(.silentAcceptance, signature + Normalize.message(described), "accepted, but the validator says: \(described)")
        case .rejected(let reason, _, let message):
            switch label {
            case nil, .undecided?, .error?:
                return nil
            case .valid?:
                let said = reason?.rawValue ?? "no reason"
                return finding(.falseRejection, "rejected valid input as \(said)", "rejected a valid file (\(said))" + (message.map { ": \($0)" } ?? ""))
            case .invalid(let violation)?:
                guard let expected = violation.reason, let reason, reason != expected else { return nil }
                return finding(
                    .wrongReason, "expected \(expected), got \(reason)", "rejected as \(reason), but it should be \(expected): \(violation)")
            }
        }
    }
}

extension Oracle {
    /// A canary leak or a fetch, unless the loader crashed, hung or ran out of memory first.
    func outsideReach(_ execution: Execution, input: [UInt8], fetched: [String]) -> (signature: String, detail: String)? {
        switch execution.outcome {
        case .crashed, .hung, .outOfMemory: return nil
        default: break
        }
        if let url = fetched.first {
            return (
                "fetched a URL the document named", "the loader requested \(url) while it read the file: external DTDs or entities are loaded from the network"
            )
        }
        guard let traps else { return nil }
        let token = Array(traps.canaryToken.utf8)
        // A loader that echoes its input would print a token the input holds itself (the
        // minimizer finds such inputs): only a token the input does not hold is a leak.
        if Self.occurs(token, in: input) { return nil }
        for (stream, bytes) in [("output", execution.stdout), ("error output", execution.stderr)] where Self.occurs(token, in: bytes) {
            return (
                "read a local file through an external entity",
                "the content of \(traps.canaryPath), named by an external entity, appears in the loader's \(stream)"
            )
        }
        return nil
    }

    /// Whether `needle` occurs in `haystack`.
    public static func occurs(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        // The C library's byte search (every output and input of a campaign with traps is
        // searched): a Swift loop over the array is slow in a debug build on a megabyte input.
        return haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { needle in
                guard let base = hay.baseAddress, let wanted = needle.baseAddress else { return false }
                let first = Int32(needle[0])
                var offset = 0
                let last = hay.count - needle.count
                while offset <= last, let found = memchr(base + offset, first, last - offset + 1) {
                    offset = base.distance(to: UnsafeRawPointer(found))
                    if memcmp(found, wanted, needle.count) == 0 { return true }
                    offset += 1
                }
                return false
            }
        }
    }
}

/// Makes messages comparable across inputs by replacing the numbers in them.
public enum Normalize {
    /// Replaces each number with `#`, so that `habits[2].dates.count: 99` and
    /// `habits[0].dates.count: 7` share a signature. A number is a run of digits, a hex literal
    /// (`0x1F`), or a word of hex digits that holds a digit (`1f0eea31`, each part of a UUID) or
    /// is eight or more long (a 32-bit checksum is all letters, `efaadfce`, once in 2,500):
    /// `checksum mismatch: stored 1f0eea31, computed efaadfce` reads
    /// `checksum mismatch: stored #, computed #` whatever the checksums were.
    ///
    /// A message that ends with ` [rule: NAME]` is judged by NAME alone: validators whose
    /// messages quote the document (a tag name, a value) name the broken rule that way, e.g.
    /// `line 3: Premature end of data in tag time [rule: XML_ERR_TAG_NOT_FINISHED]`. Otherwise
    /// what the message quotes from the document is left out: text between single or double
    /// quotes or angle brackets becomes `…` (`root: <nodes> is not <notes>` reads
    /// `root: <…> is not <…>`), so one broken rule is one signature whatever value broke it.
    public static func message(_ text: String) -> String {
        if text.hasSuffix("]"), let range = text.ranges(of: " [rule: ").last {
            return String(text[range.upperBound...].dropLast().prefix(200))
        }
        let bytes = withoutQuotedText(Array(text.utf8.prefix(4096)))
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        bytes.withUnsafeBufferPointer { buffer in normalizedBytes(of: buffer) { out.append($0) } }
        let normalized = String(decoding: out, as: UTF8.self)
        // A cut message ends in "…", so it never ends like a ` [rule: NAME]` message it wasn't.
        return normalized.count <= 200 ? normalized : String(normalized.prefix(199)) + "…"
    }

    /// The bytes of `text` with each number as `#`, one by one to `emit` (``message(_:)``
    /// without its rule names and its length limit; a campaign hashes them as they come).
    @inlinable
    public static func normalizedBytes(of text: UnsafeBufferPointer<UInt8>, _ emit: (UInt8) -> Void) {
        var i = 0
        while i < text.count {
            let byte = text[i]
            guard isAlphanumeric(byte) else {
                emit(byte)
                i += 1
                continue
            }
            // One word: `#` if it is a number, else the word with its digit runs as `#`.
            var end = i
            var allHex = true, hasDigit = false
            while end < text.count, isAlphanumeric(text[end]) {
                allHex = allHex && isHexDigit(text[end])
                hasDigit = hasDigit || isDigit(text[end])
                end += 1
            }
            var hexLiteral = end - i > 2 && byte == UInt8(ascii: "0") && (text[i + 1] | 0x20) == UInt8(ascii: "x")
            if hexLiteral {
                for j in (i + 2)..<end where !isHexDigit(text[j]) {
                    hexLiteral = false
                    break
                }
            }
            if hexLiteral || (allHex && (hasDigit || end - i >= 8)) {
                emit(UInt8(ascii: "#"))
            } else {
                // Each digit run is `#`, and so is each run between them that would be a
                // number on its own (`deadbeef0X` is `##X`), so that the output normalizes to
                // itself.
                var j = i
                while j < end {
                    var k = j
                    if isDigit(text[j]) {
                        while k < end, isDigit(text[k]) { k += 1 }
                        emit(UInt8(ascii: "#"))
                    } else {
                        var hex = true
                        while k < end, !isDigit(text[k]) {
                            hex = hex && isHexDigit(text[k])
                            k += 1
                        }
                        if hex && k - j >= 8 {
                            emit(UInt8(ascii: "#"))
                        } else {
                            for m in j..<k { emit(text[m]) }
                        }
                    }
                    j = k
                }
            }
            i = end
        }
    }

    /// `bytes` with the text between each pair of quotes (`'…'`, `"…"`) or angle brackets
    /// (`<…>`) on one line replaced by `…`; an apostrophe without a partner, or inside a word,
    /// stays, and so does a labelled string of a Swift value's description
    /// (`LoadError(reason: "corrupt", message: "a note has no id")`: the app's own words, which
    /// tell its rules apart), quotes inside it replaced as anywhere else.
    static func withoutQuotedText(_ bytes: [UInt8]) -> [UInt8] {
        // The closing character of each opening one (no table built per message).
        func closing(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""): byte
            case UInt8(ascii: "<"): UInt8(ascii: ">")
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        // Inside a labelled string of a Swift value's description (`message: "…"`): its text is
        // the app's message, not the document's, and is kept (quotes inside it still count).
        var inLabelled = false
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                if inLabelled {
                    if bytes[i - 1] != UInt8(ascii: "\\") { inLabelled = false }
                    out.append(byte)
                    i += 1
                    continue
                }
                if i >= 3, bytes[i - 1] == UInt8(ascii: " "), bytes[i - 2] == UInt8(ascii: ":"), isAlphanumeric(bytes[i - 3]) {
                    inLabelled = true
                    out.append(byte)
                    i += 1
                    continue
                }
            }
            // An apostrophe inside a word (`document's`) opens nothing.
            let inWord = byte == UInt8(ascii: "'") && i > 0 && isAlphanumeric(bytes[i - 1]) && i + 1 < bytes.count && isAlphanumeric(bytes[i + 1])
            // The first closing character on the same line, with no other opening one before it
            // (so a second pass finds the same pairs: the output normalizes to itself).
            if let close = closing(byte), !inWord,
                let end = bytes[(i + 1)...].firstIndex(where: { $0 == close || $0 == 0x0A || $0 == byte || (inLabelled && $0 == 0x22) }),
                bytes[end] == close
            {
                out.append(byte)
                out += Array("…".utf8)
                out.append(close)
                i = end + 1
                continue
            }
            out.append(byte)
            i += 1
        }
        return out
    }

    @usableFromInline static func isDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }
    @usableFromInline static func isHexDigit(_ b: UInt8) -> Bool { isDigit(b) || (b | 0x20) &- 0x61 < 6 }
    @usableFromInline static func isAlphanumeric(_ b: UInt8) -> Bool { isDigit(b) || (b | 0x20) &- 0x61 < 26 }
}
