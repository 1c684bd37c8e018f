import CCorruptFuzzWorker
import CorruptFuzzCore
import CorruptFuzzWorker
import Foundation
import Testing

@testable import CorruptFuzzRunner

@Suite("The worker protocol, one definition for both sides")
struct WorkerProtocolTests {
    @Test("the C header and the Swift side agree on the version, the variable, the descriptor and the line letters")
    func headerAgrees() {
        #expect(Int(CF_WORKER_PROTOCOL_VERSION) == WorkerProtocol.version)
        #expect(CF_WORKER_FD_VARIABLE == WorkerProtocol.descriptorVariable)
        #expect(Int32(CF_WORKER_RESULT_FD) == WorkerProtocol.resultDescriptor)
        #expect(WorkerExecutor.protocolVariable.name == WorkerProtocol.descriptorVariable)
        let letters = [CF_WORKER_HELLO, CF_WORKER_ACCEPTED, CF_WORKER_ACCEPTED_INVALID, CF_WORKER_REJECTED].map { Character(UnicodeScalar(UInt8($0))) }
        #expect(letters == ["H", "A", "V", "R"])
        #expect(Character(UnicodeScalar(UInt8(CF_WORKER_CHILD_ENDED))) == "C")
        #expect(CF_WORKER_FORK_SERVER_VARIABLE == WorkerProtocol.forkServerVariable)
        #expect(CF_WORKER_RECOVER_VARIABLE == WorkerProtocol.recoverVariable)
        #expect(WorkerProtocol.retireLine == String(UnicodeScalar(UInt8(CF_WORKER_RETIRE))))
        #expect(WorkerProtocol.retiredStatus == CF_WORKER_RETIRED_STATUS)
        #expect(WorkerProtocol.hello == "\(letters[0]) \(CF_WORKER_PROTOCOL_VERSION)")
        #expect(CF_WORKER_BYTES_FEATURE == WorkerProtocol.bytesFeature)
        #expect(UInt8(CF_WORKER_SENT_BYTES) == WorkerProtocol.sentBytesPrefix)
        #expect(Int(CF_WORKER_MAX_SENT_BYTES) == WorkerProtocol.maxSentBytes)
    }

    @Test("a hello's words after its version; the line of an input sent whole")
    func bytesFeature() {
        #expect(WorkerProtocol.helloFeatures(WorkerProtocol.bytesHello) == ["bytes"])
        #expect(WorkerProtocol.helloVersion(WorkerProtocol.bytesHello) == 1)
        #expect(WorkerProtocol.helloFeatures("H 1").isEmpty)
        #expect(WorkerProtocol.helloFeatures("R 1 bytes").isEmpty)
        #expect(WorkerProtocol.sentSize("#0".utf8) == 0)
        #expect(WorkerProtocol.sentSize("#61440".utf8) == 61_440)
        #expect(WorkerProtocol.sentSize("#\(Int.max)".utf8) == Int.max)
        // Past Int.max by the last digit's addition, not only by a multiplication: nil, no trap.
        for line in ["#", "#-1", "# 1", "#1x", "/tmp/input-0", "#99999999999999999999999", "#9223372036854775808"] {
            #expect(WorkerProtocol.sentSize(line.utf8) == nil, "\(line)")
        }
    }

    @Test(
        "what a worker writes is what the executor reads",
        arguments: [
            CorruptFuzzWorker.Reply.accepted(digest: "3 habits"), .acceptedInvalid(message: "habits[0].name is empty"),
            .rejected(reason: "corrupt", message: "bad magic"), .rejected(reason: nil, message: "no reason given"),
            .rejected(reason: "unsupported-version", message: "version 9\nof the file"),
        ])
    func lines(reply: CorruptFuzzWorker.Reply) {
        let read = WorkerProtocol.reply(from: reply.line)
        switch (reply, read) {
        case (.rejected(let reason, let message), .rejected(let readReason, let readMessage)?):
            #expect(reason == readReason)
            #expect(message.replacingOccurrences(of: "\n", with: " ") == readMessage)
        case (.accepted, _), (.acceptedInvalid, _):
            #expect(read == reply)
        default:
            Issue.record("\(reply.line) read as \(String(describing: read))")
        }
    }

