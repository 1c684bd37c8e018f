import CorruptFuzzCore
import Foundation

/// Reads seed files from a corpus folder.
public enum CorpusLoader {
    /// The seeds in `directory` and its subfolders, in name order, plus a warning for each file
    /// that could not be read. Hidden files and README files are skipped.
    /// - Throws: ``CorruptFuzzError`` (`unusableCorpus`) when the folder does not exist, is not a
    ///   folder, or holds no readable file.
    public static func load(_ directory: String, maxLength: Int = 1 << 20) throws(CorruptFuzzError) -> (seeds: [Seed], warnings: [String]) {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw CorruptFuzzError(.unusableCorpus, "corpus folder not found: \(directory)")
        }
        guard isDirectory.boolValue else {
            throw CorruptFuzzError(.unusableCorpus, "corpus is not a folder: \(directory)")
        }
        guard let enumerator = fm.enumerator(atPath: directory) else {
            throw CorruptFuzzError(.unusableCorpus, "cannot list corpus folder: \(directory)")
        }
        var paths: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            if name.hasPrefix(".") || name.uppercased().hasPrefix("README") { continue }
            let full = (directory as NSString).appendingPathComponent(relative)
            var dir: ObjCBool = false
            if fm.fileExists(atPath: full, isDirectory: &dir), dir.boolValue { continue }
            paths.append(relative)
        }
        var seeds: [Seed] = []
        var warnings: [String] = []
        for relative in paths.sorted() {
            let full = (directory as NSString).appendingPathComponent(relative)
            // Only regular files (symlinks followed): a FIFO would block, a device never end.
            var info = stat()
            guard stat(full, &info) == 0 else {
                warnings.append("skipping unreadable corpus file \(full): \(String(cString: strerror(errno)))")
                continue
            }
            guard info.st_mode & S_IFMT == S_IFREG else {
                warnings.append("skipping corpus entry \(full): not a regular file")
                continue
            }
            guard let data = fm.contents(atPath: full) else {
                warnings.append("skipping unreadable corpus file \(full)")
                continue
            }
            if data.count > maxLength {
                warnings.append("skipping corpus file \(full): \(data.count) bytes is over the \(maxLength)-byte input limit")
                continue
            }
            seeds.append(Seed(name: relative, bytes: [UInt8](data)))
        }
        guard !seeds.isEmpty else {
            let why = paths.isEmpty ? "holds no files" : "holds no readable files"
            throw CorruptFuzzError(.unusableCorpus, "corpus folder \(directory) \(why)" + (warnings.isEmpty ? "" : ": " + warnings.joined(separator: "; ")))
        }
        return (seeds, warnings)
    }
}
