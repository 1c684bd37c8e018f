import Foundation

// Version 2 of the friend-list app: a friend may have a nickname. The same document, archived
// under the same class names (`FriendListLoaders.FriendList`, `FriendListLoaders.Friend`) as
// version 1, as one app's next release archives its classes: a version-2 file synced to a
// device still running version 1 is read by version 1's loader. (Both versions live in this
// one module here, so version 2's classes carry other Swift names: they archive under version
// 1's classes (`classForKeyedArchiver`; swift-corelibs-foundation ignores `setClassName`) and
// version 2's unarchiver reads those names as version 2's classes.)

/// A friend of version 2: a name, a birthday and an optional nickname.
public final class FriendV2: NSObject, NSSecureCoding {
    public static var supportsSecureCoding: Bool { true }

    public let name: String
    public let birthday: Date
    /// New in version 2; nil in every file of version 1.
    public let nickname: String?

    public init(name: String, birthday: Date, nickname: String?) {
        self.name = name
        self.birthday = birthday
        self.nickname = nickname
    }

    /// Archived under version 1's class name.
    public override var classForKeyedArchiver: AnyClass? { Friend.self }

    public func encode(with coder: NSCoder) {
        coder.encode(name as NSString, forKey: "name")
        coder.encode(birthday as NSDate, forKey: "birthday")
        if let nickname { coder.encode(nickname as NSString, forKey: "nickname") }
    }

    public init?(coder: NSCoder) {
        guard let name = coder.decodeObject(of: NSString.self, forKey: "name"),
            let birthday = coder.decodeObject(of: NSDate.self, forKey: "birthday")
        else {
            return nil
        }
        self.name = name as String
        self.birthday = birthday as Date
        if coder.containsValue(forKey: "nickname") {
            guard let nickname = coder.decodeObject(of: NSString.self, forKey: "nickname") else { return nil }
            self.nickname = nickname as String
        } else {
            nickname = nil
        }
        super.init()
    }

    /// A line of version 2's digest: name, birthday, and the nickname when there is one.
    public var digest: String {
        "\(name)\t\(birthday.timeIntervalSinceReferenceDate)" + (nickname.map { "\t\($0)" } ?? "")
    }
}

/// The friend-list document of version 2: reads version 1 and 2, writes 2.
public final class FriendListV2: NSObject, NSSecureCoding {
    public static var supportsSecureCoding: Bool { true }
    /// The version this build writes; it reads this one and every older one.
    public static let currentVersion = 2

    /// The version of the file it was read from (in memory, the document is always version 2).
    public let version: Int
    public let friends: [FriendV2]

    public init(version: Int = FriendListV2.currentVersion, friends: [FriendV2]) {
        self.version = version
        self.friends = friends
    }

    /// Archived under version 1's class name.
    public override var classForKeyedArchiver: AnyClass? { FriendList.self }

    public func encode(with coder: NSCoder) {
        coder.encode(FriendListV2.currentVersion, forKey: "version")
        coder.encode(friends as NSArray, forKey: "friends")
    }

    /// Reads version 1 (friends without nicknames) and version 2; a newer document's contents
    /// are left alone for the loader's version switch.
    public init?(coder: NSCoder) {
        guard coder.containsValue(forKey: "version") else { return nil }
        version = coder.decodeInteger(forKey: "version")
        guard version <= FriendListV2.currentVersion else {
            friends = []
            super.init()
            return
        }
        guard version >= 1,
            let array = coder.decodeObject(of: [NSArray.self, FriendV2.self], forKey: "friends") as? NSArray,
            let friends = array as? [FriendV2]
        else {
            return nil
        }
        self.friends = friends
        super.init()
    }

    /// The loaders' digest: `version 2`, then a line per friend. A document read from a file of
    /// version 1 is a document of version 2 once loaded, so its digest says version 2 too.
    public var digest: String {
        (["version \(FriendListV2.currentVersion)"] + friends.map(\.digest)).joined(separator: "\n")
    }
}

