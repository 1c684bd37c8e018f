import CorruptFuzzCore
import Foundation

/// Finds the line of a schema where the rule a finding broke is declared, so that CI
/// annotations point at it: `habits[2].num_dates` is the `- id: num_dates` line of a `.ksy`
/// file, `/notes/note[2]` the `<xs:element name="note"` line of an `.xsd`.
public enum SourceLocator {
    /// The 1-based line in `text` (the content of the schema file `file`) that declares what
    /// the finding's violation names, or nil when the finding names nothing found there (a
    /// crash, a whole-file problem).
    public static func line(of finding: Finding, file: String, text: String) -> Int? {
        guard case .invalid(let violation)? = finding.verdict else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let isXSD = file.lowercased().hasSuffix(".xsd")
        var names: [String] = []
        if isXSD { names += quotedNames(in: violation.message) }
        names += pathNames(violation.path).reversed()
        for name in names where !name.isEmpty {
            if let index = lines.firstIndex(where: { declares($0, name: name, xsd: isXSD) }) { return index + 1 }
        }
        return nil
    }

    /// The names in a violation path, outermost first: `habits[2].dates.count` gives
    /// `habits`, `dates`, `count`; `/notes/note[2]/@id` gives `notes`, `note`, `id`.
    static func pathNames(_ path: String) -> [String] {
        path.split(whereSeparator: { $0 == "." || $0 == "/" }).map { part in
            var name = part.prefix { $0 != "[" }
            if name.hasPrefix("@") || name.hasPrefix("$") { name = name.dropFirst() }
            return String(name)
        }
    }

    /// Names quoted in a message: libxml2 says `Element 'note': The attribute 'id' is
    /// required`; the innermost (last) first.
    static func quotedNames(in message: String) -> [String] {
        let parts = message.split(separator: "'", omittingEmptySubsequences: false)
        return stride(from: 1, to: parts.count - 1, by: 2).map { String(parts[$0]) }.filter { name in
            !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ":" }
        }.reversed()
    }

    /// Whether `line` declares `name`: `- id: name` in Kaitai Struct YAML, an element or
    /// attribute named `name` in an XML Schema.
    static func declares(_ line: String, name: String, xsd: Bool) -> Bool {
        if xsd {
            return (line.contains("element") || line.contains("attribute")) && line.contains("name=\"\(name)\"")
        }
        var rest = Substring(line).drop { $0 == " " || $0 == "\t" }
        if rest.hasPrefix("-") { rest = rest.dropFirst().drop { $0 == " " } }
        guard rest.hasPrefix("id:") else { return false }
        return rest.dropFirst(3).trimmingCharacters(in: .whitespaces) == name
    }
}
