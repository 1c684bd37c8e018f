import CorruptFuzzCore
import Foundation
import Testing

@testable import CorruptFuzzRunner

@Suite("The judge every mode uses")
struct JudgeTests {
    let traps = OutsideTraps(
        canaryPath: "/var/tmp/corrupt-fuzz-traps-new42/secret.txt", canaryToken: "t",
        dtdURL: "http://127.0.0.1:5555/corrupt-fuzz-traps-new42/external.dtd", entityURL: "http://127.0.0.1:5555/corrupt-fuzz-traps-new42/entity.txt")

    func rebound(_ text: String) -> String { String(decoding: OutsideTrapsHost.rebind(Array(text.utf8), to: traps), as: UTF8.self) }

    @Test("a saved input's trap references point at this run's traps")
    func rebind() {
        #expect(rebound(#"SYSTEM "file:///tmp/corrupt-fuzz-traps-old1/secret.txt">"#) == #"SYSTEM "file:///var/tmp/corrupt-fuzz-traps-new42/secret.txt">"#)
        #expect(rebound(#"SYSTEM "/tmp/x/corrupt-fuzz-traps-old1/secret.txt""#) == #"SYSTEM "/var/tmp/corrupt-fuzz-traps-new42/secret.txt""#)
        #expect(
            rebound(#"SYSTEM "http://127.0.0.1:40303/corrupt-fuzz-traps-old1/external.dtd""#)
                == #"SYSTEM "http://127.0.0.1:5555/corrupt-fuzz-traps-new42/external.dtd""#)
        #expect(rebound(#"<!DOCTYPEs SYSTEM "http://127.0.0.1:33849/">"#) == #"<!DOCTYPEs SYSTEM "http://127.0.0.1:5555/">"#)
        #expect(rebound("two: http://127.0.0.1:1/a and http://127.0.0.1:2/b") == "two: http://127.0.0.1:5555/a and http://127.0.0.1:5555/b")
        for untouched in ["", "<notes/>", "corrupt-fuzz-traps-old1 alone", "http://example.com:80/corrupt-fuzz-traps-x", "http://127.0.0.1"] {
            #expect(rebound(untouched) == untouched.replacingOccurrences(of: "http://127.0.0.1:", with: "http://127.0.0.1:5555"))
        }
        #expect(OutsideTrapsHost.mentionsTraps(Array("file:///tmp/corrupt-fuzz-traps-a/secret.txt".utf8)))
        #expect(OutsideTrapsHost.mentionsTraps(Array("http://127.0.0.1:9/".utf8)))
        #expect(!OutsideTrapsHost.mentionsTraps(Array("<notes/>".utf8)))
    }

    @Test("a hang whose confirmation was starved of CPU is no finding, with a label (document checks, crash points) as without: undecided")
    func starvedIsNoFinding() {
        let judge = Judge()
        let input = TestInput(bytes: [1], seedName: "s")
        var hung = Execution(outcome: .hung(milliseconds: 2200))
        #expect(judge.judge(input, execution: hung, label: .valid)?.kind == .hang)
        #expect(judge.judge(input, execution: hung, label: nil)?.kind == .hang)
        hung.starved = true
        #expect(judge.judge(input, execution: hung, label: .valid) == nil)
        #expect(judge.judge(input, execution: hung, label: nil) == nil)
        let judged = judge.judge(input, execution: hung)
        #expect(judged.finding == nil && judged.verdict == .undecided(Judge.starvedReason))
    }

    @Test("a judge without traps leaves inputs as they are; with a validator it labels, with a label it does not ask")
    func labels() {
        let validator = ClosureValidator(name: "never") { _ in .invalid(Violation(.corrupt, "bad")) }
        let judge = Judge(validator: validator)
        #expect(judge.traps == nil)
        #expect(judge.rebind(Array("http://127.0.0.1:9/".utf8)) == Array("http://127.0.0.1:9/".utf8))
        let input = TestInput(bytes: [1, 2, 3], seedName: "s")
        let accepted = Execution(outcome: .accepted(digest: ""))
        #expect(judge.judge(input, execution: accepted).finding?.kind == .silentAcceptance)
        #expect(judge.judge(input, execution: accepted, label: .valid) == nil)
        #expect(judge.judge(input, execution: accepted, label: nil) == nil)
        #expect(judge.judge(input, execution: Execution(outcome: .rejected(reason: nil, exitCode: 1, message: nil)), label: .valid)?.kind == .falseRejection)
    }
}
