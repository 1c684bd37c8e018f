import CorruptFuzzCore
import Foundation

/// Findings a team already knows about, read from a known-findings file: a nightly job reports
/// them but does not fail on them.
///
/// The file holds one `KIND: SIGNATURE` per line, as the run's summary prints them; `*`
/// matches any text. Lines under a `[TARGET]` header apply to that target only (the header may
/// use `*` too); lines before any header apply to every target. Blank lines and lines that
/// start with `#` are ignored (a signature's numbers are written `#` too, but a line of the
/// file starts with its kind).
///
/// ```
/// # The naive loaders are broken on purpose.
/// [habit-loader-naive]
/// *
/// [friend-list-hardened]
/// silent-acceptance: corrupt: XML: a key twice in a dict*
/// crash: SIGSEGV: *
/// ```
public struct KnownFindings: Sendable, Hashable {
    /// One line of the file.
    public struct Entry: Sendable, Hashable {
        /// The target pattern of the section the line is in; nil before any section.
        public var target: String?
        /// The kind, or nil for a line that is `*` alone (any finding).
        public var kind: FindingKind?
        /// The signature pattern (`*` matches any text).
        public var signature: String
        /// Where the line is: `known-findings.txt:12`.
        public var location: String

        public init(target: String?, kind: FindingKind?, signature: String, location: String) {
            self.target = target
            self.kind = kind
            self.signature = signature
            self.location = location
        }

        /// Whether this line covers the finding `key` of `targetName`.
        public func matches(_ key: FindingKey, target targetName: String) -> Bool {
            if let target, !Glob.matches(target, targetName) { return false }
            if let kind, kind != key.kind { return false }
            return Glob.matches(signature, key.signature)
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry] = []) { self.entries = entries }

    /// Reads a known-findings file.
    /// - Throws: ``CorruptFuzzError`` (`invalidArgument`) when it cannot be read or a line is
    ///   not `KIND: SIGNATURE`, `*` or `[TARGET]`.
    public init(contentsOf path: String) throws(CorruptFuzzError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CorruptFuzzError(.invalidArgument, "cannot read the known-findings file \(path)")
        }
        try self.init(parsing: String(decoding: data, as: UTF8.self), file: path)
    }

    /// Parses the text of a known-findings file named `file` (for locations and errors).
    /// - Throws: ``CorruptFuzzError`` (`invalidArgument`) for a line that is not an entry.
    public init(parsing text: String, file: String) throws(CorruptFuzzError) {
        var entries: [Entry] = []
        var target: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            let location = "\(file):\(index + 1)"
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw CorruptFuzzError(.invalidArgument, "\(location): a section header is [TARGET], got '\(line)'")
                }
                target = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                continue
            }
            if line == "*" {
                entries.append(Entry(target: target, kind: nil, signature: "*", location: location))
                continue
            }
            guard let colon = line.firstIndex(of: ":"), let kind = FindingKind(rawValue: String(line[..<colon])) else {
                let kinds = FindingKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw CorruptFuzzError(
                    .invalidArgument, "\(location): expected 'KIND: SIGNATURE' (KIND one of \(kinds)), '*' or '[TARGET]', got '\(line.prefix(120))'")
            }
            let signature = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            entries.append(Entry(target: target, kind: kind, signature: signature.isEmpty ? "*" : signature, location: location))
        }
        self.entries = entries
    }

    /// The first line that covers the finding `key` of `target`, if any.
    public func entry(for key: FindingKey, target: String) -> Entry? {
        entries.first { $0.matches(key, target: target) }
    }

    /// Known-findings lines for the new findings of `report`, one section per target: what to
    /// add to the file to accept them.
    public static func listing(newFindingsOf report: RunReport) -> String {
        var text = "# corrupt-fuzz: new findings of \(report.runID) (KIND: SIGNATURE; * matches any text)\n"
        for suite in report.suites where !suite.newFindings.isEmpty {
            text += "\n[\(suite.result.targetName)]\n"
            for record in suite.newFindings {
                // A `*` in a signature would read as a pattern; it matches itself anyway.
                text += "\(record.finding.kind.rawValue): \(record.finding.signature.replacingOccurrences(of: "\n", with: " "))\n"
            }
        }
        return text
    }
}

/// Shell-style patterns where `*` is the only special character.
enum Glob {
    /// Whether `text` matches `pattern` (`*` matches any run of characters, empty included).
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.unicodeScalars), t = Array(text.unicodeScalars)
        var pi = 0, ti = 0
        var star = -1, mark = 0
        while ti < t.count {
            if pi < p.count, p[pi] != "*", p[pi] == t[ti] {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi
                mark = ti
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
