import CorruptFuzzCore
import CorruptFuzzPlist
import Foundation
import SelfFuzzSupport
import Testing

// The property-list validator against two independent readers: Foundation's
// PropertyListSerialization (CoreFoundation's parsers, in this process) and Python's plistlib
// (Scripts/validator-sweep.py, one process for all inputs). Every disagreement must fall in a
// class of the allow-list below, each with the reason we differ (Docs/Formats.md lists them).
//
//     swift test --filter ValidatorSweep

@Suite("Validator sweep: property lists against Foundation and Python's plistlib")
struct PlistValidatorSweepTests {
    @Test("the plist reader accepts what Foundation and plistlib accept, except for the documented classes")
    func sweep() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let inputs = try plistSweepInputs()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plist-sweep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let paths = try SweepInput.write(inputs, into: folder, extension: "plist")
        // Nil (with an issue recorded) when python3 is missing: Foundation is still compared.
        let python = try runSweepScript("plistlib", paths)
        let validator = PlistFormat(.propertyList).validator
        var tally = SweepTally(format: "plist", inputs: inputs.count, allowed: plistAllowList)
        for (index, input) in inputs.enumerated() {
            let verdict = validator.validate(input.bytes)
            let ours = verdict.isValid
            var message = ""
            if case .invalid(let violation) = verdict { message = violation.description }
            let foundation = foundationVerdict(input.bytes)
            if foundation.setsAsArrays { tally.note("Foundation", "read with its sets as arrays (Foundation on Linux crashes bridging a set)") }
            if foundation.accepted == ours {
                tally.agree("Foundation")
            } else {
                let name = foundationClass(ours: ours, message: message, foundation: foundation, bytes: input.bytes)
                tally.disagree(
                    "Foundation", name, family: ruleFamily(message),
                    "\(input.name): ours: \(message.prefix(160)) | Foundation: \(foundation.detail.prefix(160))", bytes: input.bytes)
            }
            guard let result = python?[index] else { continue }
            guard let theirs = result["ok"] as? Bool else {
                tally.skip("plistlib", "no verdict: \(result["detail"] ?? "")")
                continue
            }
            let detail = result["detail"] as? String ?? ""
            if theirs == ours {
                tally.agree("plistlib")
            } else {
                let name = plistlibClass(ours: ours, message: message, plistlib: detail, foundation: foundation, bytes: input.bytes)
                tally.disagree(
                    "plistlib", name, family: ruleFamily(ours ? detail : message),
                    "\(input.name): ours: \(message.prefix(160)) | plistlib: \(detail.prefix(160))", bytes: input.bytes)
            }
        }
        tally.report(seconds: (clock.now - start).sweepSeconds)
        // Every oracle compared most inputs.
        #expect(tally.agreements["Foundation", default: 0] > inputs.count * 3 / 4)
        if python != nil { #expect(tally.agreements["plistlib", default: 0] > inputs.count / 2) }
    }
}

/// What the sweep found the readers missing, each now refused as Foundation refuses it.
@Suite("Validator sweep: the plist readers' fixes")
struct PlistValidatorSweepFixTests {
    /// Asserts that Foundation refuses `bytes` and the plist validator refuses them with `message`.
    func bothRefuse(_ bytes: [UInt8], _ message: String, _ comment: Comment) {
        #expect((try? PropertyListSerialization.propertyList(from: Data(bytes), format: nil)) == nil, "Foundation reads it: \(comment)")
        guard case .invalid(let violation) = PlistFormat(.propertyList).validator.validate(bytes) else {
            Issue.record("the validator calls it valid: \(comment)")
            return
        }
        #expect(violation.message.contains(message), "\(comment): \(violation)")
    }

    func string(_ text: String) -> BinaryPlist.Object { .naturalString(text) }

    @Test("binary rules Foundation enforces: a UTF-16 string of no characters, a UID past 32 bits, a named fill byte, offsets too narrow for the table")
    func binaryRules() {
        bothRefuse(
            BinaryPlistWriter.write(BinaryPlist(objects: [.utf16([], length: .inline)], topObject: 0)), "a UTF-16 string of no characters", "empty UTF-16")
        // An empty string is ASCII, which both read.
        let ascii = BinaryPlistWriter.write(BinaryPlist(objects: [.ascii([], length: .inline)], topObject: 0))
        #expect(PlistFormat(.propertyList).validator.validate(ascii).isValid)
        #expect((try? PropertyListSerialization.propertyList(from: Data(ascii), format: nil)) as? String == "")

        let uid: (UInt64) -> [UInt8] = { BinaryPlistWriter.write(BinaryPlist(objects: [.array([1], length: .inline), .uid($0, width: 8)], topObject: 0)) }
        bothRefuse(uid(1 << 32), "UID 4294967296 is not a UID", "UID 2^32")
        #expect(PlistFormat(.propertyList).validator.validate(uid(UInt64(UInt32.max))).isValid)
        #expect((try? PropertyListSerialization.propertyList(from: Data(uid(UInt64(UInt32.max))), format: nil)) != nil)

        bothRefuse(BinaryPlistWriter.write(BinaryPlist(objects: [.fill], topObject: 0)), "is a fill byte (0x0F), not an object", "fill as the top object")
        bothRefuse(
            BinaryPlistWriter.write(BinaryPlist(objects: [.array([1, 2], length: .inline), string("a"), .fill], topObject: 0)),
            "names objects[2], a fill byte", "fill in an array")

        // 300 bytes of string put the offset table past what 1-byte offsets reach, though the one
        // offset (8) fits.
        let long = BinaryPlist(objects: [.ascii(Array(repeating: 0x61, count: 300), length: .natural(300))], topObject: 0, offsetIntSize: 1)
        bothRefuse(BinaryPlistWriter.write(long), "trailer.offsetIntSize: 1 bytes cannot address the offset table at 312", "1-byte offsets")
        var fitted = long
        fitted.fitLayout()
        #expect(PlistFormat(.propertyList).validator.validate(BinaryPlistWriter.write(fitted)).isValid)
    }

