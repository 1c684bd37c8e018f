import CorruptFuzzCore
import CorruptFuzzPlist
import Foundation
import Testing

@Suite("Keyed archives: the structure stage")
struct KeyedArchiveStageTests {
    /// A friend list NSKeyedArchiver wrote: Friend objects with a name and an NSDate birthday.
    func friendList(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: corpus.appendingPathComponent("../Corpus/friend-lists/\(name)").standardizedFileURL))
    }

    /// The friends' names and birthdays (`NS.time`) of an archive, in archive order, through
    /// Python-free reading: our own reader and the archive's UIDs.
    func friends(in bytes: [UInt8]) throws -> [(name: String?, time: Double?)] {
        let (plist, _) = try PropertyListFile.read(bytes)
        #expect(KeyedArchiveChecker.problem(in: plist) == nil)
        let objects = plist.objects
        guard case .dictionary(let keys, let values, _) = objects[plist.topObject],
            let o = keys.firstIndex(where: { KeyedArchiveChecker.string(objects[$0]) == "$objects" }),
            case .array(let table, _) = objects[values[o]]
        else { return [] }
        func value(_ ref: Int, _ key: String) -> BinaryPlist.Object? {
            guard case .dictionary(let k, let v, _) = objects[ref], let i = k.firstIndex(where: { KeyedArchiveChecker.string(objects[$0]) == key })
            else { return nil }
            return objects[v[i]]
        }
        func referenced(_ object: BinaryPlist.Object?) -> Int? {
            guard case .uid(let uid, _)? = object, uid > 0, Int(uid) < table.count else { return nil }
            return table[Int(uid)]
        }
        return table.compactMap { ref in
            guard value(ref, "birthday") != nil || value(ref, "name") != nil else { return nil }
            let name = referenced(value(ref, "name")).flatMap { KeyedArchiveChecker.string(objects[$0]) }
            var time: Double?
            if let date = referenced(value(ref, "birthday")), case .real(let t, _)? = value(date, "NS.time") { time = t }
            return (name, time)
        }
    }

    @Test("every key of every object dropped or set to its boundaries, one place changed each, in both encodings")
    func everyKeyChangedInOnePlace() throws {
        for file in ["friend-list-0.friends", "friend-list-xml.friends"] {
            let bytes = try friendList(file)
            let before = try friends(in: bytes)
            #expect(before.count >= 2, "\(file)")
            let entries = try #require(KeyedArchiveStage(bytes)).entries()
            let names = Set(entries.map(\.name))
            for expected in ["drop-key Friend#3.name", "Friend#3.name=empty", "Friend#3.name=$null", "NSDate#5.NS.time=nan", "NSDate#5.NS.time=far-future"]
            where file == "friend-list-0.friends" {
                #expect(names.contains(expected), "\(expected) in \(names.sorted().prefix(12))")
            }
            // Each entry, made, is still a keyed archive in the seed's encoding, and differs from
            // the seed in exactly one friend.
            for entry in entries where !entry.name.hasSuffix("=huge") {
                let made = entry.mutation().bytes
                #expect(KeyedArchiveStage([UInt8]("not a plist".utf8)) == nil)
                #expect(KeyedArchiveStage(BinaryPlistWriter.write(BinaryPlist(objects: [.ascii(Array("x".utf8), length: .inline)], topObject: 0))) == nil)
                let after = try friends(in: made)
                let changed = zip(before, after).filter { a, b in a.name != b.name || !(a.time == b.time || (a.time?.isNaN == true && b.time?.isNaN == true)) }
                if entry.name.contains("Friend#") || entry.name.contains("NSDate#") {
                    #expect(after.count == before.count && changed.count == 1, "\(entry.name): \(changed)")
                }
            }
        }
    }

    @Test("the campaign's catalogue interleaves the stage with the layout and graph corruptions, early")
    func interleavedEarly() throws {
        let bytes = try friendList("friend-list-0.friends")
        let entries = PlistMutator(.keyedArchive).catalogueEntries(of: bytes, context: CatalogueContext(maxInputLength: 1 << 16))
        // The root object (UID 1, a FriendList) comes first in the stage, second in the catalogue.
        try #require(entries.count > 2)
        #expect(entries[1].name == "drop-key FriendList#1.version", "\(entries.prefix(4).map(\.name))")
        #expect(entries.contains { $0.name == "Friend#3.name=empty" })
        #expect(!entries.contains { $0.name.hasSuffix("=huge") }, "an entry over the size cap was kept")
        #expect(PropertyListFile.encoding(of: [UInt8]("not a plist".utf8)) == nil || KeyedArchiveStage([UInt8]("not a plist".utf8)) == nil)
    }
}
