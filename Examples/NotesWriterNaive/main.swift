// notes-writer-naive IN OUT: the notes app's hurried save path (NotesLoaders.NaiveNotesWriter):
// loads IN with the hardened loader and saves it to OUT, escaping `&` in a note's text and
// nothing else. The writer of `corrupt-fuzz roundtrip`'s demo, which finds its bug.
import Foundation
import NotesLoaders

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("reason: usage\nusage: notes-writer-naive IN OUT\n".utf8))
    exit(2)
}
do {
    let notes = try HardenedNotesLoader.load(path: arguments[1])
    try Data(NaiveNotesWriter.xml(notes)).write(to: URL(fileURLWithPath: arguments[2]), options: .atomic)
} catch let error as NotesLoadError {
    FileHandle.standardError.write(Data("reason: \(error.reason)\n\(error.message)\n".utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("reason: unwritable\ncannot write \(arguments[2]): \(error.localizedDescription)\n".utf8))
    exit(1)
}