    @Test("nesting: an object 512 levels below the top one is read, 513 is refused, in both encodings, as Foundation does")
    func nesting() throws {
        /// `levels` arrays around a string: the string lies `levels` below the top.
        func chain(_ levels: Int) -> BinaryPlist {
            var objects: [BinaryPlist.Object] = (0..<levels).map { .array([$0 + 1], length: .inline) }
            objects.append(string("leaf"))
            var plist = BinaryPlist(objects: objects, topObject: 0)
            plist.fitLayout()
            return plist
        }
        for levels in [511, 512, 513, 600] {
            let binary = BinaryPlistWriter.write(chain(levels))
            let xml = try XMLPlistWriter.write(chain(levels))
            for (encoding, bytes) in [("binary", binary), ("xml", xml)] {
                if levels <= PropertyListFile.maxDepth {
                    #expect(PlistFormat(.propertyList).validator.validate(bytes).isValid, "\(levels) \(encoding)")
                    #expect((try? PropertyListSerialization.propertyList(from: Data(bytes), format: nil)) != nil, "\(levels) \(encoding)")
                } else {
                    bothRefuse(bytes, "nesting: an object \(levels) levels below the top one", "\(levels) \(encoding)")
                }
            }
        }
        // A shared object counts at its deepest place: the leaf is named from the top (depth 1)
        // and from the end of a chain (depth 513).
        var objects: [BinaryPlist.Object] = [.array([1, 2], length: .inline), string("leaf")]
        for level in 0..<512 { objects.append(.array([level == 511 ? 1 : 3 + level], length: .inline)) }
        var shared = BinaryPlist(objects: objects, topObject: 0)
        shared.fitLayout()
        bothRefuse(BinaryPlistWriter.write(shared), "nesting: an object 513 levels below the top one", "a shared leaf")
    }

    @Test("a DOCTYPE's public identifier holds only the characters XML allows there (plistlib refuses the others; Foundation skips the DOCTYPE)")
    func publicIdentifier() {
        func document(_ id: String) -> [UInt8] {
            Array(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"\(id)\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n<true/>\n</plist>\n"
                    .utf8)
        }
        #expect(PlistFormat(.propertyList).validator.validate(document("-//Apple//DTD PLIST 1.0//EN")).isValid)
        #expect(PlistFormat(.propertyList).validator.validate(document("a-Z 0'()+,./:=?;!*#@$_%")).isValid)
        for bad in ["-//Apple//DTD PLIST 1.0//EN<", "~", "é", "a\tb"] {
            guard case .invalid(let violation) = PlistFormat(.propertyList).validator.validate(document(bad)) else {
                Issue.record("\(bad) was read")
                continue
            }
            #expect(violation.message.contains("is not allowed in a public identifier"), "\(violation)")
        }
    }
}

// MARK: - The allow-list

/// Every class of disagreement the sweep accepts, and why we differ: "we refuse" when the
/// validator refuses what a reference reads, "we read" the other way. A class the sweep meets
/// that is not here fails the test; Docs/Formats.md lists the same classes.
let plistAllowList: [String: String] = [
    // Stricter than Foundation on purpose.
    "we refuse: OpenStep text":
        "Foundation also reads the old OpenStep text format (a mangled file often is one: a bare word is a string); the validator reads binary and XML property lists, the formats apps write",
    "we refuse: XML text that is not UTF-8 XML characters":
        "CoreFoundation's XML parser takes any byte in text (invalid UTF-8, control characters); the reader wants well-formed XML, as plistlib (expat) and xmllint do",
    "we refuse: a bare '&' in XML text": "CoreFoundation keeps a '&' that starts no reference as it is; XML requires &amp; (plistlib refuses it too)",
    "we refuse: XML prolog syntax":
        "CoreFoundation skips the XML declaration, DOCTYPE and processing instructions up to the next '>' without parsing them; the reader checks their syntax, and that the DOCTYPE names plist",
    "we refuse: attributes of <plist>":
        "CoreFoundation never parses attributes (it skips to the next '>'); the reader wants well-formed attributes, and only version=\"1.0\" on <plist>",
    "we refuse: a value without <plist>":
        "CoreFoundation reads a bare <dict> or <array> as the document; the reader wants the <plist> root element Apple's DTD requires",
    "we refuse: base64 with stray characters":
        "CoreFoundation skips characters outside base64 in <data>; the reader refuses them (a flipped bit in <data> is corruption)",
    "we refuse: a broken object nothing names":
        "CoreFoundation (and plistlib) read only the objects reachable from the top object; the reader checks every object of the table (it reads them all, to write the file back byte for byte), so garbage no writer leaves is refused even where no reference leads to it",
    "we refuse: non-ASCII byte in an ASCII string":
        "CoreFoundation decodes an ASCII string (0x5_) whatever the bytes' high bit; no writer puts such bytes there (non-ASCII text is written as UTF-16), so the reader calls them corruption",
    "we refuse: unpaired UTF-16 surrogate":
        "CoreFoundation keeps a lone surrogate, which Swift's String turns into U+FFFD: the text an app reads is not the text in the file",
    "we refuse: non-string dictionary key":
        "CoreFoundation takes any scalar (a number, a date, data) as a key of a binary dictionary; a property list's keys are strings (XML can hold no other), and an app's [String: Any] cast fails on such a dictionary",
    "we refuse: header version other than 00":
        "CoreFoundation reads \"bplist0\" with any eighth byte; Apple writes bplist00, the only version the reader reads",
    "we refuse: references wider than 8 bytes":
        "CoreFoundation takes any objectRefSize of 1 or more (it only fails when a reference is read); the reader wants 1...8, the widths a reference can have",
    // plistlib.
    "we refuse: Foundation refuses it too":
        "plistlib checks less than CoreFoundation (the offset table's place and size, offsets into the header, cycles, fill bytes, text between XML elements, nesting beyond 512 levels); Foundation, the reader apps use, refuses these files too",
    "we read: a date outside Python's years 1...9999": "plistlib turns a date into a datetime, which holds the years 1 to 9999 only; Foundation reads any date",
    "we read: nesting deeper than Python's recursion limit":
        "plistlib's binary reader recurses once per level and stops at Python's recursion limit (about 500 levels); Foundation reads 512",
    "we read: XML that starts with neither <?xml nor <plist":
        "plistlib tells XML from binary by these first bytes only; Foundation (and the reader) take white space, a comment or a processing instruction first",
    "we read: a set":
        "plistlib reads no sets (marker 0xC_), which Foundation reads (on Linux it crashes bridging one to Swift: the sweep asks it about a copy with arrays in their place)",
]