/// Version 2's loader and writer, hardened as version 1's: a reason for every failure, the
/// archive checked before Foundation reads it, a version switch, the app's own checks.
public enum FriendListV2Store {
    /// The classes a friend list archive may name (the same as version 1's).
    public static let allowedClassNames = HardenedFriendListLoader.allowedClassNames
    public static let maxNicknameLength = 40

    /// Loads the file at `path`.
    public static func load(path: String) throws(FriendListLoadError) -> FriendListV2 {
        guard FileManager.default.fileExists(atPath: path) else { throw FriendListLoadError("not-found", "\(path) does not exist") }
        guard let data = FileManager.default.contents(atPath: path) else { throw FriendListLoadError("unreadable", "cannot read \(path)") }
        return try load(data)
    }

    /// Loads a friend list of version 1 or 2 from the file's bytes.
    public static func load(_ data: Data) throws(FriendListLoadError) -> FriendListV2 {
        guard !data.isEmpty else { throw FriendListLoadError("empty", "the file is empty") }
        guard data.count <= HardenedFriendListLoader.maxFileSize else {
            throw FriendListLoadError("corrupt", "\(data.count) bytes is more than a friend list's \(HardenedFriendListLoader.maxFileSize)")
        }
        do {
            try ArchivePreflight.check(data, allowedClassNames: allowedClassNames, readsVersions: 1...FriendListV2.currentVersion)
        } catch {
            throw FriendListLoadError("corrupt", error.message)
        }
        let unarchiver: NSKeyedUnarchiver
        do {
            unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        } catch {
            throw FriendListLoadError("corrupt", "not a keyed archive: \(error.localizedDescription)")
        }
        unarchiver.requiresSecureCoding = true
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        // This unarchiver reads version 1's class names as version 2's classes.
        unarchiver.setClass(FriendListV2.self, forClassName: "FriendListLoaders.FriendList")
        unarchiver.setClass(FriendV2.self, forClassName: "FriendListLoaders.Friend")
        defer { unarchiver.finishDecoding() }
        let decoded = unarchiver.decodeObject(of: FriendListV2.self, forKey: NSKeyedArchiveRootObjectKey)
        guard let list = decoded, unarchiver.error == nil else {
            let why = (unarchiver.error as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw FriendListLoadError("corrupt", why ?? "the root object is not a friend list")
        }
        switch list.version {
        case 1...FriendListV2.currentVersion:
            break
        case (FriendListV2.currentVersion + 1)...:
            throw FriendListLoadError("unsupported-version", "version \(list.version) is newer than \(FriendListV2.currentVersion)")
        default:
            throw FriendListLoadError("corrupt", "version \(list.version) is not a valid version")
        }
        if let problem = validateUserData(list) { throw FriendListLoadError("corrupt", problem) }
        return list
    }

    /// The app's own check of a decoded document: nil when it is valid.
    public static func validateUserData(_ list: FriendListV2) -> String? {
        for (index, friend) in list.friends.enumerated() {
            if friend.name.isEmpty { return "friends[\(index)].name: empty" }
            if !HardenedFriendListLoader.birthdayRange.contains(friend.birthday) {
                return "friends[\(index)].birthday: \(friend.birthday.timeIntervalSinceReferenceDate) is outside 1900...2100"
            }
            if let nickname = friend.nickname, nickname.isEmpty || nickname.count > maxNicknameLength {
                return "friends[\(index)].nickname: must have 1...\(maxNicknameLength) characters"
            }
        }
        return nil
    }

    /// The archive version 2 saves: binary, as NSKeyedArchiver writes it.
    public static func save(_ list: FriendListV2) throws(FriendListLoadError) -> Data {
        do {
            return try NSKeyedArchiver.archivedData(withRootObject: list, requiringSecureCoding: true)
        } catch {
            throw FriendListLoadError("unwritable", "NSKeyedArchiver failed: \(error.localizedDescription)")
        }
    }
}
