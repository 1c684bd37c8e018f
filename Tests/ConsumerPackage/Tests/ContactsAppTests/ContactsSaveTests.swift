import ContactsApp
import CorruptFuzzTesting
import Foundation
import FixtureTarget
import Testing

@Suite("Saving contacts survives crashes")
struct ContactsSaveTests {
    @Test("adding a contact survives a kill or a power cut at every file operation", .enabled(if: isLinux))
    func saveSurvivesCrashes() throws {
        let report = assertSaveSurvivesCrashes("contacts-add", data: try ContactFixtures.dataFolder(), maxStates: 100) { folder in
            try ContactsStore.add("Linus Torvalds", in: folder)
        } check: { folder in
            try ContactsStore.load(in: folder).names
        }
        print("crash points of contacts-add: \(report.executions) executions, \(report.findings.count) findings")
        #expect(report.executions > 5)
    }

    @Test("the same check catches a save that rewrites the file in place", .enabled(if: isLinux))
    func inPlaceSaveIsCaught() throws {
        let (report, warnings) = verifySaveSurvivesCrashes("contacts-add-in-place", data: try ContactFixtures.dataFolder(), maxStates: 50) { folder in
            var list = try ContactsStore.load(in: folder)
            if !list.names.contains("Linus Torvalds") { list.names.append("Linus Torvalds") }
            // No temporary file, no fsync: a crash after the truncation leaves an empty file.
            try Data(try ContactsFile.encode(list)).write(to: folder.appendingPathComponent(ContactsStore.fileName))
        } check: { folder in
            try ContactsStore.load(in: folder).names
        }
        print("crash points of contacts-add-in-place: \(report.executions) executions, kinds \(report.kinds.map(\.rawValue).sorted())")
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(report.kinds.contains(.tornState), "\(report.kinds)")
        // The findings' crash states are kept in a temporary folder: not needed here.
        for folder in Set(report.findings.compactMap { $0.reproducer.map { URL(fileURLWithPath: $0).deletingLastPathComponent() } }) {
            try? FileManager.default.removeItem(at: folder)
        }
    }
}

#if os(Linux)
    let isLinux = true
#else
    let isLinux = false
#endif
