// notes-writer-hardened IN OUT: the notes app's careful save path (NotesLoaders.NotesWriter):
// loads IN with the hardened loader and saves it to OUT, every character of each note kept.
import Foundation
import NotesLoaders

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("reason: usage\nusage: notes-writer-hardened IN OUT\n".utf8))
    exit(2)
}
do {
    let notes = try HardenedNotesLoader.load(path: arguments[1])
    try Data(NotesWriter.xml(notes)).write(to: URL(fileURLWithPath: arguments[2]), options: .atomic)
} catch let error as NotesLoadError {
    FileHandle.standardError.write(Data("reason: \(error.reason)\n\(error.message)\n".utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("reason: unwritable\ncannot write \(arguments[2]): \(error.localizedDescription)\n".utf8))
    exit(1)
}
