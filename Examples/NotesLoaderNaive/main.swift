// notes-loader-naive PATH: the naive notes loader (NotesLoaders.NaiveNotesLoader) as a
// target-protocol executable: exit 0 with a line per note, or exit 1 with `reason: WORD`.
import Foundation
import NotesLoaders

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("reason: usage\nusage: notes-loader-naive PATH\n".utf8))
    exit(2)
}
let path = CommandLine.arguments[1]
do throws(NotesLoadError) {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw NotesLoadError("corrupt", "cannot read \(path)")
    }
    for note in try NaiveNotesLoader.load([UInt8](data)) { print(note.digest) }
} catch {
    FileHandle.standardError.write(Data("reason: \(error.reason)\n\(error.message)\n".utf8))
    exit(1)
}