// MARK: - Classes

/// The class of a disagreement with Foundation, named as in the allow-list.
func foundationClass(ours: Bool, message: String, foundation: FoundationVerdict, bytes: [UInt8]) -> String {
    guard !ours else { return "we read: unexplained" }
    if foundation.detail == "openStep" { return "we refuse: OpenStep text" }
    return "we refuse: " + (xmlFamily(message) ?? binaryFamily(message, bytes: bytes) ?? "unexplained")
}

/// The class of a disagreement with plistlib. Where Foundation agrees with us, plistlib is the
/// odd one out; where Foundation disagrees too, the class is Foundation's.
func plistlibClass(ours: Bool, message: String, plistlib: String, foundation: FoundationVerdict, bytes: [UInt8]) -> String {
    if ours {
        if plistlib.hasPrefix("RecursionError") { return "we read: nesting deeper than Python's recursion limit" }
        guard let plist = try? PropertyListFile.read(bytes).plist else { return "we read: unexplained" }
        let reachable = reachableIndices(plist)
        if reachable.contains(where: { if case .set = plist.objects[$0] { true } else { false } }) { return "we read: a set" }
        // datetime(2001, 1, 1) + timedelta(seconds=...) holds the years 1...9999.
        let outOfRange = reachable.contains { index in
            guard case .date(let t) = plist.objects[index] else { return false }
            return !(t >= -63_113_904_000 && t < 252_423_993_600)
        }
        if outOfRange { return "we read: a date outside Python's years 1...9999" }
        // plistlib.loads takes a file for XML only if it starts with "<?xml" or "<plist".
        if PropertyListFile.encoding(of: bytes) == .xml, !bytes.starts(with: Array("<?xml".utf8)), !bytes.starts(with: Array("<plist".utf8)) {
            return "we read: XML that starts with neither <?xml nor <plist"
        }
        return "we read: unexplained"
    }
    if !foundation.accepted { return "we refuse: Foundation refuses it too" }
    return foundationClass(ours: ours, message: message, foundation: foundation, bytes: bytes)
}

/// The family of a rule our readers broke, for the breakdown of a class.
func ruleFamily(_ message: String) -> String {
    let rule = message.hasPrefix("xml line ") ? String(message.drop { $0 != ":" }.dropFirst(2)) : message
    // Without numbers and quoted text, for counting.
    return String(rule.prefix { $0 != "\"" }.replacing(/0x[0-9A-Fa-f]+/, with: "0x#").replacing(/[0-9]+/, with: "#").prefix(90))
}

/// The family of an XML reader's message, nil for other messages.
func xmlFamily(_ message: String) -> String? {
    guard message.hasPrefix("xml line ") else { return nil }
    let rule = message.drop { $0 != ":" }.dropFirst(2)
    // The rule, without the quoted text it shows.
    let head = rule.prefix { $0 != "\"" }
    func has(_ words: String...) -> Bool { words.contains { head.contains($0) } }
    if rule.contains(/attribute .* (on|of) <plist>/) { return "attributes of <plist>" }
    if has("UTF-8", "control character", "is not an XML character", "byte-order mark") { return "XML text that is not UTF-8 XML characters" }
    if has("DOCTYPE", "XML declaration", "processing instruction") { return "XML prolog syntax" }
    if has("the root element is") { return "a value without <plist>" }
    if has("bad base64") { return "base64 with stray characters" }
    if has("'&' that starts no reference") { return "a bare '&' in XML text" }
    return "XML: " + rule.replacing(/[0-9]+/, with: "#")
}

/// The family of a binary reader's message, nil for other messages.
func binaryFamily(_ message: String, bytes: [UInt8]) -> String? {
    if let match = message.firstMatch(of: /^(objects|offsets)\[([0-9]+)\]/), let index = Int(match.2), let reachable = cfReachableObjects(bytes),
        !reachable.contains(index)
    {
        return "a broken object nothing names"
    }
    if message.contains("ASCII string has byte") { return "non-ASCII byte in an ASCII string" }
    if message.contains("unpaired surrogate") { return "unpaired UTF-16 surrogate" }
    if message.contains(/key objects\[[0-9]+\] is not a string/) { return "non-string dictionary key" }
    if message.hasPrefix("header: version") { return "header version other than 00" }
    if message.contains(/^trailer.objectRefSize: [0-9]+ is not 1...8/) { return "references wider than 8 bytes" }
    if message.hasPrefix("objects[") || message.hasPrefix("offsets[") || message.hasPrefix("trailer") || message.hasPrefix("file:") {
        return "binary: " + message.replacing(/[0-9]+/, with: "#")
    }
    return nil
}

/// The objects reachable from the top one, in our reading.
func reachableIndices(_ plist: BinaryPlist) -> Set<Int> {
    var seen: Set<Int> = [plist.topObject]
    var stack = [plist.topObject]
    while let index = stack.popLast() {
        for ref in plist.objects[index].references where seen.insert(ref).inserted { stack.append(ref) }
    }
    return seen
}

