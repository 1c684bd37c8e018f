import CorruptFuzzCore

/// Property lists as a fuzzing format: the strict readers (binary or XML) as validator,
/// plist-level corruptions as structure-aware mutations (graph ones in the seed's own
/// encoding). As `.keyedArchive`, a file must also be a well-formed NSKeyedArchiver archive
/// ($archiver, $version, $top, $objects, UIDs in range, class descriptions) that breaks none of
/// what Foundation's decoders assume (``KeyedArchiveChecker/foundationProblem(in:)``).
public struct PlistFormat: FuzzFormat {
    /// What a valid file is.
    public enum Kind: Sendable, Hashable {
        /// Any property list, binary or XML.
        case propertyList
        /// A property list that is a well-formed keyed archive.
        case keyedArchive
    }

    public let kind: Kind
    public let fileExtension = "plist"
    public let plistMutator: PlistMutator

    public init(_ kind: Kind = .propertyList) {
        self.kind = kind
        plistMutator = PlistMutator(kind)
    }

    public var mutator: (any StructureAwareMutator)? { plistMutator }

    public var validator: any Validator {
        switch kind {
        case .propertyList: ClosureValidator(name: "plist reader (binary or XML)", contents: { plistVerdict($0, checkArchive: false) })
        case .keyedArchive: ClosureValidator(name: "keyed archive checker", contents: { plistVerdict($0, checkArchive: true) })
        }
    }
}

/// The strict reader's verdict (binary or XML, by the file's first bytes), and the archive
/// checker's when asked.
func plistVerdict(_ bytes: [UInt8], checkArchive: Bool) -> Verdict {
    do throws(Violation) {
        let plist = try PropertyListFile.read(bytes).plist
        // The archive's structure, then what Foundation's decoders assume without checking (the
        // keyed-archive sweep found NSKeyedUnarchiver trapping on archives that pass the first).
        if checkArchive, let problem = KeyedArchiveChecker.problem(in: plist) ?? KeyedArchiveChecker.foundationProblem(in: plist) {
            return .invalid(Violation(.corrupt, problem))
        }
        return .valid
    } catch {
        return .invalid(error)
    }
}
