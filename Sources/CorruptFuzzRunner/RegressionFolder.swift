import CorruptFuzzCore
import Foundation

/// A regression store on disk: one folder per target under a root, holding inputs that once
/// showed a finding (`Corpus/regressions/habit-loader-naive/crash-1f2e.habits`). A campaign
/// runs them first; CorruptFuzzTesting keeps its checks' inputs in the same layout.
public struct RegressionFolder: Sendable {
    /// The root, e.g. `Corpus/regressions`.
    public var root: String

    public init(root: String) { self.root = root }

    /// The folder of one target: its name with anything but letters, digits, dots and dashes
    /// made a dash.
    public func folder(for target: String) -> String {
        let slug = String(target.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "-" })
        return (root as NSString).appendingPathComponent(slug)
    }

    /// The stored inputs of `target`, in name order, each with the single mutation
    /// `regression` and its path as seed name; none when the folder does not exist.
    /// - Throws: ``CorruptFuzzError`` (`unusableCorpus`) when a file cannot be read.
    public func inputs(for target: String) throws(CorruptFuzzError) -> [TestInput] {
        let folder = folder(for: target)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var inputs: [TestInput] = []
        for name in names.sorted() where !name.hasPrefix(".") {
            let path = (folder as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CorruptFuzzError(.unusableCorpus, "cannot read \(path) in the regression store")
            }
            inputs.append(TestInput(bytes: [UInt8](data), mutations: ["regression"], seedName: path))
        }
        return inputs
    }

    /// Saves `bytes` for `target` under a name made of the kind and a hash of the content, as
    /// CorruptFuzzTesting names them; returns the path (an existing file is kept).
    /// - Throws: ``CorruptFuzzError`` (`reportWriteFailed`) when the file cannot be written.
    @discardableResult
    public func save(_ bytes: [UInt8], kind: FindingKind, fileExtension: String, for target: String) throws(CorruptFuzzError) -> String {
        try save(bytes, prefix: kind.rawValue, fileExtension: fileExtension, for: target)
    }

    /// Saves `bytes` for `target` as `PREFIX-HASH.EXT`; returns the path. A file of the folder
    /// that already holds the same bytes (under any prefix: a re-run may judge the same input
    /// as another kind) is kept, and its path returned: the store never holds an input twice.
    /// - Throws: ``CorruptFuzzError`` (`reportWriteFailed`) when the file cannot be written.
    @discardableResult
    public func save(_ bytes: [UInt8], prefix: String, fileExtension: String, for target: String) throws(CorruptFuzzError) -> String {
        try Self.save(bytes, prefix: prefix, fileExtension: fileExtension, in: folder(for: target))
    }

    /// Saves `bytes` into `folder` as `PREFIX-HASH.EXT` unless a file there holds them already
    /// (see ``save(_:prefix:fileExtension:for:)``); the test module's store saves through it too.
    /// - Throws: ``CorruptFuzzError`` (`reportWriteFailed`) when the file cannot be written.
    @discardableResult
    public static func save(_ bytes: [UInt8], prefix: String, fileExtension: String, in folder: String) throws(CorruptFuzzError) -> String {
        var hash = FNV1a()
        hash.add(bytes)
        let stem = "-\(String(hash.value, radix: 16))"
        let name = prefix + stem + (fileExtension.isEmpty ? "" : ".\(fileExtension)")
        let path = (folder as NSString).appendingPathComponent(name)
        let existing = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        for other in existing where other.contains(stem) {
            let otherPath = (folder as NSString).appendingPathComponent(other)
            if let held = FileManager.default.contents(atPath: otherPath), held.elementsEqual(bytes) { return otherPath }
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw CorruptFuzzError(.reportWriteFailed, "cannot write \(path) in the regression store: \(error.localizedDescription)")
        }
        try AtomicFile.write(bytes, to: path)
        return path
    }
}