/// The objects CoreFoundation would visit in a binary file, read as leniently as it reads them:
/// from the top object, following the references of arrays, sets and dictionaries. Nil when the
/// trailer is one CoreFoundation refuses.
func cfReachableObjects(_ bytes: [UInt8]) -> Set<Int>? {
    guard bytes.count >= 41, bytes.starts(with: Array("bplist0".utf8)) else { return nil }
    func uint(_ at: Int, _ width: Int) -> UInt64 { (0..<width).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[at + $1]) } }
    let t = bytes.count - 32
    let offsetIntSize = Int(bytes[t + 6]), refSize = Int(bytes[t + 7])
    let count = uint(t + 8, 8), top = uint(t + 16, 8), table = uint(t + 24, 8)
    guard (1...8).contains(offsetIntSize), refSize >= 1, count >= 1, top < count, table >= 9, table < UInt64(t),
        count <= (UInt64(t) - table) / UInt64(offsetIntSize), table + count * UInt64(offsetIntSize) == UInt64(t)
    else { return nil }
    func offset(_ index: Int) -> Int? {
        let value = uint(Int(table) + index * offsetIntSize, offsetIntSize)
        return value >= 8 && value < table ? Int(value) : nil
    }
    var seen: Set<Int> = [Int(top)]
    var stack = [Int(top)]
    while let index = stack.popLast() {
        guard let at = offset(index), [0xA, 0xC, 0xD].contains(bytes[at] >> 4) else { continue }
        var n = Int(bytes[at] & 0x0F)
        var refs = at + 1
        if n == 0x0F {
            guard refs < Int(table), bytes[refs] >> 4 == 0x1 else { continue }
            let width = 1 << Int(bytes[refs] & 0x0F)
            guard width <= 8, refs + 1 + width <= Int(table) else { continue }
            n = Int(truncatingIfNeeded: uint(refs + 1, width))
            refs += 1 + width
        }
        let total = bytes[at] >> 4 == 0xD ? 2 * n : n
        guard n >= 0, refSize <= 8, total <= (Int(table) - refs) / refSize else { continue }
        for k in 0..<total {
            let ref = uint(refs + k * refSize, refSize)
            if ref < count, seen.insert(Int(ref)).inserted { stack.append(Int(ref)) }
        }
    }
    return seen
}

// MARK: - Foundation

/// Foundation's verdict on a file.
struct FoundationVerdict {
    var accepted: Bool
    /// The format Foundation read (binary, xml, openStep), or its error.
    var detail: String
    /// Whether Foundation read a copy with its sets turned into arrays (see ``setsAsArrays(_:)``).
    var setsAsArrays = false
}

func foundationVerdict(_ bytes: [UInt8]) -> FoundationVerdict {
    let (copy, changed) = setsAsArrays(bytes)
    var format = PropertyListSerialization.PropertyListFormat.binary
    do {
        _ = try PropertyListSerialization.propertyList(from: Data(copy), options: [], format: &format)
        let name = format == .binary ? "binary" : format == .xml ? "xml" : "openStep"
        return FoundationVerdict(accepted: true, detail: name, setsAsArrays: changed)
    } catch {
        return FoundationVerdict(accepted: false, detail: "\(error)", setsAsArrays: changed)
    }
}

/// On Linux, Foundation crashes bridging a binary plist's set (marker 0xC_) to Swift, after
/// CoreFoundation has read it. CoreFoundation reads a set exactly as an array (0xA_: the same
/// count and references, one code path), so the sweep asks Foundation about a copy whose
/// offset table names an array wherever it named a set: the same verdict, without the crash.
func setsAsArrays(_ bytes: [UInt8]) -> (bytes: [UInt8], changed: Bool) {
    guard bytes.count >= 40, bytes.starts(with: Array("bplist".utf8)) else { return (bytes, false) }
    let t = bytes.count - 32
    let offsetIntSize = Int(bytes[t + 6])
    guard (1...8).contains(offsetIntSize) else { return (bytes, false) }
    func uint(_ at: Int, _ width: Int) -> UInt64 { (0..<width).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[at + $1]) } }
    let count = uint(t + 8, 8)
    let table = uint(t + 24, 8)
    guard table < UInt64(t) else { return (bytes, false) }
    var copy = bytes
    var changed = false
    for i in 0..<Int(min(count, (UInt64(t) - table) / UInt64(offsetIntSize))) {
        let offset = uint(Int(table) + i * offsetIntSize, offsetIntSize)
        if offset < UInt64(bytes.count), copy[Int(offset)] >> 4 == 0xC {
            copy[Int(offset)] = 0xA0 | copy[Int(offset)] & 0x0F
            changed = true
        }
    }
    return (copy, changed)
}

// MARK: - Inputs

