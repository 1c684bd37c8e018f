/// The notes app's editing and saving: a document of notes, the edits a user makes, and two
/// writers. ``NotesWriter`` escapes what XML needs escaped; ``NaiveNotesWriter`` has the bugs
/// of a hurried save path, each in one path only, so most documents survive it: it escapes `&`
/// in a note's text but not `<` (a note that quotes markup is saved as a document that no longer
/// parses), and its `addNote` numbers a new note by counting the notes (after a deletion, the
/// new note takes an id that is still in use).
public struct NotesDocument: Sendable, Hashable {
    public var notes: [Note]

    public init(notes: [Note] = []) {
        self.notes = notes
    }

    /// Adds a note with the next free id (one more than the largest).
    public mutating func addNote(_ text: String, created: String) {
        let next = (notes.compactMap { $0.id.flatMap { Int($0) } }.max() ?? 0) + 1
        notes.append(Note(id: "\(next)", created: created, text: text))
    }

    /// Adds a note numbered as a hurried app does: by counting the notes, which repeats an id
    /// after a deletion.
    public mutating func addNoteNaively(_ text: String, created: String) {
        notes.append(Note(id: "\(notes.count + 1)", created: created, text: text))
    }

    /// Replaces the text of the note at `index`.
    public mutating func editText(at index: Int, _ text: String) {
        guard notes.indices.contains(index) else { return }
        notes[index].text = text
    }

    public mutating func deleteNote(at index: Int) {
        guard notes.indices.contains(index) else { return }
        notes.remove(at: index)
    }
}

/// Saves notes as the notes schema describes them, every character of a note's text kept: `&`,
/// `<` and `>` escaped, a carriage return as `&#13;` (a parser turns a raw one into a newline).
public enum NotesWriter {
    public static func xml(_ notes: [Note]) -> [UInt8] {
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + #"<notes version="1">"# + "\n"
        for note in notes {
            out += "  <note"
            if let id = note.id { out += #" id=""# + escape(id, attribute: true) + #"""# }
            if let created = note.created { out += #" created=""# + escape(created, attribute: true) + #"""# }
            out += ">" + escape(note.text, attribute: false) + "</note>\n"
        }
        return Array((out + "</notes>\n").utf8)
    }

    static func escape(_ text: String, attribute: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\r": out += "&#13;"
            case "\"" where attribute: out += "&quot;"
            case "\t" where attribute: out += "&#9;"
            case "\n" where attribute: out += "&#10;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// The hurried save: string interpolation with `&` escaped and nothing else.
public enum NaiveNotesWriter {
    public static func xml(_ notes: [Note]) -> [UInt8] {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<notes version=\"1\">\n"
        for note in notes {
            let text = note.text.replacing("&", with: "&amp;")
            out += "  <note id=\"\(note.id ?? "")\" created=\"\(note.created ?? "")\">\(text)</note>\n"
        }
        return Array((out + "</notes>\n").utf8)
    }
}
