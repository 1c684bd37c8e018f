import CorruptFuzzCore
import Testing

@Suite("Oracle")
struct OracleTests {
    let oracle = Oracle()
    let file = TestInput(bytes: [1, 2, 3], mutations: ["bit-flip@1.2"], seedName: "a.habits")

    func run(_ outcome: Outcome, input: TestInput? = nil, verdict: Verdict? = nil) -> Finding? {
        oracle.judge(input ?? file, execution: Execution(outcome: outcome), verdict: verdict)
    }

    @Test("crashes, hangs and memory blow-ups are findings whatever the label")
    func alwaysFindings() {
        #expect(run(.crashed(signal: 11, frames: ["parse", "load"], message: nil))?.kind == .crash)
        #expect(run(.crashed(signal: 11, frames: ["parse", "load"], message: nil))?.signature == "SIGSEGV at parse ← load")
        #expect(run(.hung(milliseconds: 1000), verdict: .valid)?.kind == .hang)
        #expect(run(.outOfMemory(peakKilobytes: 1, message: "std::bad_alloc"))?.kind == .oom)
    }

    @Test("accepting what the validator rejects is a silent acceptance, with a number-free signature")
    func silentAcceptance() {
        let a = run(.accepted(digest: ""), verdict: .invalid(Violation(.corrupt, "habits[2].dates.count: 99 exceeds limit 10")))
        let b = run(.accepted(digest: ""), verdict: .invalid(Violation(.corrupt, "habits[0].dates.count: 7 exceeds limit 10")))
        #expect(a?.kind == .silentAcceptance)
        #expect(a?.signature == b?.signature)
        #expect(a?.signature == "corrupt: habits[#].dates.count: # exceeds limit #")
        #expect(run(.accepted(digest: ""), verdict: .valid) == nil)
        #expect(run(.accepted(digest: "")) == nil)
    }

    @Test("rejecting valid input is a false rejection")
    func falseRejection() {
        let f = run(.rejected(reason: "corrupt", exitCode: 1, message: nil), verdict: .valid)
        #expect(f?.kind == .falseRejection)
        #expect(f?.signature == "rejected valid input as corrupt")
    }

    @Test("different reasons from loader and validator are a wrong reason; a missing reason is not")
    func wrongReason() {
        let f = run(.rejected(reason: "corrupt", exitCode: 1, message: nil), verdict: .invalid(Violation(.unsupportedVersion, "version: 2")))
        #expect(f?.kind == .wrongReason)
        #expect(f?.signature == "expected unsupported-version, got corrupt")
        #expect(run(.rejected(reason: nil, exitCode: 1, message: nil), verdict: .invalid(Violation(.corrupt, "x"))) == nil)
        #expect(run(.rejected(reason: "corrupt", exitCode: 1, message: nil), verdict: .invalid(Violation(.corrupt, "x"))) == nil)
    }

    @Test("a rejection the label agrees with is judged quickly, but an expectation, a held file or a failed validator still decide")
    func rejectionsBesideTheCommonCase() {
        let rejected = Outcome.rejected(reason: "corrupt", exitCode: 1, message: "bad")
        let invalid = Verdict.invalid(Violation(.corrupt, "crc32 stored 1 != computed 2"))
        #expect(run(rejected, verdict: invalid) == nil)
        #expect(run(rejected) == nil)
        #expect(run(rejected, verdict: .undecided("too large")) == nil)
        // The mutation knew: a future version must be unsupported-version, whatever the validator.
        var future = file
        future.expectation = Expectation(reason: .unsupportedVersion, because: "version 9 is newer")
        #expect(run(rejected, input: future, verdict: invalid)?.signature == "expected unsupported-version, got corrupt")
        // A file still held open after the rejection.
        let held = oracle.judge(file, execution: Execution(outcome: rejected, held: ["/tmp/x.habits (locked)"]), verdict: invalid)
        #expect(held?.kind == .heldLock)
        // The validator failed: its own finding.
        #expect(run(rejected, verdict: .error(signature: "SIGSEGV", detail: "crashed"))?.kind == .validatorError)
        #expect(run(rejected, verdict: .valid)?.kind == .falseRejection)
    }

