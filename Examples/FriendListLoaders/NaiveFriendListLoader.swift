import Foundation

/// The friend list loaded the way a hurried app developer writes it: what the deprecated
/// `unarchiveTopLevelObjectWithData` does, with the default decoding-failure policy (on Linux an
/// exception is a fatal error), force casts, no version check, every failure called `corrupt`.
public enum NaiveFriendListLoader {
    /// Loads the file at `path`.
    public static func load(path: String) throws(FriendListLoadError) -> NaiveFriendList {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw FriendListLoadError("corrupt", "cannot read \(path)")
        }
        return try load(data)
    }

    /// Loads a friend list from the file's bytes.
    public static func load(_ data: Data) throws(FriendListLoadError) -> NaiveFriendList {
        // What `unarchiveTopLevelObjectWithData` does, with this loader's classes set on its
        // own unarchiver (a class-wide `setClass` would change every unarchiver in the process).
        do {
            // The initializer `unarchiveTopLevelObjectWithData` uses: no secure coding, and the
            // default policy, under which a malformed file (an empty one included) aborts.
            let unarchiver = NSKeyedUnarchiver(forReadingWith: data)
            unarchiver.setClass(NaiveFriendList.self, forClassName: "FriendListLoaders.FriendList")
            unarchiver.setClass(NaiveFriend.self, forClassName: "FriendListLoaders.Friend")
            let root = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
            if let error = unarchiver.error { throw error }
            return root as! NaiveFriendList
        } catch {
            throw FriendListLoadError("corrupt", "\(error)")
        }
    }
}

/// The naive loader's friend: decoded with force casts.
public final class NaiveFriend: NSObject, NSCoding {
    public let name: String
    public let birthday: Date

    public init?(coder: NSCoder) {
        name = coder.decodeObject(forKey: "name") as! String
        birthday = coder.decodeObject(forKey: "birthday") as! Date
    }

    public func encode(with coder: NSCoder) {
        coder.encode(name as NSString, forKey: "name")
        coder.encode(birthday as NSDate, forKey: "birthday")
    }
}

/// The naive loader's document: the version is read and never checked.
public final class NaiveFriendList: NSObject, NSCoding {
    public let version: Int
    public let friends: [NaiveFriend]

    public init?(coder: NSCoder) {
        version = coder.decodeInteger(forKey: "version")
        friends = coder.decodeObject(forKey: "friends") as! [NaiveFriend]
    }

    public func encode(with coder: NSCoder) {
        coder.encode(version, forKey: "version")
        coder.encode(friends as NSArray, forKey: "friends")
    }
}