/// A random property list graph, deterministic for the generator's state (Foundation's writer
/// is not: it writes a Swift dictionary's keys in the process's hash order).
func randomGraph(_ rng: inout FuzzRNG) -> BinaryPlist {
    var objects: [BinaryPlist.Object] = []
    let pool = Array("abcxyz é✓水🧘 <&>]]")
    func add(depth: Int) -> Int {
        let index = objects.count
        objects.append(.null)
        switch rng.below(depth > 3 ? 6 : 8) {
        case 0: objects[index] = .naturalInteger(Int128(Int64(bitPattern: rng.next()) >> rng.below(64)))
        case 1: objects[index] = .real(Double(rng.below(1_000_000)) / 7 - 70_000, widthLog2: 3)
        case 2: objects[index] = .bool(rng.oneIn(2))
        case 3: objects[index] = .naturalString(String((0..<rng.below(24)).map { _ in pool[rng.below(pool.count)] }))
        case 4:
            let bytes = (0..<rng.below(40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            objects[index] = .data(bytes, length: .natural(bytes.count))
        case 5: objects[index] = .date(Double(rng.below(2_000_000_000)) - 1e9)
        case 6:
            let refs = (0..<rng.below(8)).map { _ in add(depth: depth + 1) }
            objects[index] = .array(refs, length: .natural(refs.count))
        default:
            var keys: [Int] = [], values: [Int] = []
            for key in 0..<rng.below(8) {
                objects.append(.naturalString("k\(key)-\(rng.below(100))"))
                keys.append(objects.count - 1)
                values.append(add(depth: depth + 1))
            }
            objects[index] = .dictionary(keys: keys, values: values, length: .natural(keys.count))
        }
        return index
    }
    var plist = BinaryPlist(objects: [], topObject: 0)
    plist.topObject = add(depth: 0)
    plist.objects = objects
    plist.fitLayout()
    return plist
}

/// The real files of the corpus, random graphs in both encodings, and mutations of them: the
/// package's structure-aware mutations (as a plist and as a keyed archive), byte-level havoc,
/// and a sample of the catalogue. Deterministic.
func plistSweepInputs(mutations: Int = 3_000) throws -> [SweepInput] {
    var inputs: [SweepInput] = []
    var seeds: [SweepInput] = []
    for folder in ["plists", "plists-malformed", "keyed-archives"] {
        let dir = corpus.appendingPathComponent(folder)
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() {
            let input = SweepInput(name: "\(folder)/\(name)", bytes: [UInt8](try Data(contentsOf: dir.appendingPathComponent(name))))
            inputs.append(input)
            if folder != "plists-malformed", (try? PropertyListFile.read(input.bytes)) != nil { seeds.append(input) }
        }
    }
    var rng = FuzzRNG(seed: 2026)
    for index in 0..<120 {
        let plist = randomGraph(&rng)
        let binary = SweepInput(name: "graph-\(index).binary", bytes: BinaryPlistWriter.write(plist))
        let xml = SweepInput(name: "graph-\(index).xml", bytes: try XMLPlistWriter.write(plist))
        inputs += [binary, xml]
        if index < 40 { seeds += [binary, xml] }
    }
    let mutators = [PlistFormat(.propertyList).plistMutator, PlistFormat(.keyedArchive).plistMutator]
    for index in 0..<mutations {
        inputs.append(.mutation(index, of: seeds, mutators: mutators, using: &rng))
    }
    // Every fourth catalogue entry of a dozen seeds (trailer lies, offsets into objects, lying
    // lengths, the nesting ladder).
    for seed in seeds.prefix(12) {
        let catalogue = PlistFormat(.keyedArchive).plistMutator.catalogue(of: seed.bytes, context: CatalogueContext(maxInputLength: 1 << 20))
        for (index, entry) in catalogue.enumerated() where index % 4 == 0 {
            inputs.append(SweepInput(name: "catalogue of \(seed.name): \(entry.name)", bytes: entry.bytes))
        }
    }
    return inputs
}

// MARK: - Keyed archives against NSKeyedUnarchiver

// The keyed-archive validator (`PlistFormat(.keyedArchive)`) against Foundation's
// NSKeyedUnarchiver, through `plist-harness unarchive` (Examples/PlistHarness): one process per
// input, since NSKeyedUnarchiver traps on Linux on some malformed archives (a death by signal
// is Foundation's refusal). Inputs: archives of Foundation's own classes that NSKeyedArchiver
// wrote (`plist-harness archive`, binary and XML), the corpus's keyed archives, and mutations
// of those Foundation decodes.
//
//     swift test --filter ValidatorSweep

/// The harness built with the package, beside the test bundle (as the CLI tests find theirs).
let plistHarness: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
    // On macOS the test runner lives inside an .xctest bundle.
    while url.path.contains(".xctest") { url.deleteLastPathComponent() }
    return url.appendingPathComponent("plist-harness").path
}()

@Suite("Validator sweep: keyed archives against Foundation's NSKeyedUnarchiver")
struct KeyedArchiveValidatorSweepTests {
    @Test(
        "the keyed-archive validator accepts what NSKeyedUnarchiver decodes, except for the documented classes",
        .enabled(if: FileManager.default.isExecutableFile(atPath: plistHarness), "plist-harness is not built (swift build --product plist-harness)"))
    func sweep() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keyed-archive-sweep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputs = try keyedArchiveSweepInputs(folder: folder)
        let paths = try SweepInput.write(inputs, into: folder, prefix: "input-", extension: "plist")
        // Our verdicts on a thread of their own while the harness processes run (they leave
        // the cores half idle, waiting for process starts).
        let ourVerdicts = OurVerdicts(inputs.map(\.bytes))
        let validating = DispatchGroup()
        DispatchQueue.global().async(group: validating) { ourVerdicts.compute() }
        let theirs = unarchiveAll(paths)
        validating.wait()
        var tally = SweepTally(format: "keyed-archive", inputs: inputs.count, allowed: keyedArchiveAllowList)
        for (index, (input, foundation)) in zip(inputs, theirs).enumerated() {
            let (ours, message, onlyFoundationRule) = ourVerdicts.results[index]
            tally.count(ours ? "valid" : "invalid")
            if case .crashed = foundation.outcome { tally.note("NSKeyedUnarchiver", "crashed (\(foundation.family))") }
            if let rule = onlyFoundationRule {
                tally.note("NSKeyedUnarchiver", "refused by foundationProblem only: Foundation \(foundation.outcome): \(rule)")
            }
            if case .timeout = foundation.outcome {
                tally.skip("NSKeyedUnarchiver", "no verdict within \(Int(unarchiveTimeout)) s")
                continue
            }
            tally.note(
                "NSKeyedUnarchiver", ours ? (foundation.decoded ? "both read" : "only we read") : (foundation.decoded ? "only Foundation reads" : "both refuse")
            )
            if foundation.decoded == ours {
                tally.agree("NSKeyedUnarchiver")
            } else {
                let name = unarchiverClass(ours: ours, message: message, foundation: foundation, bytes: input.bytes)
                tally.disagree(
                    "NSKeyedUnarchiver", name, family: ours ? foundation.family : ruleFamily(message),
                    "\(input.name): ours: \(message.prefix(160)) | NSKeyedUnarchiver: \(foundation.detail.prefix(200))", bytes: input.bytes)
            }
        }
        tally.report(seconds: (clock.now - start).sweepSeconds)
        #expect(tally.agreements["NSKeyedUnarchiver", default: 0] > inputs.count * 3 / 4)
    }
}

