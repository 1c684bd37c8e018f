import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzGenerators
import CorruptFuzzPlist
import Foundation
@testable import FriendListLoaders
import Testing

/// A Foundation object graph for NSKeyedArchiver from a random property-list value.
func foundationObject(_ value: Any) -> NSObject {
    switch value {
    case let a as [Any]: return NSArray(array: a.map(foundationObject))
    case let d as [String: Any]:
        return NSDictionary(objects: d.values.map(foundationObject), forKeys: d.keys.map { NSString(string: $0) })
    case let s as String: return NSString(string: s)
    case let b as Bool: return NSNumber(value: b)
    case let i as Int: return NSNumber(value: i)
    case let r as Double: return NSNumber(value: r)
    case let d as Data: return NSData(data: d)
    case let d as Date: return NSDate(timeIntervalSinceReferenceDate: d.timeIntervalSinceReferenceDate)
    default: return NSNull()
    }
}

@Suite("Keyed archives written by the real NSKeyedArchiver")
struct GeneratedArchiveTests {
    @Test(
        "2,000 friend lists archived by NSKeyedArchiver: read, written back byte for byte, as Foundation reads them, valid, and unarchived to the values drawn")
    func friendLists() throws {
        var rng = FuzzRNG(seed: 11)
        let format = FriendListFormat()
        for round in 0..<2000 {
            let values = try Arbitrary.value(
                FriendListFormat.Values.self, using: &rng,
                overrides: [
                    "friends.name": .nonEmptyString(maxLength: 20),
                    "friends.birthday": .date(in: Date(timeIntervalSince1970: -2e9)...Date(timeIntervalSince1970: 4e9)),
                ])
            let list = FriendList(friends: values.friends.map { Friend(name: $0.name, birthday: $0.birthday) })
            let bytes = FriendListFormat.archive(list)
            let plist = try BinaryPlistReader.read(bytes)
            #expect(BinaryPlistWriter.write(plist) == bytes, "round \(round)")
            #expect(canonical(plist) == canonical(try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)), "round \(round)")
            #expect(format.validator.validate(bytes) == .valid, "round \(round)")
            let loaded = try HardenedFriendListLoader.load(Data(bytes))
            #expect(loaded.friends.map(\.name) == values.friends.map(\.name), "round \(round)")
            #expect(loaded.friends.map(\.birthday) == values.friends.map(\.birthday), "round \(round)")
        }
    }

    @Test("1,000 random Foundation graphs archived by NSKeyedArchiver: read and written back byte for byte, as Foundation reads them, well-formed archives")
    func randomGraphs() throws {
        var rng = FuzzRNG(seed: 12)
        for round in 0..<1000 {
            let bytes = try KeyedArchiveGenerator<Int>.archive(foundationObject(randomPlist(&rng)), requiringSecureCoding: false)
            let plist = try BinaryPlistReader.read(bytes)
            #expect(BinaryPlistWriter.write(plist) == bytes, "round \(round)")
            #expect(canonical(plist) == canonical(try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)), "round \(round)")
            #expect(KeyedArchiveChecker.problem(in: plist) == nil, "round \(round)")
            #expect(KeyedArchiveChecker.foundationProblem(in: plist) == nil, "round \(round)")
        }
    }

    struct Settings: Codable, Equatable {
        var name: String
        var fontSize: Int
        var ratio: Double
        var enabled: Bool
        var tags: [String]
        var updated: Date
        var blob: Data
        var nested: [String: Int]
    }

    @Test(
        "a Codable model through PropertyListEncoder: 1,000 binary files read and written back byte for byte, and decode to the value drawn; XML too",
        arguments: [
            PropertyListSerialization.PropertyListFormat.binary, .xml,
        ])
    func codableModel(format: PropertyListSerialization.PropertyListFormat) throws {
        let generator = PropertyListGenerator(Settings.self, format: format, overrides: ["fontSize": .range(8...72)])
        var a = FuzzRNG(seed: 5), b = FuzzRNG(seed: 5)
        for round in 0..<1000 {
            let value = try generator.value(using: &a)
            let bytes = try generator.generate(using: &b)
            #expect((8...72).contains(value.fontSize))
            #expect(try PropertyListDecoder().decode(Settings.self, from: Data(bytes)) == value, "round \(round)")
            if format == .binary {
                let plist = try BinaryPlistReader.read(bytes)
                #expect(BinaryPlistWriter.write(plist) == bytes, "round \(round)")
            } else {
                #expect(bytes.starts(with: Array("<?xml".utf8)))
            }
        }
    }
}

