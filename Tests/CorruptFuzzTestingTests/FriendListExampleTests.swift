import CorruptFuzzExamples
import CorruptFuzzTesting
import Foundation
import FriendListLoaders
import Testing

/// The keyed-archive example, as a user would test an NSKeyedArchiver document: the format
/// generates archives with the real NSKeyedArchiver and corrupts them.
@Suite("CorruptFuzzTesting: the friend-list (keyed archive) loaders")
struct FriendListLoaderTests {
    @Test("the hardened friend-list loader survives corruption")
    func hardened() {
        let report = assertLoaderSurvivesCorruption(
            "hardened-friends", format: FriendListFormat(),
            options: .init(runs: 500, isolation: .inProcess, regressions: scratchRegressions("hardened-friends"))
        ) { data in
            try HardenedFriendListLoader.load(data)
        } validate: { list in
            HardenedFriendListLoader.validateUserData(list)
        }
        #expect(report.executions >= 500)
    }

    /// (Its wrong reasons are for a missing file, which an in-process loader of `Data` never
    /// sees; the command-line demo finds them.)
    @Test("the naive friend-list loader's crashes and silent acceptance of a missing version are found")
    func naive() {
        let report = verifyLoaderSurvivesCorruption(
            "naive-friends", format: FriendListFormat(),
            options: .init(runs: 60, regressions: scratchRegressions("naive-friends"), jobs: 2)
        ) { data in
            try NaiveFriendListLoader.load(data)
        }
        #expect(report.kinds.isSuperset(of: [.crash, .silentAcceptance]), "\(report.kinds)")
        #expect(report.findings.contains { $0.kind == .silentAcceptance && $0.signature.contains("version: missing") }, "\(report.findings.map(\.signature))")
        #expect(report.findings.contains { $0.kind == .crash && $0.signature.contains("raiseException") }, "\(report.findings.map(\.signature))")
    }
}