/// The keyed-archive validator's verdicts (valid, its message), and, for counting what the
/// rules of foundationProblem(in:) (the validator's since this sweep) catch beyond
/// problem(in:), the family of the rule when only they refuse the file.
final class OurVerdicts: @unchecked Sendable {
    let inputs: [[UInt8]]
    /// Written by compute() alone, read after it returns.
    var results: [(valid: Bool, message: String, onlyFoundationRule: String?)] = []

    init(_ inputs: [[UInt8]]) { self.inputs = inputs }

    func compute() {
        let validator = PlistFormat(.keyedArchive).validator
        results = inputs.map { bytes in
            let verdict = validator.validate(bytes)
            var message = ""
            if case .invalid(let violation) = verdict { message = violation.description }
            var rule: String?
            if !verdict.isValid, let plist = try? PropertyListFile.read(bytes).plist, KeyedArchiveChecker.problem(in: plist) == nil,
                let problem = KeyedArchiveChecker.foundationProblem(in: plist)
            {
                rule = archiveFamily(problem, bytes: bytes) ?? problem
            }
            return (verdict.isValid, message, rule)
        }
    }
}

/// The disagreements with NSKeyedUnarchiver, each with its reason (Docs/Formats.md lists them
/// with their counts): where the validator reads what Foundation does not, it cannot know
/// what Foundation needs; where it refuses what Foundation reads, it is stricter on purpose.
let keyedArchiveAllowList: [String: String] = plistAllowList.filter { $0.key.hasPrefix("we refuse: ") && $0.key != "we refuse: Foundation refuses it too" }
    .merging([
        "we read: a class Foundation does not have (an error)":
            "the validator checks the archive's structure, not which classes the reading process has (an app's own classes are unknown to any other process); NSKeyedUnarchiver refuses a class it cannot find",
        "we read: a class Foundation does not have (it crashes)":
            "as above, and Foundation on Linux traps on it where the unknown object is an NSDictionary's key or value (it builds the dictionary from lists of unequal lengths) or a field a decoder force-unwraps",
        "we read: no root object in $top":
            "unarchiveTopLevelObjectWithData decodes the key root only; an archive's top-level keys are the app's (encode(_:forKey:) on the archiver), so the validator takes any",
        "we read: a field another Foundation class needs (an error)":
            "the validator knows the fields of NSArray, NSSet, NSDictionary and NSDate; NSURL, NSValue, NSRegularExpression and the other classes' decoders fail on fields it does not check",
        "we read: a field another Foundation class needs (it crashes)":
            "as above, where the object that fails to decode is an NSDictionary's key or value (Foundation on Linux traps) or its decoder traps (an NSValue's old-style array of a count of -1)",
        "we refuse: $objects[0] other than $null":
            "NSKeyedArchiver always writes $null first; NSKeyedUnarchiver takes UID 0 as nil without looking at the entry",
        "we refuse: a UID Foundation never follows":
            "the checker resolves every UID of every object (a class description's $classes, a field no decoder reads); NSKeyedUnarchiver only those a decoder asks for",
        "we refuse: an $objects entry that is a UID":
            "NSKeyedArchiver never writes one; NSKeyedUnarchiver hands the app the UID object itself (_NSKeyedArchiverUID) where the object belongs, in range or not",
        "we refuse: an object whose $class is not a UID":
            "NSKeyedUnarchiver takes such a dictionary for a plain value and hands the app the archive's raw dictionary ($class, NS.keys, UIDs) where the object belongs",
        "we refuse: an archived object nothing decodes":
            "the checker checks every $objects entry; NSKeyedUnarchiver decodes only what the root reaches",
        "we refuse: a $null element of an array or set":
            "Foundation drops a nil element without a word: the app reads a shorter array than was written",
        "we refuse: a $null dictionary value":
            "Foundation drops the nil value and builds the dictionary reading past the end of the values it kept: on Linux mostly a crash (SIGSEGV), else the last key gets whatever lies there",
        "we refuse: a $null dictionary key":
            "Foundation drops a nil key and pairs the keys after it with the wrong values (ka, kb, kc -> va, vb, vc read as kb=va, kc=vb)",
        "we refuse: a field of NSArray, NSDictionary or NSDate missing or of another type":
            "Foundation decodes a missing or mistyped NS.objects, NS.keys or NS.time as empty or 0 (an empty array, the reference date) without a word",
        "we refuse: an inline value NSKeyedArchiver never writes":
            "an archived object's fields are UIDs, numbers, booleans, data or arrays of UIDs; Foundation reads other values where no decoder asks for them, and traps where one does",
        "we refuse: a class description without $classes":
            "NSKeyedArchiver always writes a class's ancestry in $classes; Foundation on Linux reads $classname only",
        "we refuse: a set": "NSKeyedArchiver never writes a set; Foundation on Linux crashes bridging one it reads, and passes one no decoder reads",
        "we refuse: a 16-byte integer": "NSKeyedArchiver never writes one; Foundation hands a decoder its low 64 bits",
        "we refuse: a key written twice": "Foundation keeps one of the values without a word",
    ]) { a, _ in a }

/// The classes whose fields ``KeyedArchiveChecker/foundationProblem(in:)`` checks, with the
/// scalars' (their decoders read no fields it could break).
let checkedClasses: Set<String> = [
    "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSDictionary", "NSMutableDictionary", "NSDate", "NSString", "NSMutableString", "NSNumber",
    "NSData", "NSMutableData", "NSObject",
]