    @Test("a missing file must be rejected as not-found and an empty one as empty, whatever the validator says")
    func intrinsicExpectations() {
        let missing = TestInput(bytes: nil, mutations: ["missing-file"], seedName: "-")
        let empty = TestInput(bytes: [], mutations: ["truncate@0"], seedName: "-")
        #expect(run(.rejected(reason: "corrupt", exitCode: 1, message: nil), input: missing)?.signature == "expected not-found, got corrupt")
        #expect(run(.rejected(reason: "not-found", exitCode: 1, message: nil), input: missing) == nil)
        #expect(run(.accepted(digest: ""), input: empty, verdict: .valid)?.kind == .silentAcceptance)
        #expect(run(.rejected(reason: "corrupt", exitCode: 1, message: nil), input: empty)?.kind == .wrongReason)
        #expect(oracle.needsVerdict(for: .accepted(digest: ""), input: empty) == false)
    }

    @Test("a validator that fails is a validator-error finding, and the input stays unlabeled")
    func validatorError() {
        let failed = Verdict.error(signature: "crash: SIGSEGV at check(_:)", detail: "crash (SIGSEGV) at check(_:)")
        let accepted = run(.accepted(digest: ""), verdict: failed)
        #expect(accepted?.kind == .validatorError)
        #expect(accepted?.signature == "validator crash: SIGSEGV at check(_:)")
        #expect(run(.rejected(reason: "corrupt", exitCode: 1, message: nil), verdict: failed)?.kind == .validatorError)
        // The loader's own crash is still the finding.
        #expect(run(.crashed(signal: 11, frames: ["parse"], message: nil), verdict: failed)?.kind == .crash)
        // A mutation's expectation still labels the input; the validator is not needed then.
        let future = TestInput(
            bytes: [1], mutations: ["version=future"], seedName: "a", expectation: Expectation(reason: "unsupported-version", because: "newer"))
        #expect(run(.accepted(digest: ""), input: future, verdict: nil)?.kind == .silentAcceptance)
    }

    @Test("an undecided validator labels nothing")
    func undecided() {
        #expect(run(.accepted(digest: ""), verdict: .undecided("validator crashed")) == nil)
        #expect(run(.rejected(reason: "x", exitCode: 1, message: nil), verdict: .undecided("validator hung")) == nil)
    }

