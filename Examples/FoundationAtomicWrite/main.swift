// foundation-atomic-write DIR: adds a note to DIR/notes.json and saves it with Foundation's
// `Data.write(to:options: .atomic)`, as an app does: the program `corrupt-fuzz crashpoints` runs
// to see what Foundation's atomic write does on this platform (a temporary file and a rename;
// does it fsync the file, and the folder?).
import Foundation

// With --replace, the new file is written beside it and moved into place with
// `FileManager.replaceItemAt(_:withItemAt:)` instead.
let arguments = Array(CommandLine.arguments.dropFirst())
let replace = arguments.first == "--replace"
guard arguments.count == (replace ? 2 : 1) else {
    FileHandle.standardError.write(Data("reason: usage\nusage: foundation-atomic-write [--replace] DIR\n".utf8))
    exit(2)
}
let url = URL(fileURLWithPath: arguments.last!).appendingPathComponent("notes.json")
do {
    var notes = try JSONDecoder().decode([String].self, from: Data(contentsOf: url))
    notes.append("note \(notes.count + 1)")
    let data = try JSONEncoder().encode(notes)
    if replace {
        let next = url.deletingLastPathComponent().appendingPathComponent("notes.json.next")
        try data.write(to: next)
        _ = try FileManager.default.replaceItemAt(url, withItemAt: next)
    } else {
        try data.write(to: url, options: .atomic)
    }
} catch {
    FileHandle.standardError.write(Data("reason: corrupt\n\(error)\n".utf8))
    exit(1)
}