/// The class of a disagreement with NSKeyedUnarchiver, named as in the allow-list.
func unarchiverClass(ours: Bool, message: String, foundation: UnarchiverVerdict, bytes: [UInt8]) -> String {
    guard ours else {
        return "we refuse: " + (archiveFamily(message, bytes: bytes) ?? xmlFamily(message) ?? binaryFamily(message, bytes: bytes) ?? "unexplained")
    }
    let outcome = foundation.outcome == .crashed ? "it crashes" : "an error"
    guard let plist = try? PropertyListFile.read(bytes).plist, let archive = ArchiveGraph(plist) else { return "we read: unexplained" }
    let names = KeyedArchiveChecker.classNames(in: plist)
    if names.contains(where: { NSClassFromString($0) == nil }) { return "we read: a class Foundation does not have (\(outcome))" }
    if archive.top["root"] == nil { return "we read: no root object in $top" }
    if !names.isSubset(of: checkedClasses) { return "we read: a field another Foundation class needs (\(outcome))" }
    return "we read: unexplained"
}

/// The family of a keyed-archive rule the validator found broken, nil for the reader's rules.
func archiveFamily(_ message: String, bytes: [UInt8]) -> String? {
    if message.contains("an integer of 16 bytes") { return "a 16-byte integer" }
    if message.contains(/the key ".*" is there twice/) { return "a key written twice" }
    if message.contains("a set, which no keyed archive holds") { return "a set" }
    if message.hasPrefix("$objects[0]: not $null") { return "$objects[0] other than $null" }
    guard let match = message.firstMatch(of: /^\$objects\[([0-9]+)\]/) else {
        return message.hasPrefix("$") || message.hasPrefix("top:") ? "archive: " + message.replacing(/[0-9]+/, with: "#") : nil
    }
    if let index = Int(match.1), let plist = try? PropertyListFile.read(bytes).plist, let archive = ArchiveGraph(plist),
        !archive.reachable.contains(index)
    {
        return "an archived object nothing decodes"
    }
    if let index = Int(match.1), let plist = try? PropertyListFile.read(bytes).plist, let archive = ArchiveGraph(plist), index < archive.table.count {
        let entry = plist.objects[archive.table[index]]
        if case .uid = entry { return "an $objects entry that is a UID" }
        if message.contains("$class: not a UID in range"), case .dictionary(let keys, let values, _) = entry,
            let classRef = zip(keys, values).first(where: { KeyedArchiveChecker.string(plist.objects[$0.0]) == "$class" })?.1
        {
            if case .uid = plist.objects[classRef] {} else { return "an object whose $class is not a UID" }
        }
    }
    if message.contains(/UID [0-9]+ is not below/) || message.contains("$class: not a UID in range") { return "a UID Foundation never follows" }
    if message.contains("an element is $null") { return "a $null element of an array or set" }
    if message.contains("a key is $null") { return "a $null dictionary key" }
    if message.contains("a value is $null") { return "a $null dictionary value" }
    if message.contains("NS.objects: missing or not an array") || message.contains("NS.keys and NS.objects missing")
        || message.contains("NS.time: missing or not a finite real")
    {
        return "a field of NSArray, NSDictionary or NSDate missing or of another type"
    }
    if message.contains("an inline value NSKeyedArchiver never writes") || message.contains("an inline array of something else than UIDs") {
        return "an inline value NSKeyedArchiver never writes"
    }
    if message.contains("$classes: missing or not an array of strings") { return "a class description without $classes" }
    return "archive: " + message.replacing(/"[^"]*"/, with: "\"…\"").replacing(/[0-9]+/, with: "#")
}

/// A keyed archive's `$objects` and `$top`, and the entries NSKeyedUnarchiver can reach from
/// `$top`'s root (following UIDs, in the entries and their inline arrays).
struct ArchiveGraph {
    var table: [Int]
    var top: [String: Int]
    var reachable: Set<Int> = []

    init?(_ plist: BinaryPlist) {
        let objects = plist.objects
        guard case .dictionary(let keys, let values, _) = objects[plist.topObject] else { return nil }
        let fields = Dictionary(zip(keys.map { KeyedArchiveChecker.string(objects[$0]) ?? "" }, values), uniquingKeysWith: { a, _ in a })
        guard let tableRef = fields["$objects"], case .array(let table, _) = objects[tableRef], let topRef = fields["$top"],
            case .dictionary(let topKeys, let topValues, _) = objects[topRef]
        else { return nil }
        self.table = table
        top = Dictionary(zip(topKeys.map { KeyedArchiveChecker.string(objects[$0]) ?? "" }, topValues), uniquingKeysWith: { a, _ in a })
        /// The UIDs below an object, through plain arrays and dictionaries.
        func uids(_ ref: Int, _ seen: inout Set<Int>) -> [Int] {
            guard seen.insert(ref).inserted else { return [] }
            if case .uid(let value, _) = objects[ref] { return value < UInt64(table.count) ? [Int(value)] : [] }
            return objects[ref].references.flatMap { uids($0, &seen) }
        }
        var seen: Set<Int> = []
        var stack = top["root"].map { uids($0, &seen) } ?? []
        while let index = stack.popLast() {
            guard reachable.insert(index).inserted else { continue }
            var below: Set<Int> = []
            stack += uids(table[index], &below)
        }
    }
}

// MARK: - NSKeyedUnarchiver, a process per input

/// Seconds a harness process gets before the sweep calls it hung.
let unarchiveTimeout = 20.0

/// What `plist-harness unarchive` made of a file.
struct UnarchiverVerdict {
    enum Outcome { case decoded, error, crashed, timeout }
    var outcome: Outcome
    /// The decoded object's type, Foundation's message (the line it logs, or the fatal error),
    /// or how the process died.
    var detail: String
    var decoded: Bool { outcome == .decoded }

    /// The message without the data it quotes and without numbers (but the signal's), for
    /// counting.
    var family: String {
        let signal = detail.firstMatch(of: /^(signal|exit) [0-9]+:\s/).map { String($0.output.0) } ?? ""
        let message = detail.dropFirst(signal.count).replacing(/Optional\("([^"]*)"\)/, with: { $0.1 }).replacing(/\[[^\]]*\]+/, with: "[…]")
        return signal + String(message.replacing(/0x[0-9a-fA-F]+/, with: "0x#").replacing(/[0-9]+/, with: "#").prefix(120))
    }
}

