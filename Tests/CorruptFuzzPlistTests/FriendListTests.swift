import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzGenerators
import CorruptFuzzPlist
import Foundation
import FriendListLoaders
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
