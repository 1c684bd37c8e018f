// notes-migrate-check DIR: what the notes app shows after a start (NotesMigration.load): exit 0
// with a line per note (the digest `corrupt-fuzz crashpoints --check` compares), or exit 1 with
// `reason: corrupt` when the store is malformed.
import Foundation
import NotesMigration

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("reason: usage\nusage: notes-migrate-check DIR\n".utf8))
    exit(2)
}
do {
    let lines = try NotesMigration.load(CommandLine.arguments[1])
    print(lines.joined(separator: "\n"))
} catch {
    FileHandle.standardError.write(Data("reason: \(error.reason)\n\(error.message)\n".utf8))
    exit(1)
}
