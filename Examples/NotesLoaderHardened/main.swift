// notes-loader-hardened PATH: the hardened notes loader (NotesLoaders.HardenedNotesLoader) as a
// target-protocol executable: exit 0 with a line per note, or exit 1 with `reason: WORD`.
// Started by `corrupt-fuzz run --worker`, it serves input after input (CorruptFuzzWorker).
import CorruptFuzzWorker
import Foundation
import NotesLoaders

guard CommandLine.arguments.count == 2 || CorruptFuzzWorker.isWorker else {
    FileHandle.standardError.write(Data("reason: usage\nusage: notes-loader-hardened PATH\n".utf8))
    exit(2)
}
CorruptFuzzWorker.serveFiles { path in
    try HardenedNotesLoader.load(path: path ?? "/dev/stdin")
} digest: { notes in
    notes.map(\.digest).joined(separator: "\n")
}
