/// A format as a command selected it, with the arguments that select it again in a replay
/// command.
public struct ResolvedFormat: Sendable {
    public var format: any FuzzFormat
    /// The options that select this format again (`[["--format", "notes"]]`), for replay
    /// commands.
    public var replayArguments: [[String]]
    /// Problems that do not stop a run (a schema the generator cannot use…).
    public var warnings: [String]
    /// The description file the format was read from (as given), where findings' source
    /// locations come from.
    public var source: String?

    public init(format: any FuzzFormat, replayArguments: [[String]], warnings: [String] = [], source: String? = nil) {
        self.format = format
        self.replayArguments = replayArguments
        self.warnings = warnings
        self.source = source
    }
}

/// Every format a front end can select by name (`--format notes`) or by a description file
/// (`--schema habits.ksy`, `--xsd notes.xsd`, `--format sqlite --schema store.sql`): one list,
/// one set of rules and one message for a name that is not there, shared by every command.
///
/// A registry is data: the bundled one (`FormatRegistry.bundled`, in CorruptFuzzExamples)
/// lists the formats of this build; a front end of your own can add entries.
public struct FormatRegistry: Sendable {
    /// A format by name.
    public struct Entry: Sendable {
        public var name: String
        public var format: any FuzzFormat

        public init(name: String, format: any FuzzFormat) {
            self.name = name
            self.format = format
        }
    }

    /// How description files with some extensions become a format.
    public struct DescriptionReader: Sendable {
        /// Lowercased extensions without the dot (`ksy`, `xsd`, `sql`).
        public var extensions: [String]
        /// The format names a description of this kind goes with (nil: none, the description
        /// is the format); the first is the default.
        public var formatNames: [String]?
        /// Reads `path`, for the format name given with it (or nil).
        public var read: @Sendable (_ path: String, _ formatName: String?) throws(CorruptFuzzError) -> ResolvedFormat

        public init(
            extensions: [String], formatNames: [String]? = nil,
            read: @escaping @Sendable (_ path: String, _ formatName: String?) throws(CorruptFuzzError) -> ResolvedFormat
        ) {
            self.extensions = extensions
            self.formatNames = formatNames
            self.read = read
        }
    }

    public var entries: [Entry]
    public var readers: [DescriptionReader]
    /// Names of formats this build left out, with the package trait that brings each.
    public var missingTraits: [String: String]

    public init(entries: [Entry], readers: [DescriptionReader] = [], missingTraits: [String: String] = [:]) {
        self.entries = entries
        self.readers = readers
        self.missingTraits = missingTraits
    }

    public var names: [String] { entries.map(\.name) }

    /// The names of the formats that generate files.
    public var generatingNames: [String] { entries.filter { $0.format.mutator != nil }.map(\.name) }

    public func entry(named name: String) -> Entry? { entries.first { $0.name == name } }

    /// Why `name` names no format here: a typo, or a format of a trait this build left out.
    public func unknown(_ name: String) -> String {
        if let trait = missingTraits[name] {
            return
                "format '\(name)' needs the \(trait) trait, and this corrupt-fuzz was built without it (build with default traits, or `--traits \(trait)`)"
        }
        return
            "unknown format '\(name)'; known formats: \(names.joined(separator: ", ")), or a description file (\(readers.flatMap(\.extensions).map { ".\($0)" }.joined(separator: ", ")))"
    }

    /// The reader for `path`, by its extension.
    public func reader(for path: String) -> DescriptionReader? {
        let lower = path.lowercased()
        return readers.first { reader in reader.extensions.contains { lower.hasSuffix("." + $0) } }
    }

    /// Checks a name or a description file without reading it: nil when it is one, else why not.
    public func problem(with nameOrPath: String) -> String? {
        entry(named: nameOrPath) != nil || reader(for: nameOrPath) != nil ? nil : unknown(nameOrPath)
    }

    /// What a name and a description file select, checked against each other but not read.
    public enum Selection: Sendable {
        case entry(Entry)
        case description(DescriptionReader, path: String, formatName: String?)
    }

    /// The selection of a name or a description file (`format`, which may itself be a
    /// description's path) and a description file given beside it.
    /// - Returns: nil when neither is given.
    /// - Throws: ``CorruptFuzzError`` (`invalidArgument`) for an unknown name or a pair that
    ///   does not go together.
    public func select(format: String?, description: String? = nil) throws(CorruptFuzzError) -> Selection? {
        var name = format
        var path = description
        if let given = format, entry(named: given) == nil, let reader = reader(for: given) {
            // `--format notes.xsd`: the description, with its default format name.
            guard path == nil else { throw CorruptFuzzError(.invalidArgument, "give one description file, not two (\(given) and \(path!))") }
            path = given
            name = reader.formatNames?.first
        }
        if let path {
            guard let reader = reader(for: path) else {
                throw CorruptFuzzError(
                    .invalidArgument,
                    "\(path): not a description corrupt-fuzz reads (\(readers.flatMap(\.extensions).map { ".\($0)" }.joined(separator: ", ")))")
            }
            let kind = reader.extensions.first.map { ".\($0)" } ?? "this"
            if let allowed = reader.formatNames {
                // An XML Schema goes with --format xml, a SQL description with sqlite (the
                // default) or sqlite-wal.
                if let given = name, !allowed.contains(given) {
                    throw CorruptFuzzError(
                        .invalidArgument, "a \(kind) description (\(path)) needs --format \(allowed.joined(separator: " or ")), not \(given)")
                }
                name = name ?? allowed.first
            } else if let name {
                throw CorruptFuzzError(.invalidArgument, "give either a \(kind) description (\(path)) or --format \(name), not both")
            }
            return .description(reader, path: path, formatName: name)
        }
        guard let name else { return nil }
        guard let found = entry(named: name) else { throw CorruptFuzzError(.invalidArgument, unknown(name)) }
        return .entry(found)
    }

    /// The format ``select(format:description:)`` selects, its description read.
    /// - Throws: ``CorruptFuzzError`` (`invalidArgument`) as `select` does, or for a
    ///   description that cannot be read.
    public func resolve(format: String?, description: String? = nil) throws(CorruptFuzzError) -> ResolvedFormat? {
        switch try select(format: format, description: description) {
        case nil: return nil
        case .entry(let found): return ResolvedFormat(format: found.format, replayArguments: [["--format", found.name]])
        case .description(let reader, let path, let name): return try reader.read(path, name)
        }
    }
}
