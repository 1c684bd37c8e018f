import CorruptFuzzCore
import CorruptFuzzPlist
import Foundation
import Testing

/// The files in a Corpus folder that are not binary plists (the XML ones, and anything else).
func nonBinaryFiles(_ folder: String) throws -> [(String, [UInt8])] {
    let dir = corpus.appendingPathComponent(folder)
    return try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted().compactMap { name in
        let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
        return bytes.starts(with: Array("bplist".utf8)) ? nil : (name, bytes)
    }
}

/// A canonical text of our graph that, unlike `canonical`, keeps UID values and tells ASCII
/// from UTF-16 strings: for comparing our own readings of the same file in two encodings.
func exactCanonical(_ plist: BinaryPlist, _ index: Int? = nil) -> String {
    let object = plist.objects[index ?? plist.topObject]
    switch object {
    case .dictionary(let keys, let values, _):
        let pairs = zip(keys, values).map { (key: plist.objects[$0.0].stringValue ?? "?", value: exactCanonical(plist, $0.1)) }
        return "{" + pairs.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
    case .array(let refs, _): return "[" + refs.map { exactCanonical(plist, $0) }.joined(separator: ",") + "]"
    case .set(let refs, _): return "set[" + refs.map { exactCanonical(plist, $0) }.joined(separator: ",") + "]"
    case .uid(let v, _): return "uid:\(v)"
    case .ascii, .utf16: return "s:\(object.stringValue!)"
    case .integer(let v, _): return "i:\(v)"
    case .real(let d, _): return "r:\(d)"
    default: return canonical(plist, index ?? plist.topObject)
    }
}

/// A document around `body` in Foundation's header.
func xmlDocument(_ body: String) -> [UInt8] {
    Array((XMLPlistWriter.header + body + "\n</plist>\n").utf8)
}

/// Files of the corpus that Foundation reads but did not write: ours reads them to the same
/// values and writes them back in Foundation's style, which is not their bytes. The test fails
/// when one of them does round-trip, so the list stays true.
let notFoundationStyle: [String: String] = [
    "goplist-xml_unusual_s01.plist": "no XML declaration or DOCTYPE, four-space indentation, © written as &#169;",
    "rustplist-xml.plist": "an integer in hex (0xDEADBEEF), base64 wrapped at 10 characters and indented two levels",
]

@Suite("XML property lists: corrupt-fuzz's own layer against Foundation")
struct XMLPlistTests {
    @Test("every XML plist and archive of the corpus reads as Foundation reads it and writes back")
    func corpusAgreesWithFoundation() throws {
        let files = try nonBinaryFiles("plists") + nonBinaryFiles("keyed-archives")
        #expect(files.count >= 8)
        var exact: [String] = []
        for (name, bytes) in files {
            #expect(PropertyListFile.encoding(of: bytes) == .xml, "\(name)")
            guard let theirs = try? PropertyListSerialization.propertyList(from: Data(bytes), format: nil) else {
                #expect(throws: Violation.self, "\(name): Foundation rejects it, so must we") { try XMLPlistReader.read(bytes) }
                continue
            }
            let plist = try XMLPlistReader.read(bytes)
            #expect(canonical(plist) == canonical(theirs), "\(name)")
            let written = try XMLPlistWriter.write(plist)
            if let reason = notFoundationStyle[name] {
                #expect(written != bytes, "\(name) round-trips now (listed as not: \(reason))")
            } else {
                #expect(written == bytes, "\(name) does not write back byte for byte")
                if written == bytes { exact.append(name) }
            }
            // What we write reads back to the same graph, and Foundation reads it the same.
            #expect(exactCanonical(try XMLPlistReader.read(written)) == exactCanonical(plist), "\(name)")
            #expect(canonical(try PropertyListSerialization.propertyList(from: Data(written), format: nil)) == canonical(theirs), "\(name)")
            // The file as Foundation writes it round-trips byte for byte.
            let foundationBytes = [UInt8](try PropertyListSerialization.data(fromPropertyList: theirs, format: .xml, options: 0))
            let again = try XMLPlistReader.read(foundationBytes)
            #expect(canonical(again) == canonical(theirs), "\(name) as Foundation writes it")
            #expect(try XMLPlistWriter.write(again) == foundationBytes, "\(name) as Foundation writes it")
        }
        #expect(exact.count >= files.count - notFoundationStyle.count)
        print("XML corpus files written back byte for byte: \(exact.count) of \(files.count)")
    }

