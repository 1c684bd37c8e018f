// notes-save-hardened DIR: the notes app saving a note into DIR/notes.tsv (NotesMigration.save: a temporary file, every error checked, renamed into place),
// the program `corrupt-fuzz crashpoints --faults all` makes fail at every operation.
// Exit 0 when the note is saved, 1 with `reason: WORD` when it is not.
import Foundation
import NotesMigration

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("reason: usage\nusage: notes-save-hardened DIR\n".utf8))
    exit(2)
}
do {
    try NotesMigration.save(CommandLine.arguments[1])
} catch {
    FileHandle.standardError.write(Data("reason: \(error.reason)\n\(error.message)\n".utf8))
    exit(1)
}
