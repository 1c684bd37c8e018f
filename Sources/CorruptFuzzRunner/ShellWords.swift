import CorruptFuzzCore

/// Splits a command line into words the way a POSIX shell does, without running a shell.
///
/// Single quotes keep everything literally; double quotes keep spaces and allow `\"`, `\\`,
/// `\$` and `` \` ``; a backslash outside quotes escapes the next character. Expansions
/// (`$VAR`, globs, pipes) are not performed: wrap the command in `sh -c '…'` for those.
public enum ShellWords {
    /// Splits `line` into words.
    /// - Throws: ``CorruptFuzzError`` with code `invalidArgument` for an unterminated quote.
    public static func split(_ line: String) throws(CorruptFuzzError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = line.makeIterator()
        while let c = iterator.next() {
            switch c {
            case "'":
                inWord = true
                var closed = false
                while let d = iterator.next() {
                    if d == "'" { closed = true; break }
                    current.append(d)
                }
                guard closed else { throw CorruptFuzzError(.invalidArgument, "unterminated single quote in command: \(line)") }
            case "\"":
                inWord = true
                var closed = false
                while let d = iterator.next() {
                    if d == "\"" { closed = true; break }
                    if d == "\\" {
                        guard let e = iterator.next() else { break }
                        if !"\"\\$`".contains(e) { current.append("\\") }
                        current.append(e)
                    } else {
                        current.append(d)
                    }
                }
                guard closed else { throw CorruptFuzzError(.invalidArgument, "unterminated double quote in command: \(line)") }
            case "\\":
                inWord = true
                if let d = iterator.next() { current.append(d) }
            case " ", "\t", "\n":
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                inWord = true
                current.append(c)
            }
        }
        if inWord { words.append(current) }
        return words
    }

    /// Quotes `word` so that ``split(_:)`` and a POSIX shell read it back unchanged.
    public static func quote(_ word: String) -> String {
        let safe = word.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:@%+,".contains($0) }
        if safe, !word.isEmpty { return word }
        return "'" + word.replacing("'", with: "'\\''") + "'"
    }
}
