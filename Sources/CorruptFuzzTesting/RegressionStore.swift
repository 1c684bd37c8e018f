import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// Keeps every failing input of a check and gives them back first on the next run, as
/// Hypothesis's example database does.
struct RegressionStore {
    let directory: URL

    /// `Corpus/regressions/<id>` in the package holding `filePath`, or under
    /// `CORRUPT_FUZZ_REGRESSIONS` when it is set.
    static func defaultDirectory(for id: String, filePath: String) -> URL {
        let slug = String(id.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "-" })
        if let root = ProcessInfo.processInfo.environment["CORRUPT_FUZZ_REGRESSIONS"] {
            return URL(fileURLWithPath: root).appendingPathComponent(slug)
        }
        var folder = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
                return folder.appendingPathComponent("Corpus/regressions").appendingPathComponent(slug)
            }
            folder.deleteLastPathComponent()
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-regressions").appendingPathComponent(slug)
    }

    /// This test binary.
    static var executablePath: String {
        ExecutablePath.current
    }

    /// The stored inputs, in name order.
    func load() -> [TestInput] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().filter { !$0.hasPrefix(".") }.compactMap { name in
            FileManager.default.contents(atPath: directory.appendingPathComponent(name).path).map {
                TestInput(bytes: [UInt8]($0), mutations: ["regression"], seedName: name)
            }
        }
    }

    /// Saves a failing input under a name from its kind and content; returns its path.
    func save(_ bytes: [UInt8], kind: FindingKind, fileExtension: String) -> String? {
        try? RegressionFolder.save(bytes, prefix: kind.rawValue, fileExtension: fileExtension, in: directory.path)
    }
}