    @Test("every XML file of the malformed corpus is rejected with what and where")
    func malformedCorpus() throws {
        // The rule each file breaks, as our message says it.
        let expected: [String: String] = [
            "goplist-xml_unusual_s05.plist": "markup \"<!test></key>",
            // Foundation reads this one: CoreFoundation's parser never parses attributes, it
            // skips from the tag name to the next '>', which here is inside the quoted value.
            "goplist-xml_unusual_s07.plist": "'<' inside the value of attribute Q of <plist>",
            // Foundation reads this one too: it checks that a DOCTYPE starts with "DOCTYPE" and
            // skips to the next '>'; the name (test, not plist) and the open quote go unseen.
            "goplist-xml_unusual_s09.plist": "DOCTYPE names test, not plist",
            "rustplist-xml_error.plist": "malformed end tag </ke",
        ]
        let files = try nonBinaryFiles("plists-malformed")
        var foundationReads: Set<String> = []
        var seen: Set<String> = []
        for (name, bytes) in files {
            if (try? PropertyListSerialization.propertyList(from: Data(bytes), format: nil)) != nil { foundationReads.insert(name) }
            guard PropertyListFile.encoding(of: bytes) == .xml else {
                // Not XML either (biplist-bogus_file.plist): neither reader's.
                #expect(throws: Violation.self, "\(name)") { try PropertyListFile.read(bytes) }
                continue
            }
            seen.insert(name)
            do {
                _ = try XMLPlistReader.read(bytes)
                Issue.record("\(name) was read")
            } catch {
                print("\(name): \(error.message)")
                #expect(error.message.hasPrefix("xml line "), "\(name): \(error.message)")
                #expect(error.message.contains(expected[name] ?? "(no expectation for this file)"), "\(name): \(error.message)")
            }
        }
        #expect(seen == Set(expected.keys))
        // Where Foundation is more lenient, the comments above say why.
        #expect(foundationReads.isSubset(of: ["goplist-xml_unusual_s07.plist", "goplist-xml_unusual_s09.plist"]), "\(foundationReads.sorted())")
    }