@Suite("The friend-list example: loading-failure catalogue and loaders")
struct FriendListExampleTests {
    let seed = FriendListFormat.archive(
        FriendList(friends: [
            Friend(name: "Ada", birthday: Date(timeIntervalSince1970: -4_000_000_000 / 2)),
            Friend(name: "Linus", birthday: Date(timeIntervalSince1970: 0)),
        ]))

    @Test(
        "each loading failure gets its reason from the validator and from the hardened loader",
        arguments: [
            ("single-byte", "corrupt"), ("exploding-object", "corrupt"), ("version=future", "unsupported-version"),
            ("version=0", "corrupt"), ("version=-1", "corrupt"), ("version=missing", "corrupt"),
        ])
    func catalogue(name: String, reason: String) throws {
        let format = FriendListFormat()
        let mutation = try #require(format.friendListMutator.catalogue(of: seed).first { $0.name == name })
        #expect(mutation.expectation?.reason == Reason(reason))
        guard case .invalid(let violation) = format.validator.validate(mutation.bytes) else {
            Issue.record("the validator accepts \(name)")
            return
        }
        #expect(violation.reason == Reason(reason), "\(violation)")
        #expect(throws: FriendListLoadError.self) { try HardenedFriendListLoader.load(Data(mutation.bytes)) }
        do {
            _ = try HardenedFriendListLoader.load(Data(mutation.bytes))
        } catch {
            #expect(error.reason == reason, "\(error.message)")
        }
    }

    @Test("the catalogue points a $class at an object that is not a class description, and the validator sees it")
    func classNotAClass() throws {
        let format = FriendListFormat()
        let mutations = format.friendListMutator.catalogue(of: seed).filter { $0.name.hasSuffix(".$class=not-a-class") }
        #expect(!mutations.isEmpty)
        for mutation in mutations { #expect(!format.validator.validate(mutation.bytes).isValid, "\(mutation.name)") }
    }

    @Test("missing and empty files get not-found and empty from the hardened loader")
    func missingAndEmpty() throws {
        #expect(throws: FriendListLoadError("not-found", "/nonexistent/friends does not exist")) {
            try HardenedFriendListLoader.load(path: "/nonexistent/friends")
        }
        #expect(throws: FriendListLoadError("empty", "the file is empty")) { try HardenedFriendListLoader.load(Data()) }
    }

    @Test("the validator names what is wrong")
    func validatorMessages() throws {
        #expect(FriendListFormat.validate(seed) == nil)
        let text = try #require(FriendListFormat.validate(Array(seed.dropLast())))
        #expect(text.reason == "corrupt")
        let empty = FriendList(friends: [Friend(name: "", birthday: Date())])
        #expect(FriendListFormat.validate(FriendListFormat.archive(empty))?.description == "friends[0].name: empty")
        let old = FriendList(friends: [Friend(name: "Old", birthday: Date(timeIntervalSince1970: -3e9))])
        #expect(FriendListFormat.validate(FriendListFormat.archive(old))?.description.hasPrefix("friends[0].birthday:") == true)
        #expect(throws: FriendListLoadError.self) { try HardenedFriendListLoader.load(Data(FriendListFormat.archive(old))) }
    }
}

/// Edits of a friend-list archive's object graph, by class name.
struct ArchiveEditor {
    var plist: BinaryPlist

    init(_ bytes: [UInt8]) throws {
        plist = try BinaryPlistReader.read(bytes)
        plist.offsets = nil
    }

    var bytes: [UInt8] { BinaryPlistWriter.write(plist) }

    func field(_ name: String, of ref: Int) -> Int? {
        guard case .dictionary(let keys, let values, _) = plist.objects[ref] else { return nil }
        return zip(keys, values).first { KeyedArchiveChecker.string(plist.objects[$0.0]) == name }?.1
    }

    /// The `$objects` table: UID → object index.
    var table: [Int] {
        guard let ref = field("$objects", of: plist.topObject), case .array(let refs, _) = plist.objects[ref] else { return [] }
        return refs
    }

    /// The UID of the first archived object of class `name`.
    func uid(ofClass name: String) -> Int? {
        table.indices.first { uid in
            guard let classRef = field("$class", of: table[uid]), case .uid(let c, _) = plist.objects[classRef],
                let nameRef = field("$classname", of: table[Int(c)])
            else { return false }
            return KeyedArchiveChecker.string(plist.objects[nameRef]) == name
        }
    }

