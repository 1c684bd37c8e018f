import CorruptFuzzCore

/// Property lists as a fuzzing format: the strict readers (binary or XML) as validator,
/// plist-level corruptions as structure-aware mutations (graph ones in the seed's own
/// encoding). As `.keyedArchive`, a file must also be a well-formed NSKeyedArchiver archive
/// ($archiver, $version, $top, $objects, UIDs in range, class descriptions).
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
    let mutator = PlistMutator()

    public init(_ kind: Kind = .propertyList) {
        self.kind = kind
    }

    public var validator: any Validator {
        switch kind {
        case .propertyList: ClosureValidator(name: "plist reader (binary or XML)") { plistVerdict($0, checkArchive: false) }
        case .keyedArchive: ClosureValidator(name: "keyed archive checker") { plistVerdict($0, checkArchive: true) }
        }
    }

    public func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [StructuredMutation] {
        mutator.catalogue(of: bytes).filter { context.allows($0.bytes.count) }
    }

    public func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> StructuredMutation? { mutator.mutate(bytes, using: &rng) }

    /// A property list of one string; for a keyed archive, a minimal valid archive of a root
    /// string.
    public func generate(using rng: inout FuzzRNG) -> [UInt8] {
        guard kind == .keyedArchive else {
            return BinaryPlistWriter.write(BinaryPlist(objects: [.ascii(Array("seed".utf8), length: .inline)], topObject: 0))
        }
        let text = Array("hello \(rng.below(1000))".utf8)
        return BinaryPlistWriter.write(
            BinaryPlist(
                objects: [
                    .dictionary(keys: [1, 2, 3, 4], values: [5, 6, 7, 8], length: .inline),
                    .ascii(Array("$archiver".utf8), length: .inline), .ascii(Array("$version".utf8), length: .inline),
                    .ascii(Array("$top".utf8), length: .inline), .ascii(Array("$objects".utf8), length: .inline),
                    .ascii(Array("NSKeyedArchiver".utf8), length: .natural(15)), .integer(100_000, widthLog2: 2),
                    .dictionary(keys: [9], values: [10], length: .inline), .array([11, 12], length: .inline),
                    .ascii(Array("root".utf8), length: .inline), .uid(1, width: 1), .ascii(Array("$null".utf8), length: .inline),
                    .ascii(text, length: .natural(text.count)),
                ], topObject: 0))
    }
}

/// The strict reader's verdict (binary or XML, by the file's first bytes), and the archive
/// checker's when asked.
func plistVerdict(_ bytes: [UInt8]?, checkArchive: Bool) -> Verdict {
    guard let bytes else { return .invalid(reason: "not-found", message: "the file does not exist") }
    if bytes.isEmpty { return .invalid(reason: "empty", message: "the file is empty") }
    do throws(PlistError) {
        let plist = try PropertyListFile.read(bytes).plist
        if checkArchive, let problem = KeyedArchiveChecker.problem(in: plist) { return .invalid(reason: "corrupt", message: problem) }
        return .valid
    } catch {
        return .invalid(reason: "corrupt", message: error.message)
    }
}