    @Test("a hello names its version; other lines are no hello")
    func hello() {
        #expect(WorkerProtocol.helloVersion("H 1") == 1)
        #expect(WorkerProtocol.helloVersion("H 2") == 2)
        #expect(WorkerProtocol.helloVersion("H") == 0)
        #expect(WorkerProtocol.helloVersion("A 1") == nil)
        #expect(WorkerProtocol.helloVersion("hello") == nil)
        #expect(WorkerProtocol.reply(from: "X what") == nil)
    }

    @Test("short and odd replies: no reason, no message, a reason alone, text that is not ASCII")
    func oddReplies() {
        #expect(WorkerProtocol.reply(from: "A") == .accepted(digest: ""))
        #expect(WorkerProtocol.reply(from: "R") == .rejected(reason: nil, message: ""))
        #expect(WorkerProtocol.reply(from: "R -") == .rejected(reason: nil, message: ""))
        #expect(WorkerProtocol.reply(from: "R - why") == .rejected(reason: nil, message: "why"))
        #expect(WorkerProtocol.reply(from: "R  why not") == .rejected(reason: nil, message: "why not"))
        #expect(WorkerProtocol.reply(from: "R empty") == .rejected(reason: "empty", message: ""))
        #expect(WorkerProtocol.reply(from: "V naïve – 名前") == .acceptedInvalid(message: "naïve – 名前"))
        #expect(WorkerProtocol.reply(from: [0x41, 0x20, 0xFF, 0x41]) == .accepted(digest: "\u{FFFD}A"))
        #expect(WorkerProtocol.reply(from: "") == nil)
    }

    @Test("a worker of another protocol version is refused with both versions named")
    func otherVersion() throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-worker-v2-\(UUID().uuidString).sh")
        try Data("#!/bin/sh\necho 'H 2' >&3\ncat >/dev/null\n".utf8).write(to: script)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        defer { try? FileManager.default.removeItem(at: script) }
        do {
            let executor = try WorkerExecutor(path: script.path, arguments: [], environment: [:], limits: .init(timeoutMilliseconds: 2000), slots: 1)
            _ = try executor.execute(TestInput(bytes: [1], seedName: "s"), slot: 0)
            Issue.record("a version-2 worker was used")
        } catch {
            #expect(error.message.contains("version 2 of the worker protocol"), "\(error)")
            #expect(error.message.contains("version \(WorkerProtocol.version)"), "\(error)")
        }
    }

    @Test(
        "a fork server's line for a child that died is read as its wait status and peak memory, a child's for a trap it lived through as that too, and no other line is"
    )
    func childEnded() {
        #expect(WorkerProtocol.childEnded(Array("C 4 10980".utf8))! == (4, 10980, false))
        #expect(WorkerProtocol.childEnded(Array("C 256 0".utf8))! == (256, 0, false))
        #expect(WorkerProtocol.childEnded(Array("C 4 21044 r".utf8))! == (4, 21044, true))
        // The line the C side writes for a recovered trap.
        var line = [CChar](repeating: 0, count: 64)
        let count = Int(cf_worker_recovered_line(&line, line.count, SIGILL))
        let written = line[0..<count].map { UInt8(bitPattern: $0) }
        #expect(written.last == 0x0A)
        let read = WorkerProtocol.childEnded(Array(written.dropLast()))
        #expect(read?.status == SIGILL && read?.recovered == true && (read?.peakKilobytes ?? 0) > 0, "\(String(decoding: written, as: UTF8.self))")
        for line in ["C", "C ", "C 4", "C x 1", "A C 4 1", "R corrupt C 4 1", "C 4 1 2", "C 4 1 r r", "C 4 1 R"] {
            #expect(WorkerProtocol.childEnded(Array(line.utf8)) == nil, "\(line)")
        }
    }
}