    /// Appends `object` and returns its index.
    mutating func add(_ object: BinaryPlist.Object) -> Int {
        plist.objects.append(object)
        plist.objectRefSize = max(plist.objectRefSize, BinaryPlist.bytesNeeded(UInt64(plist.objects.count)))
        return plist.objects.count - 1
    }

    /// Points `field` of the object at index `ref` at a new object.
    mutating func set(_ name: String, of ref: Int, to object: BinaryPlist.Object) {
        guard case .dictionary(let keys, var values, let length) = plist.objects[ref],
            let at = keys.firstIndex(where: { KeyedArchiveChecker.string(plist.objects[$0]) == name })
        else { return }
        values[at] = add(object)
        plist.objects[ref] = .dictionary(keys: keys, values: values, length: length)
    }

    /// Changes the friends array's element references.
    mutating func setFriends(_ change: (inout [Int], inout ArchiveEditor) -> Void) throws {
        let array = table[try #require(uid(ofClass: "NSArray"))]
        let list = try #require(field("NS.objects", of: array))
        guard case .array(var refs, _) = plist.objects[list] else { return }
        change(&refs, &self)
        plist.objects[list] = .array(refs, length: .natural(refs.count))
    }
}

@Suite("The hardened friend-list loader's own checks, before Foundation")
struct HardenedFriendListPrecheckTests {
    let seed = FriendListFormat.archive(FriendList(friends: [Friend(name: "Ada", birthday: Date(timeIntervalSince1970: 0))]))

    /// Each of these makes NSKeyedUnarchiver on Linux trap (secure coding with
    /// `.setErrorAndReturn`: "Value was of unexpected class", or a stack overflow) or misread
    /// the file without an error; the loader refuses each before Foundation sees it.
    @Test("a fill byte that nothing names is read by Foundation, the validator and the loader alike")
    func unnamedFill() throws {
        var archive = try ArchiveEditor(seed)
        _ = archive.add(.fill)
        let bytes = archive.bytes
        #expect(FriendListFormat.validate(bytes) == nil)
        #expect(try HardenedFriendListLoader.load(Data(bytes)).friends.count == 1)
    }

