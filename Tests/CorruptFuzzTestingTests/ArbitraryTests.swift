import CorruptFuzzCore
import CorruptFuzzTesting
import Foundation
import Testing

struct Friend: Codable, Equatable {
    enum Circle: String, Codable, CaseIterable { case family, work, school }
    var name: String
    var birthday: Date
    var circle: Circle
    var nickname: String?
    var tags: [String]
}

struct FriendList: Codable, Equatable {
    var version: Int
    var friends: [Friend]
}

let birthdays = Date(timeIntervalSince1970: -631_152_000)...Date(timeIntervalSince1970: 1_262_304_000)  // 1950...2010

let friendOverrides: [String: ArbitraryOverride] = [
    "version": .constant(1),
    "friends.name": .nonEmptyString(maxLength: 20),
    "friends.birthday": .date(in: birthdays),
]

@Suite("CorruptFuzzTesting: values of Codable models")
struct ArbitraryTests {
    @Test("draws valid instances that respect the overrides, and round-trip through a property list")
    func drawsValidInstances() throws {
        var rng = FuzzRNG(seed: 1)
        var sawNickname = false, sawNoNickname = false, sawFriends = false
        var circles: Set<Friend.Circle> = []
        for _ in 0..<1000 {
            let list = try Arbitrary.value(FriendList.self, using: &rng, overrides: friendOverrides)
            #expect(list.version == 1)
            for friend in list.friends {
                #expect(!friend.name.isEmpty && friend.name.count <= 20)
                #expect(birthdays.contains(friend.birthday))
                circles.insert(friend.circle)
                if friend.nickname == nil { sawNoNickname = true } else { sawNickname = true }
                sawFriends = true
            }
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            #expect(try PropertyListDecoder().decode(FriendList.self, from: encoder.encode(list)) == list)
        }
        #expect(sawFriends && sawNickname && sawNoNickname)
        #expect(circles == Set(Friend.Circle.allCases))
    }

    @Test("the same seed draws the same values")
    func deterministic() throws {
        func draw(_ seed: UInt64) throws -> [FriendList] {
            var rng = FuzzRNG(seed: seed)
            return try (0..<20).map { _ in try Arbitrary.value(FriendList.self, using: &rng, overrides: friendOverrides) }
        }
        #expect(try draw(3) == draw(3))
        #expect(try draw(3) != draw(4))
    }
}