    @Test("the canary's content in the output or error output, or a fetch during the run, is an xxe finding; a crash stays a crash")
    func xxe() {
        let oracle = Oracle(traps: OutsideTraps(canaryPath: "/tmp/c/secret.txt", canaryToken: "corrupt-fuzz-canary-abc"))
        let leak = Execution(outcome: .accepted(digest: ""), stdout: Array("note: corrupt-fuzz-canary-abc\n".utf8))
        #expect(oracle.judge(file, execution: leak, verdict: .valid)?.kind == .xxe)
        let inError = Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil), stderr: Array("bad corrupt-fuzz-canary-abc".utf8))
        #expect(oracle.judge(file, execution: inError, verdict: nil)?.signature == "read a local file through an external entity")
        let echo = TestInput(bytes: Array("corrupt-fuzz-canary-abc".utf8), seedName: "a.xml")
        #expect(oracle.judge(echo, execution: leak, verdict: nil) == nil, "an input that holds the token itself is echoed, not leaked")
        let clean = Execution(outcome: .accepted(digest: ""), stdout: Array("corrupt-fuzz-canary-ab".utf8))
        #expect(oracle.judge(file, execution: clean, verdict: .valid) == nil)
        let fetched = oracle.judge(
            file, execution: Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil)),
            verdict: nil, fetched: ["http://127.0.0.1:1/t/external.dtd"])
        #expect(fetched?.kind == .xxe && fetched?.signature == "fetched a URL the document named")
        let crash = Execution(outcome: .crashed(signal: 11, frames: [], message: nil), stdout: Array("corrupt-fuzz-canary-abc".utf8))
        #expect(oracle.judge(file, execution: crash, verdict: nil)?.kind == .crash)
    }

    @Test("a message ending in [rule: NAME] gets NAME as its signature, whatever tags it quotes")
    func ruleSignature() {
        #expect(Normalize.message("line 3: Premature end of data in tag time line 1 [rule: libxml2 error 77]") == "libxml2 error 77")
        #expect(Normalize.message("line 9: Premature end of data in tag gpx line 2 [rule: libxml2 error 77]") == "libxml2 error 77")
        #expect(Normalize.message("habits[2]: count 7") == "habits[#]: count #")
    }

    @Test("what a message quotes from the document is left out of its signature: one broken rule, one signature")
    func quotedText() {
        #expect(Normalize.message("root: <nodes> is not <notes>") == Normalize.message("root: <GGGtes> is not <notes>"))
        #expect(Normalize.message("root: <nodes> is not <notes>") == "root: <…> is not <…>")
        #expect(
            Normalize.message("/notes/@version: 'true' is not a positive integer") == Normalize.message("/notes/@version: '' is not a positive integer"))
        #expect(
            Normalize.message("Element 'notes', attribute 'vZrsion': The attribute 'vZrsion' is not allowed.")
                == "Element '…', attribute '…': The attribute '…' is not allowed.")
        #expect(Normalize.message(#"name "Alice" is too long"#) == #"name "…" is too long"#)
        // A Swift error's description keeps its labelled strings (the app's words), with what
        // they quote from the document dropped: two rules stay two findings.
        #expect(
            Normalize.message(#"NotesLoadError(reason: "corrupt", message: "note 'x7' has no id")"#)
                == #"NotesLoadError(reason: "corrupt", message: "note '…' has no id")"#)
        #expect(
            Normalize.message(#"NotesLoadError(reason: "corrupt", message: "ids are not unique")"#)
                != Normalize.message(#"NotesLoadError(reason: "corrupt", message: "a note has no id")"#))
        #expect(Normalize.message(#"E(message: "say \"hi\" 'there'")"#) == #"E(message: "say \"hi\" '…'")"#)
        // An apostrophe in a word, or one without a partner on its line, stays.
        #expect(Normalize.message("a notes document's 3 bytes") == "a notes document's # bytes")
        #expect(Normalize.message("can't read 'x\n' here") == "can't read 'x\n' here")
        #expect(Normalize.message("a < b and c") == "a < b and c")
    }

    @Test("a byte string is found wherever it starts, and only where all of it is")
    func occurs() {
        func has(_ needle: String, _ haystack: String) -> Bool { Oracle.occurs(Array(needle.utf8), in: Array(haystack.utf8)) }
        #expect(has("abc", "abc"))
        #expect(has("abc", "abcxx") && has("abc", "xxabc") && has("abc", "xabcx"))
        #expect(has("aab", "aaab"))  // a false start on the first byte, then the match
        #expect(!has("abc", "ab") && !has("abc", "abxabd") && !has("abc", "") && !has("", "abc"))
        #expect(!has("abc", "cba") && !has("ba", "aaaa"))
        // A megabyte of one byte (what a catalogue entry is made of); kept out of the
        // expectation, which would print it.
        var big = [UInt8](repeating: 0x61, count: 1 << 20)
        let inNone = Oracle.occurs(Array("ab".utf8), in: big)
        big[big.count - 1] = 0x62
        let atTheEnd = Oracle.occurs(Array("ab".utf8), in: big)
        #expect(!inNone && atTheEnd)
        #expect(Oracle.occurs([0], in: [1, 2, 0]) && !Oracle.occurs([0, 0], in: [0, 1, 0]))
    }
}
