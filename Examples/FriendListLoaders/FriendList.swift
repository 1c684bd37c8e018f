import Foundation

/// One friend: a name and a birthday. The friend-list example's model class, archived with
/// NSKeyedArchiver as an app would archive its documents.
public final class Friend: NSObject, NSSecureCoding {
    public static var supportsSecureCoding: Bool { true }

    public let name: String
    public let birthday: Date

    public init(name: String, birthday: Date) {
        self.name = name
        self.birthday = birthday
    }

    public func encode(with coder: NSCoder) {
        coder.encode(name as NSString, forKey: "name")
        coder.encode(birthday as NSDate, forKey: "birthday")
    }

    /// Secure decoding: each field must be there with its class, or decoding fails with an
    /// error (under `.setErrorAndReturn`) instead of an exception.
    public init?(coder: NSCoder) {
        guard let name = coder.decodeObject(of: NSString.self, forKey: "name"),
            let birthday = coder.decodeObject(of: NSDate.self, forKey: "birthday")
        else {
            return nil
        }
        self.name = name as String
        self.birthday = birthday as Date
        super.init()
    }

    /// A line of the loaders' digest.
    public var digest: String {
        "\(name)\t\(birthday.timeIntervalSinceReferenceDate)"
    }
}

/// The friend-list document: a version and an array of friends.
public final class FriendList: NSObject, NSSecureCoding {
    public static var supportsSecureCoding: Bool { true }
    /// The version this build writes and reads; a newer one is `unsupported-version`.
    public static let currentVersion = 1

    public let version: Int
    public let friends: [Friend]

    public init(version: Int = FriendList.currentVersion, friends: [Friend]) {
        self.version = version
        self.friends = friends
    }

    public func encode(with coder: NSCoder) {
        coder.encode(version, forKey: "version")
        coder.encode(friends as NSArray, forKey: "friends")
    }

    /// The version switch: the version is decoded first, and a newer document's contents are
    /// left alone (a newer app may have changed them), so the loader can say
    /// `unsupported-version` instead of `corrupt`.
    public init?(coder: NSCoder) {
        guard coder.containsValue(forKey: "version") else { return nil }
        version = coder.decodeInteger(forKey: "version")
        guard version <= FriendList.currentVersion else {
            friends = []
            super.init()
            return
        }
        guard version == 1,
            let array = coder.decodeObject(of: [NSArray.self, Friend.self], forKey: "friends") as? NSArray,
            let friends = array as? [Friend]
        else {
            return nil
        }
        self.friends = friends
        super.init()
    }
}

/// Why a friend list could not be loaded: the reason word of the target protocol and what is
/// wrong.
public struct FriendListLoadError: Error, Sendable, Hashable {
    /// `not-found`, `empty`, `corrupt`, `unsupported-version`.
    public var reason: String
    public var message: String

    public init(_ reason: String, _ message: String) {
        self.reason = reason
        self.message = message
    }
}
