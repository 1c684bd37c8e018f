import CorruptFuzzCore
import Foundation

/// Corpus folders into one, each distinct file once (by content), under its first name.
public enum CorpusMerge {
    /// Copies every distinct file (by content) of `folders` into `output`, under its first
    /// name (`-2`, `-3`… when names clash); files already in `output` count as seen.
    /// - Returns: How many files were copied, and how many were left out as duplicates.
    public static func merge(_ folders: [String], into output: String) throws(CorruptFuzzError) -> (kept: Int, duplicates: Int) {
        let fm = FileManager.default
        do {
            try fm.createDirectory(atPath: output, withIntermediateDirectories: true)
        } catch {
            throw CorruptFuzzError(.invalidArgument, "cannot create \(output): \(error.localizedDescription)")
        }
        var seen: Set<Data> = []
        var names: Set<String> = Set((try? fm.contentsOfDirectory(atPath: output)) ?? [])
        for name in names {
            if let data = fm.contents(atPath: (output as NSString).appendingPathComponent(name)) { seen.insert(data) }
        }
        var kept = 0, duplicates = 0
        for folder in folders {
            guard let entries = try? fm.contentsOfDirectory(atPath: folder) else {
                throw CorruptFuzzError(.invalidArgument, "cannot read the corpus folder \(folder)")
            }
            for entry in entries.sorted() where !entry.hasPrefix(".") {
                let path = (folder as NSString).appendingPathComponent(entry)
                var isDirectory: ObjCBool = false
                guard fm.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                    let data = fm.contents(atPath: path)
                else { continue }
                guard seen.insert(data).inserted else {
                    duplicates += 1
                    continue
                }
                var name = entry
                var suffix = 2
                while names.contains(name) {
                    let base = (entry as NSString).deletingPathExtension, ext = (entry as NSString).pathExtension
                    name = "\(base)-\(suffix)" + (ext.isEmpty ? "" : ".\(ext)")
                    suffix += 1
                }
                names.insert(name)
                do {
                    try data.write(to: URL(fileURLWithPath: output).appendingPathComponent(name))
                } catch {
                    throw CorruptFuzzError(.invalidArgument, "cannot write into \(output): \(error.localizedDescription)")
                }
                kept += 1
            }
        }
        return (kept, duplicates)
    }
}