    @Test(
        "archives Foundation traps on or misreads are refused as corrupt",
        arguments: [
            "birthday-is-the-friend", "root-is-the-array", "friend-is-a-date", "name-is-a-date", "null-friend", "friend-not-a-uid",
            "uid-where-the-name-belongs", "ascii-name-with-a-high-byte", "fill-byte-as-the-name",
        ])
    func refused(edit: String) throws {
        var archive = try ArchiveEditor(seed)
        let table = archive.table
        let friend = table[try #require(archive.uid(ofClass: "FriendListLoaders.Friend"))]
        let dateUID = try #require(archive.uid(ofClass: "NSDate"))
        switch edit {
        case "birthday-is-the-friend":
            archive.set("birthday", of: friend, to: .naturalUID(UInt64(try #require(archive.uid(ofClass: "FriendListLoaders.Friend")))))
        case "root-is-the-array":
            archive.set(
                "root", of: try #require(archive.field("$top", of: archive.plist.topObject)),
                to: .naturalUID(UInt64(try #require(archive.uid(ofClass: "NSArray")))))
        case "friend-is-a-date":
            try archive.setFriends { refs, editor in refs[0] = editor.add(.naturalUID(UInt64(dateUID))) }
        case "name-is-a-date":
            archive.set("name", of: friend, to: .naturalUID(UInt64(dateUID)))
        case "null-friend":
            try archive.setFriends { refs, editor in refs.append(editor.add(.naturalUID(0))) }
        case "friend-not-a-uid":
            try archive.setFriends { refs, editor in refs.insert(editor.add(.naturalInteger(5)), at: 0) }
        case "uid-where-the-name-belongs":
            let name = try #require(archive.field("name", of: friend))
            guard case .uid(let uid, _) = archive.plist.objects[name] else {
                Issue.record("the name is not a UID")
                return
            }
            archive.plist.objects[table[Int(uid)]] = .naturalUID(1)
        case "fill-byte-as-the-name":
            // Foundation refuses the file; the validator once read on (and judged the version).
            archive.set("name", of: friend, to: .fill)
        default:
            archive.set("name", of: friend, to: .ascii([0x41, 0xE9], length: .inline))
        }
        let bytes = archive.bytes
        #expect(FriendListFormat.validate(bytes)?.reason == "corrupt", "the validator: \(edit)")
        #expect(throws: FriendListLoadError.self) { try HardenedFriendListLoader.load(Data(bytes)) }
        do {
            _ = try HardenedFriendListLoader.load(Data(bytes))
        } catch {
            #expect(error.reason == "corrupt", "\(edit): \(error.message)")
        }
    }

    @Test("XML archives with control characters, broken UTF-8, a root other than <plist> or content after </plist> are refused as corrupt")
    func xmlText() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Corpus/friend-lists/friend-list-xml.friends").path
        let xml = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        #expect(try HardenedFriendListLoader.load(Data(xml)).version == 1)
        let closing = try #require(xml.indices.last { xml[$0...].starts(with: Array("</plist>".utf8)) })
        // The demo found this one: PropertyListSerialization reads a document whose root is
        // <dict>, with a </plist> after it.
        let text = String(decoding: xml, as: UTF8.self)
        let bareDict = Array(text.replacingOccurrences(of: "<plist version=\"1.0\">", with: "").utf8)
        #expect(bareDict != xml)
        // And these a 10-minute worker campaign found: a malformed declaration or DOCTYPE, which
        // PropertyListSerialization reads, and a file too large for Foundation to read in time.
        let badDeclaration = Array(text.replacingOccurrences(of: "<?xml version=\"1.0\"", with: "<?xml vers0on\"1.0\"").utf8)
        let badDoctype = Array(text.replacingOccurrences(of: "PUBLIC \"-//Apple//DTD PLIST 1.0//EN\"", with: "PUBLIC -//Apple").utf8)
        let tooLarge = Array(closing > 0 ? xml[..<closing] : []) + Array(repeating: UInt8(ascii: " "), count: 70_000) + Array(xml[closing...])
        #expect(badDeclaration != xml && badDoctype != xml)
        for bad: [UInt8] in [
            xml + [0xCA], xml + Array("x".utf8), Array(xml[..<closing]) + [0x01] + Array(xml[closing...]), bareDict, badDeclaration, badDoctype,
            tooLarge,
        ] {
            #expect(FriendListFormat.validate(Array(bad))?.reason == "corrupt")
            #expect(throws: FriendListLoadError.self) { try HardenedFriendListLoader.load(Data(bad)) }
        }
        let commented = xml + Array("<!-- saved -->\n".utf8)
        #expect(FriendListFormat.validate(commented) == nil)
        #expect(try HardenedFriendListLoader.load(Data(commented)).version == 1)
    }

    @Test(
        "archives a 10-minute worker campaign found: a set (Foundation crashed bridging it), an unknown marker, a 16-byte real",
        arguments: ["set-in-archive", "unknown-marker", "real-of-16-bytes"])
    func foundByLongCampaign(name: String) throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/FriendListRegressions/\(name).friends").path
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        #expect(FriendListFormat.validate(bytes)?.reason == .corrupt)
        // In this process: were the preflight to let it through, Foundation would crash the test.
        #expect(throws: FriendListLoadError.self) { try HardenedFriendListLoader.load(Data(bytes)) }
    }

    @Test(
        "archives 3- and 4-minute worker campaigns found: a reference past the last object, a binary key twice (with a future version too, in the top dictionary too), a DOCTYPE with '>' in its system identifier, <plist ve)sion=\"1.0\">, <plist version=\"3.0\">, data whose length is not an integer, XML keys written twice, <string\t<string>, a 16-byte version, a second </plist>, a tab in a <real>",
        arguments: [
            "silent-acceptance-reference-past-last-object", "silent-acceptance-binary-key-twice", "wrong-reason-binary-key-twice-future-version",
            "false-rejection-top-key-twice", "false-rejection-doctype-with-angle-bracket", "silent-acceptance-plist-attribute-without-value",
            "silent-acceptance-plist-version-3-0", "silent-acceptance-data-length-not-an-integer", "silent-acceptance-xml-key-twice-ns-time",
            "silent-acceptance-xml-key-twice-cf-uid", "silent-acceptance-xml-key-twice-classname", "silent-acceptance-xml-key-twice-name",
            "silent-acceptance-xml-tag-inside-a-tag", "wrong-reason-version-integer-of-16-bytes", "silent-acceptance-xml-after-the-first-plist-end",
            "silent-acceptance-xml-real-with-a-tab",
        ])
    func foundByShortCampaign(name: String) throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Corpus/regressions/friend-list-hardened/\(name).friends").path
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        // The validator and the loader agree: corrupt (PropertyListSerialization read the first
        // three without a word, and refuses the last, whose DOCTYPE XML allows).
        #expect(FriendListFormat.validate(bytes)?.reason == .corrupt)
        do {
            let list = try HardenedFriendListLoader.load(Data(bytes))
            Issue.record("accepted \(name): \(list)")
        } catch {
            #expect(error.reason == "corrupt", "\(name): \(error.message)")
        }
    }

    @Test(
        "a top-level key NSKeyedUnarchiver does not read is not checked: a UID out of range or a class no friend list has under it is harmless",
        arguments: ["false-rejection-uid-under-an-unknown-top-key", "silent-acceptance-unknown-class-under-an-unknown-top-key"])
    func unknownTopKey(name: String) throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Corpus/regressions/friend-list-hardened/\(name).friends").path
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        #expect(FriendListFormat.validate(bytes) == nil)
        #expect(try HardenedFriendListLoader.load(Data(bytes)).version == 1)
    }

    @Test("an XML <dict> must name each key once, entities and CDATA resolved, nested dictionaries apart; start tags hold only their name")
    func xmlKeysTwice() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Corpus/friend-lists/friend-list-xml.friends").path
        let text = String(decoding: try #require(FileManager.default.contents(atPath: path)), as: UTF8.self)
        #expect(throws: Never.self) { try ArchivePreflight.checkXMLMarkup(Array(text.utf8)) }
        // The same key in two dictionaries, one inside the other, is no repeat.
        let nested =
            "<plist version=\"1.0\"><dict><key>a</key><dict ><key>a</key><string>x</string></dict><key >b</key><array><dict><key>a</key><dict/></dict></array><key>c</key><true /><key>d</key><string><![CDATA[</plist>]]></string></dict></plist>\n<!-- saved --> <?app done?>\n"
        #expect(throws: Never.self) { try ArchivePreflight.checkXMLMarkup(Array(nested.utf8)) }
        for twice in [
            "<plist><dict><key>a</key><true/><key>a</key><false/></dict></plist>",
            "<plist><dict><key>a&amp;b</key><true/><key>a&#38;b</key><false/></dict></plist>",
            "<plist><dict><key><![CDATA[x</key>]]></key><true/><key>x&lt;/key&gt;</key><false/></dict></plist>",
            "<plist><dict><key>a</key><dict><key>z</key><true/></dict><!-- <key>a</key> --><key>a</key><true/></dict></plist>",
            "<plist><dict><key/><true/><key></key><false/></dict></plist>",
            // Not keys twice, but a start tag with more than a name: Foundation reads it.
            "<plist><dict><key>a</key><string\t<string>x</string></dict></plist>",
            "<plist><dict><key a=\"b\">a</key><true/></dict></plist>",
            // Foundation stops at the first </plist>: what follows must not be a document's tail.
            "<plist><dict><key>a</key><true/></dict></plist>\ning>\n</dict>\n</plist>",
            "<plist><dict><key>a</key><real>\t1.5</real></dict></plist>", "<plist><array><integer>7 </integer></array></plist>",
        ] {
            #expect(throws: ArchivePreflight.Problem.self, "\(twice)") { try ArchivePreflight.checkXMLMarkup(Array(twice.utf8)) }
        }
    }

    @Test("XML prologs the nightly job and the demo found: a second, malformed DOCTYPE, a processing instruction without a target, `<?>`")
    func prologs() throws {
        let store = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Corpus/regressions/friend-list-hardened")
        var inputs: [[UInt8]] = try ["silent-acceptance-two-doctypes", "silent-acceptance-processing-instruction"].map { name in
            [UInt8](try #require(FileManager.default.contents(atPath: store.appendingPathComponent("\(name).friends").path)))
        }
        // The preflight once cut `<?>` as a processing instruction ending at its own `?`: a trap.
        inputs += [Array("<?>".utf8), Array("<?><plist>".utf8), Array(" <?>?>".utf8)]
        // A target glued to what follows (`<?oding="UTF-8"?>`) is malformed for both.
        let xml = [UInt8](
            try #require(
                FileManager.default.contents(
                    atPath: store.deletingLastPathComponent().deletingLastPathComponent()
                        .appendingPathComponent("friend-lists/friend-list-xml.friends").path)))
        let declaration = try #require(String(decoding: xml, as: UTF8.self).range(of: "?>"))
        for prolog in [#"<?oding="UTF-8"?>"#, #"<?merd?mcoding="UTF-8"?>"#] {
            inputs.append(Array(prolog.utf8) + Array(String(decoding: xml, as: UTF8.self)[declaration.upperBound...].utf8))
        }
        for bytes in inputs {
            #expect(FriendListFormat.validate(bytes)?.reason == .corrupt)
            #expect(throws: FriendListLoadError.self) { try HardenedFriendListLoader.load(Data(bytes)) }
        }
    }
}
