import ContactsApp
import CorruptFuzzTesting
import Foundation
import FixtureTarget
import Testing

/// The contacts format for corrupt-fuzz: the file extension and a strict reference validator,
/// written apart from the app's loader (inputs are mutated byte-wise: the format has no
/// mutator).
struct ContactsFormat: FuzzFormat {
    let fileExtension = "cntc"

    var validator: any Validator {
        ClosureValidator(
            name: "contacts",
            contents: { bytes in
                guard let violation = Self.check(bytes) else { return .valid }
                return .invalid(violation)
            })
    }

    /// What is wrong with a non-empty file, in the order the app must see it (the version
    /// before the checksum: a newer app's file is `unsupported-version`).
    static func check(_ bytes: [UInt8]) -> Violation? {
        guard bytes.starts(with: Array("CNTC".utf8)) else { return Violation(.corrupt, "no magic") }
        guard bytes.count > 4 else { return Violation(.corrupt, "no version") }
        guard bytes[4] <= 1 else { return Violation(.unsupportedVersion, "version \(bytes[4])", at: "version") }
        guard bytes[4] == 1, bytes.count >= 11 else { return Violation(.corrupt, "bad header") }
        var hash: UInt32 = 2_166_136_261
        for byte in bytes.dropLast(4) { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let stored = bytes.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard stored == hash else { return Violation(.corrupt, "checksum", at: "checksum") }
        var rest = bytes.dropFirst(7).dropLast(4)
        let count = Int(bytes[5]) + 256 * Int(bytes[6])
        guard count <= 10_000 else { return Violation(.corrupt, "count \(count)", at: "count") }
        for index in 0..<count {
            guard let length = rest.first, length > 0, rest.count > Int(length) else { return Violation(.corrupt, "name", at: "names[\(index)]") }
            guard String(validating: rest.dropFirst().prefix(Int(length)), as: UTF8.self) != nil else {
                return Violation(.corrupt, "not UTF-8", at: "names[\(index)]")
            }
            rest = rest.dropFirst(1 + Int(length))
        }
        return rest.isEmpty ? nil : Violation(.corrupt, "\(rest.count) bytes after the names")
    }
}

@Suite("The contacts loader survives corrupt files")
struct ContactsLoaderTests {
    @Test("a campaign in worker processes (the default isolation) finds nothing in the loader")
    func survivesInWorkers() throws {
        let report = assertLoaderSurvivesCorruption("contacts", format: ContactsFormat(), seeds: try ContactFixtures.files(), options: .init(runs: 300)) {
            (bytes: [UInt8]) in
            try ContactsFile.decode(bytes)
        } validate: { list in
            list.validateUserData()
        }
        print("contacts (workers): \(report.executions) executions, \(report.findings.count) findings")
        #expect(report.executions >= 300)
    }

    @Test("a campaign in the test process finds nothing in the loader")
    func survivesInProcess() throws {
        let report = assertLoaderSurvivesCorruption(
            "contacts-in-process", format: ContactsFormat(), seeds: try ContactFixtures.files(), options: .init(runs: 3000, isolation: .inProcess)
        ) { (bytes: [UInt8]) in
            try ContactsFile.decode(bytes)
        } validate: { list in
            list.validateUserData()
        }
        print("contacts (in process): \(report.executions) executions, \(report.findings.count) findings")
        #expect(report.executions >= 3000)
    }

    @Test("the same campaign finds the silent acceptance of a loader that skips the checksum")
    func findsANaiveLoadersBug() throws {
        // A loader that skips the checksum accepts files whose names were changed.
        let naive: @Sendable ([UInt8]) throws -> ContactList = { bytes in
            var fixed = Array(bytes.dropLast(4))
            var hash: UInt32 = 2_166_136_261
            for byte in fixed { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            fixed += (0..<4).map { UInt8(truncatingIfNeeded: hash >> (8 * $0)) }
            return try ContactsFile.decode(bytes.count >= 11 ? fixed : bytes)
        }
        let regressions = FileManager.default.temporaryDirectory.appendingPathComponent("consumer-app-naive-\(getpid())")
        defer { try? FileManager.default.removeItem(at: regressions) }
        let report = verifyLoaderSurvivesCorruption(
            "contacts-naive", format: ContactsFormat(), seeds: try ContactFixtures.files(),
            options: .init(runs: 2000, isolation: .inProcess, regressions: regressions), load: naive)
        print("contacts-naive: \(report.executions) executions, kinds \(report.kinds.map(\.rawValue).sorted())")
        #expect(report.kinds.contains(.silentAcceptance), "\(report.findings)")
    }
}
