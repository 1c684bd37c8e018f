// note-store-naive PATH: the naive note store (SQLiteLoaders.NaiveNoteStore) as a
// target-protocol executable: exit 0 with a line per folder and note, or exit 1 with
// `reason: WORD`. PATH is a database file, or a bundle of a database and its -wal file
// (CorruptFuzzSQLite.SQLiteFiles), unpacked into a temporary folder the way the app's
// container would hold the pair. Started by `corrupt-fuzz run --worker`, it serves input
// after input (CorruptFuzzWorker).
import CorruptFuzzSQLite
import CorruptFuzzWorker
import Foundation
import SQLiteLoaders

guard CommandLine.arguments.count == 2 || CorruptFuzzWorker.isWorker else {
    FileHandle.standardError.write(Data("reason: usage\nusage: note-store-naive PATH\n".utf8))
    exit(2)
}
CorruptFuzzWorker.serve { data in
    try SQLiteFiles.withTemporaryDatabase(data) { path in try NaiveNoteStore.load(path: path) }
} digest: { library in
    library.digest
}
