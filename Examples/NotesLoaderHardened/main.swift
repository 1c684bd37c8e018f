// notes-loader-hardened PATH: the hardened notes loader (NotesLoaders.HardenedNotesLoader) as a
// target-protocol executable: exit 0 with a line per note, or exit 1 with `reason: WORD`.
import Foundation
import NotesLoaders

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("reason: usage\nusage: notes-loader-hardened PATH\n".utf8))
    exit(2)
}
let path = CommandLine.arguments[1]
do throws(NotesLoadError) {
    for note in try HardenedNotesLoader.load(path: path) { print(note.digest) }
} catch {
    FileHandle.standardError.write(Data("reason: \(error.reason)\n\(error.message)\n".utf8))
    exit(1)
}
