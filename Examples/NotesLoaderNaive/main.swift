// notes-loader-naive PATH: the naive notes loader (NotesLoaders.NaiveNotesLoader) as a
// target-protocol executable: exit 0 with a line per note, or exit 1 with `reason: WORD`.
// Started by `corrupt-fuzz run --worker`, it serves input after input (CorruptFuzzWorker).
import CorruptFuzzWorker
import Foundation
import NotesLoaders

guard CommandLine.arguments.count == 2 || CorruptFuzzWorker.isWorker else {
    FileHandle.standardError.write(Data("reason: usage\nusage: notes-loader-naive PATH\n".utf8))
    exit(2)
}
CorruptFuzzWorker.serveFiles { path throws(NotesLoadError) in
    let path = path ?? "/dev/stdin"
    guard let data = FileManager.default.contents(atPath: path) else { throw NotesLoadError("corrupt", "cannot read \(path)") }
    return try NaiveNotesLoader.load([UInt8](data))
} digest: { notes in
    notes.map(\.digest).joined(separator: "\n")
}
