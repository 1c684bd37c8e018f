import CorruptFuzzCore

/// Corruptions of binary property lists and keyed archives that reach past the first checks:
/// lying trailer fields, offsets into the middle of objects, lying lengths, references and UIDs
/// pointing nowhere or back at themselves, type confusion, missing and extra keys, huge and
/// deeply nested objects.
///
/// XML property lists get the graph corruptions, written back as XML (those the XML form cannot
/// hold, such as a container that contains itself, are left out), and the same graph in the
/// binary encoding; byte-level and lexical corruption of the XML text is the engine's.
public struct PlistMutator: StructureAwareMutator {
    /// The largest XML file a mutation writes: shared objects are written once per reference.
    static let maxXMLBytes = 16 << 20
    /// Deep nesting in XML: each level is indented one more tab, so the file grows with the
    /// square of the depth.
    static let xmlNestingDepth = 1_000

    /// What the generator makes: a property list, or a keyed archive.
    public let kind: PlistFormat.Kind

    public init(_ kind: PlistFormat.Kind = .propertyList) { self.kind = kind }

    /// Every systematic corruption of one valid file, up to the context's size cap.
    public func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [StructuredMutation] {
        fullCatalogue(of: bytes).filter { context.allows($0.bytes.count) }
    }

    /// The catalogue, and for a keyed archive the structure stage (``KeyedArchiveStage``: every
    /// key of every archived object dropped, every value set to its boundaries), interleaved.
    public func catalogueEntries(of bytes: [UInt8], context: CatalogueContext) -> [CatalogueEntry] {
        let stage = KeyedArchiveStage(bytes)?.entries().filter { context.allows($0.minimumLength) } ?? []
        return CatalogueEntry.interleaved(catalogue(of: bytes, context: context).map(CatalogueEntry.init), stage)
    }

    private func fullCatalogue(of bytes: [UInt8]) -> [StructuredMutation] {
        if PropertyListFile.encoding(of: bytes) == .xml {
            guard let plist = try? XMLPlistReader.read(bytes) else { return [] }
            var rng = FuzzRNG(seed: 1)
            let pending = pendingGraphMutations(plist, rng: &rng, includeHuge: false)
            let step = max(1, (pending.count + Self.catalogueGraphLimit - 1) / Self.catalogueGraphLimit)
            let limit = max(1 << 20, 8 * bytes.count)
            let ladder = Self.nestingLadder.map { Self.nesting(depth: $0, name: "nesting-\($0)") }
            return [asBinary(plist)] + stride(from: 0, to: pending.count, by: step).compactMap { applyXML(pending[$0], to: plist, maxBytes: limit) }
                + ladder.compactMap { applyXML($0, to: plist, maxBytes: 1 << 20) }
        }
        guard let plist = try? BinaryPlistReader.read(bytes) else { return [] }
        return layoutMutations(bytes, plist) + graphMutations(plist)
            + Self.nestingLadder.map { apply(Self.nesting(depth: $0, name: "nesting-\($0)"), to: plist) }
    }

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

    /// One random corruption of `bytes`, or nil when they are not a property list.
    public func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> StructuredMutation? {
        if PropertyListFile.encoding(of: bytes) == .xml {
            guard let plist = try? XMLPlistReader.read(bytes) else { return nil }
            if rng.oneIn(16) { return asBinary(plist) }
            var pending = pendingGraphMutations(plist, rng: &rng, includeHuge: rng.oneIn(8), nestingDepth: Self.xmlNestingDepth)
            // Some changes have no XML form: try a few.
            for _ in 0..<4 where !pending.isEmpty {
                if let mutation = applyXML(pending.remove(at: rng.below(pending.count)), to: plist) { return mutation }
            }
            return nil
        }
        guard let plist = try? BinaryPlistReader.read(bytes) else { return nil }
        if rng.oneIn(4) {
            // Byte patches of the trailer and offset table: cheap to build all of.
            let layout = layoutMutations(bytes, plist)
            return layout.isEmpty ? nil : layout[rng.below(layout.count)]
        }
        // Only the chosen graph change is written out. Huge and deeply nested objects are
        // costly to build: one time in eight.
        let pending = pendingGraphMutations(plist, rng: &rng, includeHuge: rng.oneIn(8))
        return pending.isEmpty ? nil : apply(pending[rng.below(pending.count)], to: plist)
    }

