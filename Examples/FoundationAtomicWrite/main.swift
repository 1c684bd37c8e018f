// foundation-atomic-write DIR: adds a note to DIR/notes.json and saves it with Foundation's
// `Data.write(to:options: .atomic)`, as an app does: the program `corrupt-fuzz crashpoints` runs
// to see what Foundation's atomic write does on this platform (a temporary file and a rename;
// does it fsync the file, and the folder?).
import Foundation

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("reason: usage\nusage: foundation-atomic-write DIR\n".utf8))
    exit(2)
}
let url = URL(fileURLWithPath: CommandLine.arguments[1]).appendingPathComponent("notes.json")
do {
    var notes = try JSONDecoder().decode([String].self, from: Data(contentsOf: url))
    notes.append("note \(notes.count + 1)")
    try JSONEncoder().encode(notes).write(to: url, options: .atomic)
} catch {
    FileHandle.standardError.write(Data("reason: corrupt\n\(error)\n".utf8))
    exit(1)
}