/// Runs `plist-harness unarchive` on each path, one process each, on every core; in order.
func unarchiveAll(_ paths: [String]) -> [UnarchiverVerdict] {
    let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
    let results = LockedResults(count: paths.count)
    DispatchQueue.concurrentPerform(iterations: workers) { worker in
        for index in stride(from: worker, to: paths.count, by: workers) { results.set(index, unarchive(paths[index])) }
    }
    return results.all
}

/// The workers' verdicts, each written once, by index.
final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var verdicts: [UnarchiverVerdict]
    init(count: Int) { verdicts = Array(repeating: UnarchiverVerdict(outcome: .timeout, detail: "not run"), count: count) }
    func set(_ index: Int, _ verdict: UnarchiverVerdict) { lock.withLock { verdicts[index] = verdict } }
    var all: [UnarchiverVerdict] { lock.withLock { verdicts } }
}

func unarchive(_ path: String) -> UnarchiverVerdict {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: plistHarness)
    process.arguments = ["unarchive", path]
    // One pipe for both streams, read to its end before the wait: neither can fill up.
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    // No backtrace for a trap: it would take longer than the run.
    process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
    do { try process.run() } catch { return UnarchiverVerdict(outcome: .crashed, detail: "did not start: \(error)") }
    let timedOut = ManagedAtomicFlag()
    let timer = DispatchWorkItem {
        timedOut.set()
        process.terminate()
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + unarchiveTimeout, execute: timer)
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    timer.cancel()
    if timedOut.isSet { return UnarchiverVerdict(outcome: .timeout, detail: "timeout") }
    let lines = output.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    // Foundation logs why it gave up ("*** NSKeyedUnarchiver.init: Invalid class ..."); a trap
    // says "Fatal error: ...".
    func after(_ marker: String, keeping: Bool) -> String? {
        for line in lines { if let range = line.firstRange(of: marker) { return String(line[keeping ? range.lowerBound... : range.upperBound...]) } }
        return nil
    }
    let logged = after("*** ", keeping: false), fatal = after("Fatal error: ", keeping: true)
    switch (process.terminationReason, process.terminationStatus) {
    case (.exit, 0): return UnarchiverVerdict(outcome: .decoded, detail: lines.last ?? "")
    case (.exit, 1) where lines.contains("reason: corrupt"):
        let error = lines.drop { $0 != "reason: corrupt" }.dropFirst().joined(separator: " ")
        return UnarchiverVerdict(outcome: .error, detail: logged ?? error)
    case (.exit, let status): return UnarchiverVerdict(outcome: .crashed, detail: "exit \(status): \(fatal ?? logged ?? lines.last ?? "")")
    case (.uncaughtSignal, let signal): return UnarchiverVerdict(outcome: .crashed, detail: "signal \(signal): \(fatal ?? logged ?? "")")
    @unknown default: return UnarchiverVerdict(outcome: .crashed, detail: "terminated \(process.terminationStatus)")
    }
}

/// A flag the timer sets and the waiting thread reads.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

// MARK: - Keyed-archive inputs

/// NSKeyedArchiver's archives of random Foundation graphs (`plist-harness archive`, with
/// deterministic hashing so a seed gives the same bytes), the corpus's keyed archives, and
/// mutations of those NSKeyedUnarchiver decodes: the keyed-archive mutator, byte-level havoc,
/// both, and a sample of the catalogue. Deterministic.
func keyedArchiveSweepInputs(folder: URL, graphs: Int = 60, mutations: Int = 2_600) throws -> [SweepInput] {
    let made = folder.appendingPathComponent("archived")
    try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: plistHarness)
    process.arguments = ["archive", "2026", "\(graphs)", made.path]
    process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_DETERMINISTIC_HASHING": "1"]) { $1 }
    try process.run()
    process.waitUntilExit()
    try #require(process.terminationStatus == 0, "plist-harness archive failed")
    var inputs: [SweepInput] = []
    for index in 0..<graphs {
        for encoding in ["binary", "xml"] {
            let bytes = [UInt8](try Data(contentsOf: made.appendingPathComponent("\(index).\(encoding).plist")))
            inputs.append(SweepInput(name: "archived-\(index).\(encoding)", bytes: bytes))
        }
    }
    var corpusFiles: [SweepInput] = []
    let dir = corpus.appendingPathComponent("keyed-archives")
    for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() {
        corpusFiles.append(SweepInput(name: "keyed-archives/\(name)", bytes: [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))))
    }
    // The seeds: what NSKeyedUnarchiver decodes as written (the corpus's archives of app classes,
    // such as bpylist2's crap.Foo, are swept as they are, not mutated).
    let seedFolder = folder.appendingPathComponent("corpus")
    try FileManager.default.createDirectory(at: seedFolder, withIntermediateDirectories: true)
    var corpusPaths: [String] = []
    for (index, input) in corpusFiles.enumerated() {
        let path = seedFolder.appendingPathComponent("\(index).plist").path
        try Data(input.bytes).write(to: URL(fileURLWithPath: path))
        corpusPaths.append(path)
    }
    let decodable = zip(corpusFiles, unarchiveAll(corpusPaths)).filter { $0.1.decoded }.map(\.0)
    let seeds = inputs + decodable
    inputs += corpusFiles
    var rng = FuzzRNG(seed: 2026)
    let mutator = PlistFormat(.keyedArchive).plistMutator
    for index in 0..<mutations {
        inputs.append(.mutation(index, of: seeds, mutators: [mutator], using: &rng))
    }
    // Every eighth catalogue entry of a few seeds of each kind.
    for seed in seeds.prefix(6) + decodable.prefix(4) {
        let catalogue = mutator.catalogue(of: seed.bytes, context: CatalogueContext(maxInputLength: 1 << 20))
        for (index, entry) in catalogue.enumerated() where index % 8 == 0 {
            inputs.append(SweepInput(name: "catalogue of \(seed.name): \(entry.name)", bytes: entry.bytes))
        }
    }
    return inputs
}
