// notes-migrate-hardened DIR: the notes app's migration of DIR from notes-v1.txt to notes.tsv
// (NotesMigration.migrate), the program `corrupt-fuzz crashpoints` cuts short at every write.
// Exit 0 when the migration is done, 1 with `reason: WORD` when it cannot be.
import Foundation
import NotesMigration

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("reason: usage\nusage: notes-migrate-hardened DIR\n".utf8))
    exit(2)
}
do {
    try NotesMigration.migrate(CommandLine.arguments[1])
} catch {
    FileHandle.standardError.write(Data("reason: \(error.reason)\n\(error.message)\n".utf8))
    exit(1)
}
