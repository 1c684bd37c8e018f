import CorruptFuzzExamples
import CorruptFuzzTesting
import Foundation
import FriendListLoaders
import NotesLoaders
import Testing

/// Version skew, writer round trips and save-and-reload after stateful changes, in process,
/// on the bundled examples: the friend list's versions 1 and 2, the notes app's writers.
@Suite("Version skew and writer round trips in tests")
struct VersionCheckTests {
    static let version2 = AppVersion(
        "v2", load: { try FriendListV2Store.load($0) }, digest: { $0.digest }, save: { try FriendListV2Store.save($0) })
    static var olderFiles: [Data] {
        get throws {
            let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Corpus/friend-lists")
            return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
                try Data(contentsOf: folder.appendingPathComponent($0))
            }
        }
    }

    @Test("the naive version 1 reads version 2's files and drops the nicknames: lost-on-downgrade")
    func naiveDowngrade() throws {
        let naive = AppVersion(
            "v1-naive", load: { try NaiveFriendListLoader.load($0) },
            digest: { list in
                (["version \(list.version)"] + list.friends.map { "\($0.name)\t\($0.birthday.timeIntervalSinceReferenceDate)" }).joined(separator: "\n")
            })
        let report = verifyVersionSkew(
            "skew-naive", older: naive, newer: Self.version2, olderFiles: try Self.olderFiles, format: FriendListFormat(version: 2),
            generate: 10, regressions: scratchRegressions("skew-naive"))
        #expect(report.kinds == [.lostOnDowngrade], "\(report.findings)")
        #expect(report.findings.first?.signature == "fields of a line lost")
        #expect(report.findings.first?.detail.contains("v1-naive accepts a file of v2") == true)
        #expect(report.findings.first?.reproducer.map { FileManager.default.fileExists(atPath: $0) } == true)
    }

    @Test("the hardened version 1 refuses version 2's files as unsupported-version, and version 2 migrates every file of version 1")
    func hardened() throws {
        let hardened = AppVersion(
            "v1", load: { try HardenedFriendListLoader.load($0) },
            digest: { list in (["version \(list.version)"] + list.friends.map(\.digest)).joined(separator: "\n") })
        let report = verifyVersionSkew(
            "skew-hardened", older: hardened, newer: Self.version2, olderFiles: try Self.olderFiles, format: FriendListFormat(version: 2),
            generate: 10, regressions: scratchRegressions("skew-hardened"))
        #expect(report.findings.isEmpty, "\(report.findings)")
        // Each older file: loaded, saved and loaded twice; each newer file: loaded by both.
        #expect(report.executions >= 10 * 2 + 5)
    }

    @Test("an older version that calls a newer file corrupt gives a wrong reason")
    func wrongReason() throws {
        let hasty = AppVersion("v1-hasty", load: { try HardenedFriendListLoaderVersionCheckOnly.load($0) }, digest: { $0 })
        let report = verifyVersionSkew(
            "skew-hasty", older: hasty, newer: Self.version2, olderFiles: [], format: FriendListFormat(version: 2), generate: 3,
            regressions: scratchRegressions("skew-hasty"))
        #expect(report.findings.map(\.signature) == ["expected unsupported-version, got corrupt"], "\(report.findings)")
    }

    @Test("round trip: the naive notes writer saves invalid documents; the careful one keeps every note")
    func roundTrip() {
        let load: @Sendable (Data) throws -> [Note] = { try HardenedNotesLoader.load([UInt8]($0)) }
        let digest: @Sendable ([Note]) -> String = { $0.map(\.digest).joined(separator: "\n") }
        let naive = verifyRoundTrip(
            "roundtrip-naive", format: NotesFormat(), generate: 40, regressions: scratchRegressions("roundtrip-naive"), load: load,
            digest: digest, save: { Data(NaiveNotesWriter.xml($0)) })
        #expect(naive.kinds == [.writerCorruption], "\(naive.findings)")
        #expect(naive.findings.allSatisfy { $0.signature.hasPrefix("saved an invalid document") }, "\(naive.findings.map(\.signature))")
        #expect(naive.findings.first?.detail.contains("saved-1.xml: ") == true)
        let careful = verifyRoundTrip(
            "roundtrip-careful", format: NotesFormat(), generate: 40, regressions: scratchRegressions("roundtrip-careful"), load: load,
            digest: digest, save: { Data(NotesWriter.xml($0)) })
        #expect(careful.findings.isEmpty, "\(careful.findings)")
        #expect(careful.executions >= 40 * 3)
    }

    static let addNote = DocumentAction<NotesDocument>("addNote") { document, rng in
        let text = ["Milk & eggs", "Call <Bob>", "plain"][rng.below(3)]
        document.addNote(text, created: "2026-11-23T10:00:00Z")
        return "addNote(\(text))"
    }
    static let addNoteNaively = DocumentAction<NotesDocument>("addNoteNaively") { document, rng in
        document.addNoteNaively("plain", created: "2026-11-23T10:00:00Z")
        return "addNoteNaively"
    }
    static let deleteNote = DocumentAction<NotesDocument>("deleteNote") { document, rng in
        guard !document.notes.isEmpty else { return nil }
        let index = rng.below(document.notes.count)
        document.deleteNote(at: index)
        return "deleteNote(at: \(index))"
    }

    static func saveAndReload(_ save: @escaping @Sendable ([Note]) -> [UInt8]) -> SaveAndReload<NotesDocument> {
        SaveAndReload(
            format: NotesFormat(), save: { Data(save($0.notes)) }, load: { NotesDocument(notes: try HardenedNotesLoader.load([UInt8]($0))) },
            digest: { $0.notes.map(\.digest).joined(separator: "\n") })
    }

    @Test("stateful: saving after each action finds the naive writer's unescaped markup and the naive numbering's repeated id")
    func statefulSave() throws {
        let naiveWriter = verifyStatefulChanges(
            initial: { NotesDocument() }, actions: [Self.addNote, Self.deleteNote], seed: 1, saveAndReload: Self.saveAndReload(NaiveNotesWriter.xml),
            validate: { _ in nil })
        let markup = try #require(naiveWriter)
        #expect(markup.message.hasPrefix("writer-corruption: save 1 wrote an invalid document"), "\(markup)")
        #expect(markup.steps.last?.contains("Call <Bob>") == true, "\(markup)")

        let naiveNumbering = verifyStatefulChanges(
            initial: { NotesDocument() }, actions: [Self.addNoteNaively, Self.deleteNote], seed: 1, saveAndReload: Self.saveAndReload(NotesWriter.xml),
            validate: { _ in nil })
        let numbering = try #require(naiveNumbering)
        #expect(numbering.message.contains("the id is used twice"), "\(numbering)")
        #expect(numbering.steps.count == 4, "add, add, delete the first, add: \(numbering)")

        let careful = verifyStatefulChanges(
            initial: { NotesDocument() }, actions: [Self.addNote, Self.deleteNote], seed: 1, saveAndReload: Self.saveAndReload(NotesWriter.xml),
            validate: { _ in nil })
        #expect(careful == nil, "\(careful.map(String.init(describing:)) ?? "")")
    }
}

/// A version 1 that checks the version the hasty way: anything but 1 is corrupt.
enum HardenedFriendListLoaderVersionCheckOnly {
    static func load(_ data: Data) throws(FriendListLoadError) -> String {
        do {
            return try HardenedFriendListLoader.load(data).friends.map(\.digest).joined(separator: "\n")
        } catch  where error.reason == "unsupported-version" {
            throw FriendListLoadError("corrupt", "unknown version")
        }
    }
}