    @Test(
        "each rule of the reader has a message that says what broke and where",
        arguments: [
            ("<foo/>", "line 4, column 1: unknown element <foo>"),
            ("<integer>12a</integer>", "<integer> \"12a\" is not an integer"),
            ("<integer> 12</integer>", "<integer> \" 12\" is not an integer"),
            ("<integer>18446744073709551616</integer>", "is not an integer in -2^63...2^64-1"),
            ("<integer>-9223372036854775809</integer>", "is not an integer"),
            ("<real>1.2.3</real>", "<real> \"1.2.3\" is not a real number"),
            ("<data>AB$C</data>", "<data>: bad base64: character \"$\" is not base64"),
            ("<data>ABC</data>", "bad base64: 3 characters and 0 '=' are not whole groups of four"),
            ("<data>AB==CD==</data>", "characters after '=' padding"),
            ("<date>2024-02-30T00:00:00Z</date>", "<date> \"2024-02-30T00:00:00Z\" is not a date"),
            ("<date>2024-01-01 00:00:00</date>", "is not a date written yyyy-MM-ddTHH:mm:ssZ"),
            ("<array>\n\t<string>a</string>\n</dict>", "line 6, column 1: </dict> closes <array> (opened at line 4, column 1): unbalanced tags"),
            ("<array><string>a</array>", "</array> closes <string>"),
            ("<array>", "</plist> closes <array> (opened at line 4, column 1): unbalanced tags"),
            ("<dict><key>a</key></dict>", "key \"a\" is not followed by a value"),
            ("<dict><string>a</string></dict>", "<string> in <dict> where a <key> was expected: a value without a key"),
            ("<array>hello</array>", "text outside elements: \"hello</array>"),
            ("<string>&foo;</string>", "unknown entity &foo;"),
            ("<string>a & b</string>", "'&' that starts no reference"),
            ("<string>&#0;</string>", "&#0; is not an XML character"),
            ("<string>&#xD800;</string>", "&#xD800; is not an XML character"),
            ("<string>&#12a;</string>", "malformed character reference &#12a;"),
            ("<string>a]]>b</string>", "']]>' in text"),
            ("<string>a<!-- c --></string>", "comment inside <string>"),
            ("<string>a<b/></string>", "markup \"<b/></string>"),
            ("<dict><key>a</key><true/><key>a</key><false/></dict>", "duplicate key \"a\""),
            ("<true/><false/>", "a second value <false> in <plist>"),
            ("<string x=\"1\">a</string>", "attribute x on <string>: only <plist> takes attributes"),
            ("<true>yes</true>", "<true> holds content"),
            ("<integer/>", "empty <integer/>"),
            ("<key>a</key>", "<key> outside a <dict>"),
            ("<plist/>", "<plist> inside <plist>"),
            ("<dict><key>CF$UID</key><string>1</string></dict>", "CF$UID holds something other than an <integer>"),
            ("<dict><key>CF$UID</key><integer>-1</integer></dict>", "CF$UID -1 is not a UID"),
            ("<string>\u{1}</string>", "control character 0x01 is not an XML character"),
            ("<string>a</string><!-- never closed", "comment not closed with '-->'"),
            ("<string>a</string", "malformed end tag </string"),
            ("<?xml version=\"1.0\"?><true/>", "an XML declaration is only allowed at the very start"),
        ])
    func rules(body: String, message: String) {
        let bytes = xmlDocument(body)
        #expect {
            try XMLPlistReader.read(bytes)
        } throws: { error in
            let text = (error as? Violation)?.message ?? "\(error)"
            return text.hasPrefix("xml line ") && text.contains(message)
        }
    }

    @Test(
        "the prolog and the bytes are checked as strictly",
        arguments: [
            ("<plist version=\"1.0\"><true/></plist>junk", "content after </plist>"),
            ("<dict/>", "the root element is <dict>, not <plist>"),
            ("<plist version=\"2.0\"><true/></plist>", "only version=\"1.0\" is read"),
            ("<plist version=\"1.0\"></plist>", "<plist> holds no value"),
            ("<?xml version=\"1.0\" encoding=\"UTF-16\"?><plist><true/></plist>", "only UTF-8 is read"),
            ("<?xml encoding=\"UTF-8\"?><plist><true/></plist>", "encoding must follow version"),
            // The classic external-entity attack: the internal subset is refused before anything
            // in it is looked at, so nothing is ever fetched or expanded.
            ("<!DOCTYPE plist [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><plist><string>&x;</string></plist>", "internal DTD subset is not read"),
            ("<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\"><plist><true/></plist>", "PUBLIC needs a public and a system identifier"),
            ("<!DOCTYPE plist><!DOCTYPE plist><plist><true/></plist>", "a second DOCTYPE"),
            ("<!-- a -- b --><plist><true/></plist>", "'--' inside a comment"),
            ("hello", "text outside elements"),
            ("  ", "no <plist> element"),
            ("<plist><array>", "<array> (opened at line 1, column 8) is never closed: unbalanced tags"),
            ("<plist><string", "the <string> tag is not closed before the end of the file"),
            ("<plist><string>abc", "<string> is never closed: unbalanced tags"),
            ("\u{FEFF}<plist><true/></plist>", "UTF-8 byte-order mark"),
        ])
    func prolog(document: String, message: String) {
        #expect {
            try XMLPlistReader.read(Array(document.utf8))
        } throws: { error in
            ((error as? Violation)?.message ?? "").contains(message)
        }
    }

    @Test("bytes that are not UTF-8 are rejected where they are")
    func badUTF8() {
        for (bytes, message) in [
            (Array("<plist><string>a".utf8) + [0xFF] + Array("</string></plist>".utf8), "line 1, column 17: byte 0xFF is not UTF-8"),
            (Array("<plist><string>".utf8) + [0xC0, 0x80] + Array("</string></plist>".utf8), "byte 0xC0 is not UTF-8"),
            (Array("<plist><string>".utf8) + [0xED, 0xA0, 0x80] + Array("</string></plist>".utf8), "surrogate"),
            (Array("<plist><string>".utf8) + [0xE2, 0x82], "cut off by the end of the file"),
            ([0xFE, 0xFF, 0, 0x3C], "UTF-16 byte-order mark"),
        ] {
            #expect(PropertyListFile.encoding(of: bytes) == .xml)
            #expect { try XMLPlistReader.read(bytes) } throws: { ($0 as? Violation)?.message.contains(message) == true }
        }
    }

    @Test("what a plist may legally hold is read as Foundation reads it")
    func legalVariety() throws {
        let documents = [
            // No declaration or DOCTYPE, comments and a processing instruction between values,
            // CDATA and references in text, empty-element strings, a non-empty <true></true>.
            "<plist version='1.0'>\n<!-- c --><?pi data?>\n<dict>\n  <key>a&amp;b</key> <string>x<![CDATA[<&>]]>y&#x1F9D8;&#233;&quot;&apos;&lt;&gt;</string>\n  <key/><string/>\n  <key>t</key><true></true>\n  <key>n</key><integer>-0x10</integer>\n  <key>z</key><integer>+007</integer>\n  <key>r</key><real>-1.5E3</real>\n  <key>i</key><real>-Infinity</real>\n  <key>d</key><data>\n  AAEC\n  /w==\n  </data>\n  <key>e</key><data></data>\n  <key>t0</key><date>-0044-03-15T12:00:00Z</date>\n</dict>\n</plist>\n",
            "<?xml version='1.0' standalone='yes' ?>\n<!DOCTYPE plist SYSTEM 'x.dtd' >\n<plist>\r\n<array><integer>18446744073709551615</integer><integer>-9223372036854775808</integer><real>.5</real><real>nan</real></array></plist>",
        ]
        for document in documents {
            let bytes = Array(document.utf8)
            let theirs = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)
            let plist = try XMLPlistReader.read(bytes)
            #expect(canonical(plist) == canonical(theirs))
            // Written back in Foundation's style, Foundation reads the same values.
            let written = try XMLPlistWriter.write(plist)
            #expect(canonical(try PropertyListSerialization.propertyList(from: Data(written), format: nil)) == canonical(theirs))
        }
    }

    @Test("Foundation's style in every corner: real spellings, dates, base64 lines at every depth, escapes")
    func foundationStyleCorners() throws {
        var deep: Any = Data((0..<100).map { UInt8($0) })
        for _ in 0..<11 { deep = [deep, Data((0..<40).map { UInt8($0 * 3) }), Data()] }
        let values: [Any] = [
            [
                0.0, -0.0, 1.5, 0.1, 1e100, 3.0, .nan, Double.infinity, -Double.infinity, 1.0 / 3, Double.leastNonzeroMagnitude, 1e16, 1e15, -2.5e-300,
                Double(Float(1.1)),
            ],
            [Int64.min, Int64.max, 0, -1, 255, 256, 65_535, 65_536, 4_294_967_295, 4_294_967_296] as [Int64],
            [UInt64.max, UInt64(Int64.max) + 1] as [UInt64],
            [
                Date(timeIntervalSinceReferenceDate: 0.9), Date(timeIntervalSinceReferenceDate: -0.5), Date(timeIntervalSinceReferenceDate: -1e11),
                Date(timeIntervalSinceReferenceDate: -63_114_076_800), Date(timeIntervalSinceReferenceDate: 3e11),
                Date(timeIntervalSinceReferenceDate: -6.4e10),
            ],
            ["a<b>c&d\"e'f\r\n\tx y é🧘", "", " lead", "trail ", "]]>", "&amp;"],
            ["": "", "b": [String: Any](), "a": [Any](), "d": Data(), "t": true, "f": false, "CF$UIDx": 1],
            deep,
        ]
        for value in values {
            let bytes = [UInt8](try PropertyListSerialization.data(fromPropertyList: value, format: .xml, options: 0))
            let plist = try XMLPlistReader.read(bytes)
            let written = try XMLPlistWriter.write(plist)
            #expect(written == bytes, "\(String(decoding: bytes, as: UTF8.self))\n---- ours:\n\(String(decoding: written, as: UTF8.self))")
            let theirs = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)
            #expect(canonical(plist) == canonical(theirs))
        }
    }

    @Test("2,000 random graphs: Foundation writes XML, we read the same values and write the same bytes; we write XML, Foundation reads the same values")
    func differential() throws {
        var rng = FuzzRNG(seed: 11)
        var xmlBytes = 0
        for round in 0..<2_000 {
            let value: Any = rng.oneIn(2) ? randomPlist(&rng) : ["root": randomPlist(&rng)]
            let want = canonical(value)
            // Foundation's XML → ours → the same bytes.
            let fx = [UInt8](try PropertyListSerialization.data(fromPropertyList: value, format: .xml, options: 0))
            xmlBytes += fx.count
            let plist = try XMLPlistReader.read(fx)
            #expect(canonical(plist) == want, "round \(round)")
            let written = try XMLPlistWriter.write(plist)
            #expect(written == fx, "round \(round)")
            // Foundation's binary → our reader → our XML (keys in hash order, objects shared) →
            // Foundation reads the same values, and so do we.
            let fb = [UInt8](try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0))
            let fromBinary = try BinaryPlistReader.read(fb)
            let ours = try XMLPlistWriter.write(fromBinary)
            #expect(canonical(try PropertyListSerialization.propertyList(from: Data(ours), format: nil)) == want, "round \(round)")
            #expect(exactCanonical(try XMLPlistReader.read(ours)) == exactCanonical(fromBinary), "round \(round)")
            // Our XML reading written as binary: Foundation reads the same values.
            let asBinary = try PropertyListFile.write(plist, encoding: .binary)
            #expect(canonical(try PropertyListSerialization.propertyList(from: Data(asBinary), format: nil)) == want, "round \(round)")
            if written != fx { break }
        }
        print("differential: 2,000 graphs, \(xmlBytes) bytes of Foundation XML")
    }

    @Test("keyed archives NSKeyedArchiver writes as XML pass the checker, write back byte for byte, and equal their binary twins")
    func keyedArchives() throws {
        let roots: [NSObject] = [
            NSArray(array: [NSString(string: "baa"), NSNumber(value: 1), NSNumber(value: 2.5), NSNumber(value: true)]),
            NSDictionary(dictionary: ["name": NSString(string: "水🧘 é"), "count": NSNumber(value: -7), "when": NSDate(timeIntervalSinceReferenceDate: 123_456)]),
            NSData(bytes: [UInt8](0..<200), length: 200),
            NSDate(timeIntervalSinceReferenceDate: -1e9),
            NSDictionary(dictionary: [
                "list": NSArray(array: [NSData(bytes: [1, 2, 3], length: 3), NSString(string: "x"), NSArray()]),
                "nested": NSDictionary(dictionary: ["deeper": NSArray(array: [NSNumber(value: Int64.max)])]),
            ]),
            NSString(string: "plain"),
        ]
        for root in roots {
            func archive(_ format: PropertyListSerialization.PropertyListFormat) -> [UInt8] {
                let archiver = NSKeyedArchiver(requiringSecureCoding: false)
                archiver.outputFormat = format
                archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
                archiver.finishEncoding()
                return [UInt8](archiver.encodedData)
            }
            let xml = archive(.xml)
            let binary = archive(.binary)
            let fromXML = try PropertyListFile.read(xml)
            #expect(fromXML.encoding == .xml)
            #expect(KeyedArchiveChecker.problem(in: fromXML.plist) == nil, "\(root)")
            #expect(PlistFormat(.keyedArchive).validator.validate(xml) == .valid)
            #expect(try XMLPlistWriter.write(fromXML.plist) == xml, "\(root)")
            let fromBinary = try BinaryPlistReader.read(binary)
            #expect(exactCanonical(fromXML.plist) == exactCanonical(fromBinary), "\(root)")

            // Binary → XML → ours and Foundation's unarchiver read the same objects.
            let binaryAsXML = try PropertyListFile.write(fromBinary, encoding: .xml)
            #expect(exactCanonical(try XMLPlistReader.read(binaryAsXML)) == exactCanonical(fromBinary))
            // (Compared with what the original unarchives to, not with the root: the archiver
            // stores NSNumber(true) and NSNumber(1) as one object, so true comes back as 1.)
            let original = try #require(try unarchive(binary))
            let back = try unarchive(binaryAsXML)
            #expect(back?.isEqual(original) == true, "\(original) came back as \(back.map { "\($0)" } ?? "nil")")
            // XML → binary → the same, and it passes the checker as binary.
            let xmlAsBinary = try PropertyListFile.write(fromXML.plist, encoding: .binary)
            let reread = try BinaryPlistReader.read(xmlAsBinary)
            #expect(exactCanonical(reread) == exactCanonical(fromXML.plist))
            #expect(KeyedArchiveChecker.problem(in: reread) == nil)
            #expect(try unarchive(xmlAsBinary)?.isEqual(try unarchive(xml)) == true, "\(root)")
            #expect(try unarchive(xml)?.isEqual(original) == true, "\(root)")
        }
    }

    func unarchive(_ bytes: [UInt8]) throws -> NSObject? {
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: Data(bytes))
        unarchiver.requiresSecureCoding = false
        return unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey) as? NSObject
    }

    @Test("the real XML archives pass the checker; broken ones in XML are caught with the rule they break")
    func archiveChecker() throws {
        for (name, bytes) in try nonBinaryFiles("keyed-archives") {
            #expect(KeyedArchiveChecker.problem(in: try XMLPlistReader.read(bytes)) == nil, "\(name)")
        }
        // The binary broken archives, converted to XML, are just as broken.
        for (file, mentions) in [
            ("bpylist2-invalid_uid_archive.plist", "UID"), ("bpylist2-no_top_archive.plist", "$top"),
            ("bpylist2-no_class_name_archive.plist", "class description"),
        ] {
            let bytes = [UInt8](try Data(contentsOf: corpus.appendingPathComponent("plists-malformed/\(file)")))
            let xml = try XMLPlistWriter.write(try BinaryPlistReader.read(bytes))
            let problem = KeyedArchiveChecker.problem(in: try XMLPlistReader.read(xml))
            #expect(problem?.contains(mentions) == true, "\(file): \(problem ?? "no problem found")")
            #expect(!PlistFormat(.keyedArchive).validator.validate(xml).isValid)
        }
    }

    @Test("graphs with no XML form are refused by the writer, not looped over")
    func writerRefuses() throws {
        let s: BinaryPlist.Object = .ascii(Array("k".utf8), length: .inline)
        let cases: [(BinaryPlist, String)] = [
            (BinaryPlist(objects: [.array([0], length: .inline)], topObject: 0), "a cycle"),
            (BinaryPlist(objects: [.set([], length: .inline)], topObject: 0), "a set"),
            (BinaryPlist(objects: [.array([1], length: .inline), .null], topObject: 0), "null"),
            (BinaryPlist(objects: [.dictionary(keys: [1], values: [1], length: .inline), .bool(true)], topObject: 0), "not a string"),
            (BinaryPlist(objects: [.array([5], length: .inline)], topObject: 0), "not below"),
            (BinaryPlist(objects: [s, .date(-1e300)], topObject: 1), "outside the years"),
        ]
        for (plist, message) in cases {
            #expect { try XMLPlistWriter.write(plist) } throws: { ($0 as? Violation)?.message.contains(message) == true }
        }
        // 60 levels of arrays that each hold the next level twice: 2^60 strings in XML.
        var objects: [BinaryPlist.Object] = (0..<60).map { .array([$0 + 1, $0 + 1], length: .inline) }
        objects.append(s)
        let bomb = BinaryPlist(objects: objects, topObject: 0)
        #expect { try XMLPlistWriter.write(bomb, maxBytes: 1 << 20) } throws: { ($0 as? Violation)?.message.contains("larger than") == true }
        // A chain of 1,500 arrays is written and read without recursion (the XML grows with the
        // square of the depth: a tab a level).
        let chain = BinaryPlist(objects: (0..<1_500).map { .array($0 == 1_499 ? [] : [$0 + 1], length: .inline) }, topObject: 0)
        let deep = try XMLPlistWriter.write(chain)
        #expect(try XMLPlistReader.read(deep).objects.count == 1_500)
    }

    @Test("the formats validate XML files, and mutate them as XML")
    func formats() throws {
        let plistFormat = PlistFormat(.propertyList)
        for (name, bytes) in try nonBinaryFiles("plists") + nonBinaryFiles("keyed-archives") {
            #expect(plistFormat.validator.validate(bytes) == .valid, "\(name)")
        }
        let archive = try #require(nonBinaryFiles("keyed-archives").first { $0.0.contains("ArrayTest") }?.1)
        let format = PlistFormat(.keyedArchive)
        #expect(format.validator.validate(archive) == .valid)
        let mutations = format.plistMutator.catalogue(of: archive)
        let names = Set(mutations.map(\.name))
        // Objects are numbered in document order: objects[8] is the first CF$UID (the array's $class).
        for expected in ["encoding=binary", "uid[8]=out-of-range", "uid[8]=0", "dict[0] extra key", "dict[0] missing key 2", "integer[30]=future"] {
            #expect(names.contains(expected), "\(expected) missing from \(names.sorted())")
        }
        #expect(!names.contains(where: { $0.hasPrefix("trailer.") || $0.hasPrefix("offsets[") }))
        for mutation in mutations {
            #expect(PropertyListFile.encoding(of: mutation.bytes) == (mutation.name == "encoding=binary" ? .binary : .xml), "\(mutation.name)")
            let verdict = format.validator.validate(mutation.bytes)
            // Lies the checker must see (a renamed class or an extra key may still make a valid archive).
            if mutation.name.hasSuffix("=out-of-range") || mutation.name == "uid[8]=0" || mutation.name.hasPrefix("dict[0] missing")
                || mutation.name == "integer[30]=future"
            {
                #expect(!verdict.isValid, "\(mutation.name)")
            }
            if mutation.name == "encoding=binary" { #expect(verdict.isValid) }
        }
        var rng = FuzzRNG(seed: 5)
        var produced = 0
        for _ in 0..<200 where format.plistMutator.mutate(archive, using: &rng) != nil { produced += 1 }
        #expect(produced >= 150)
    }

    @Test("2,000 corrupt XML inputs: the reader, the checker and the mutator never trap")
    func selfFuzz() throws {
        let format = PlistFormat(.keyedArchive)
        var rng = FuzzRNG(seed: 123)
        let seeds = try (nonBinaryFiles("plists") + nonBinaryFiles("keyed-archives")).map(\.1)
        var rejected = 0
        for i in 0..<2_000 {
            var bytes = seeds[i % seeds.count]
            if rng.oneIn(6), let m = format.plistMutator.mutate(bytes, using: &rng) { bytes = m.bytes }
            for _ in 0..<(1 + rng.below(3)) {
                Mutator.byteLevel[rng.below(Mutator.byteLevel.count)].mutate(
                    &bytes, using: &rng, context: MutationContext(partner: seeds[rng.below(seeds.count)]))
            }
            if !format.validator.validate(bytes).isValid { rejected += 1 }
            if i % 20 == 0 { _ = format.plistMutator.catalogue(of: bytes) }
        }
        #expect(rejected > 700)
    }
}