    /// Lies in the trailer fields and the offset table, patched into the bytes as they are.
    func layoutMutations(_ bytes: [UInt8], _ plist: BinaryPlist) -> [StructuredMutation] {
        var out: [StructuredMutation] = []
        let t = bytes.count - 32
        func patch(_ name: String, _ at: Int, _ values: [UInt8]) {
            var b = bytes
            b.replaceSubrange(at..<(at + values.count), with: values)
            out.append(StructuredMutation(bytes: b, name: name))
        }
        func be64(_ v: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: v >> UInt64(8 * $0)) } }
        for size: UInt8 in [0, 3, 9, 255] { patch("trailer.offsetIntSize=\(size)", t + 6, [size]) }
        for size: UInt8 in [0, 1, 9] where Int(size) != plist.objectRefSize { patch("trailer.objectRefSize=\(size)", t + 7, [size]) }
        let count = UInt64(plist.objects.count)
        for (label, v) in [("0", UInt64(0)), ("-1", count - 1), ("+1", count + 1), ("max", UInt64.max)] where v != count {
            patch("trailer.numObjects=\(label)", t + 8, be64(v))
        }
        for (label, v) in [("=numObjects", count), ("max", UInt64.max)] { patch("trailer.topObject=\(label)", t + 16, be64(v)) }
        let table = Int(BinaryPlistReader.readUInt(bytes, t + 24, 8))
        for (label, v) in [("0", UInt64(0)), ("8", UInt64(8)), ("-1", UInt64(table - 1)), ("past-end", UInt64(bytes.count)), ("max", UInt64.max)] {
            patch("trailer.offsetTableOffset=\(label)", t + 24, be64(v))
        }
        // Lying object lengths: the count in a string's, data's or container's marker, one more
        // or zero (the objects are left where they are).
        for i in 0..<min(plist.objects.count, 16) {
            let at = Int(BinaryPlistReader.readUInt(bytes, table + i * plist.offsetIntSize, plist.offsetIntSize))
            guard at < t, [0x4, 0x5, 0x6, 0xA, 0xC, 0xD].contains(bytes[at] >> 4) else { continue }
            let length = bytes[at] & 0x0F
            guard length < 0x0E else { continue }
            patch("objects[\(i)].length+1", at, [bytes[at] + 1])
            if length > 0 { patch("objects[\(i)].length=0", at, [bytes[at] & 0xF0]) }
        }
        // Offsets into the middle of an object.
        for i in 0..<min(plist.objects.count, 8) {
            let at = table + i * plist.offsetIntSize
            let offset = BinaryPlistReader.readUInt(bytes, at, plist.offsetIntSize)
            var b = bytes
            BinaryPlistWriter.appendUIntInPlace(&b, at: at, offset + 1, plist.offsetIntSize)
            out.append(StructuredMutation(bytes: b, name: "offsets[\(i)]+1"))
        }
        return out
    }

    /// A graph corruption not yet applied: building the bytes costs a full write.
    struct PendingChange {
        var name: String
        var change: (inout BinaryPlist) -> Void
    }

    func graphMutations(_ plist: BinaryPlist, rng: inout FuzzRNG, includeHuge: Bool = true) -> [StructuredMutation] {
        pendingGraphMutations(plist, rng: &rng, includeHuge: includeHuge).map { apply($0, to: plist) }
    }

    /// The change written as XML, or nil when the changed graph has no XML form or is too large.
    func applyXML(_ pending: PendingChange, to plist: BinaryPlist, maxBytes: Int = maxXMLBytes) -> StructuredMutation? {
        var copy = plist
        pending.change(&copy)
        guard let bytes = try? XMLPlistWriter.write(copy, maxBytes: maxBytes) else { return nil }
        return StructuredMutation(bytes: bytes, name: pending.name)
    }

    /// An XML property list's graph in the binary encoding: valid, but not the encoding a
    /// loader of XML files may expect.
    func asBinary(_ plist: BinaryPlist) -> StructuredMutation {
        var copy = plist
        copy.fitLayout()
        return StructuredMutation(bytes: BinaryPlistWriter.write(copy), name: "encoding=binary")
    }

    func apply(_ pending: PendingChange, to plist: BinaryPlist) -> StructuredMutation {
        var copy = plist
        copy.offsets = nil
        pending.change(&copy)
        return StructuredMutation(bytes: BinaryPlistWriter.write(copy), name: pending.name)
    }

    func pendingGraphMutations(_ plist: BinaryPlist, rng: inout FuzzRNG, includeHuge: Bool, nestingDepth: Int = 10_000) -> [PendingChange] {
        var out: [PendingChange] = []
        let n = plist.objects.count
        func emit(_ name: String, _ change: @escaping (inout BinaryPlist) -> Void) {
            out.append(PendingChange(name: name, change: change))
        }
        let index = rng.below(n)
        // Type confusion: the object becomes another type.
        let replacements: [(String, BinaryPlist.Object)] = [
            ("string", .ascii(Array("confused".utf8), length: .inline)), ("integer", .integer(-1, widthLog2: 3)),
            ("real", .real(.nan, widthLog2: 3)), ("data", .data([0xFF, 0x00], length: .inline)), ("date", .date(-1e300)),
            ("array", .array([], length: .inline)), ("dictionary", .dictionary(keys: [], values: [], length: .inline)),
            ("null", .null), ("uid", .uid(UInt64(n + 7), width: 4)), ("bool", .bool(true)),
            ("set", .set([], length: .inline)), ("utf16", .utf16(Array("confused".utf16), length: .inline)), ("fill", .fill),
        ]
        // Every object type the format defines, sets (0xC) and 2-byte strings included: a
        // loader's switch over markers is only as good as its rarest case.
        for (label, replacement) in replacements {
            emit("objects[\(index)]->\(label)") { $0.objects[index] = replacement }
        }
        // References and UIDs.
        for (i, object) in plist.objects.enumerated() {
            switch object {
            case .uid(let v, let width):
                emit("uid[\(i)]=out-of-range") { $0.objects[i] = .uid(v &+ UInt64(n) &* 4 &+ 1, width: max(width, 4)) }
                emit("uid[\(i)]=0") { $0.objects[i] = .uid(0, width: width) }
            case .array(let refs, let length) where !refs.isEmpty:
                emit("array[\(i)]+self") { $0.objects[i] = .array(refs + [i], length: length) }
                if includeHuge { emit("array[\(i)] huge") { $0.objects[i] = .array(Array(repeating: refs[0], count: 200_000), length: .natural(200_000)) } }
            case .dictionary(let keys, let values, let length) where !keys.isEmpty:
                let k = rng.below(keys.count)
                emit("dict[\(i)] missing key \(k)") {
                    var ks = keys, vs = values
                    ks.remove(at: k)
                    vs.remove(at: k)
                    $0.objects[i] = .dictionary(keys: ks, values: vs, length: length)
                }
                // `$class` pointing at an object that is not a class description (UID 1 is the
                // root object in every NSKeyedArchiver archive).
                if let c = keys.firstIndex(where: { plist.objects[$0] == .ascii(Array("$class".utf8), length: .inline) }),
                    case .uid(let uid, let width) = plist.objects[values[c]], uid != 1
                {
                    emit("dict[\(i)].$class=not-a-class") { $0.objects[values[c]] = .uid(1, width: width) }
                }
                emit("dict[\(i)] extra key") {
                    $0.objects.append(.ascii(Array("unexpected".utf8), length: .inline))
                    $0.objects[i] = .dictionary(keys: keys + [$0.objects.count - 1], values: values + [values[0]], length: .natural(keys.count + 1))
                }
            case .ascii(let b, _):
                if String(decoding: b, as: UTF8.self) == "NSKeyedArchiver" || b.starts(with: Array("NS".utf8))
                    || b.first.map({ (0x41...0x5A).contains($0) }) == true
                {
                    emit("string[\(i)]=renamed class") { $0.objects[i] = .ascii(Array("NoSuchClass".utf8), length: .inline) }
                }
                if includeHuge { emit("string[\(i)] huge") { $0.objects[i] = .ascii(Array(repeating: 0x41, count: 1 << 20), length: .natural(1 << 20)) } }
            case .integer(let v, let w):
                emit("integer[\(i)]=future") { $0.objects[i] = .integer(v &+ 1, widthLog2: w) }
                emit("integer[\(i)]=-1") { $0.objects[i] = .integer(-1, widthLog2: 3) }
            default:
                break
            }
        }
        // Deep nesting: a chain of 10,000 arrays (by default) in place of the top object.
        if includeHuge { out.append(Self.nesting(depth: nestingDepth, name: "deep-nesting")) }
        return out
    }

    /// Nesting depths the catalogue tries: around common parser and stack limits, since an
    /// app's recursive walker may give up (or overflow its stack) below the parser's own.
    /// (Up to 10,000: a 100,000-deep archive is 900 KB that a careful loader's debug build takes
    /// over half a second just to read, a hang under the demo's deadline rather than a bug.)
    public static let nestingLadder = [64, 128, 200, 255, 256, 257, 512, 1_000, 10_000]

    /// A chain of `depth` nested arrays in place of the top object.
    static func nesting(depth: Int, name: String) -> PendingChange {
        PendingChange(name: name) { p in
            let start = p.objects.count
            for level in 0..<depth { p.objects.append(.array(level == depth - 1 ? [] : [start + level + 1], length: .inline)) }
            p.objectRefSize = 4
            p.offsetIntSize = 4
            p.topObject = start
        }
    }

    /// The most graph corruptions one seed's catalogue writes out: each is a full copy of the
    /// file, and a seed of thousands of objects has thousands of them (havoc draws from all).
    static let catalogueGraphLimit = 96

    /// The catalogue's graph corruptions: all of them for a small file, an even sample for a
    /// large one.
    func graphMutations(_ plist: BinaryPlist) -> [StructuredMutation] {
        var rng = FuzzRNG(seed: 1)
        let pending = pendingGraphMutations(plist, rng: &rng, includeHuge: false)
        let step = max(1, (pending.count + Self.catalogueGraphLimit - 1) / Self.catalogueGraphLimit)
        return stride(from: 0, to: pending.count, by: step).map { apply(pending[$0], to: plist) }
    }
}

extension BinaryPlistWriter {
    static func appendUIntInPlace(_ bytes: inout [UInt8], at: Int, _ value: UInt64, _ width: Int) {
        for i in 0..<width { bytes[at + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * (width - 1 - i))) }
    }
}
