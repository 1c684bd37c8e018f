import Foundation

/// The friend list loaded the way the hardening tutorial asks: a reason for every failure,
/// secure coding with `.setErrorAndReturn`, a version switch, and the whole document checked
/// before NSKeyedUnarchiver sees it, with Foundation alone.
///
/// On Linux, Foundation's unarchiver traps on some malformed archives even in that mode (an
/// object of another class than the one asked for, an object that contains itself; see the
/// README), and a trap cannot be caught. So the loader first checks the archive itself
/// (``ArchivePreflight``: a few byte checks, then the archive read as a plain property list
/// with `PropertyListSerialization`, which reports malformed files as errors, then what
/// NSKeyedUnarchiver takes for granted) and only hands Foundation what passes, with only the
/// classes the document uses.
public enum HardenedFriendListLoader {
    /// The classes a friend list archive may name.
    public static let allowedClassNames: Set<String> = [
        "FriendListLoaders.FriendList", "FriendListLoaders.Friend", "NSArray", "NSMutableArray", "NSDate",
    ]
    /// No friend list is larger (about 500 friends in XML, more in binary): a bigger file is
    /// refused before Foundation reads it, which takes it about 4 µs a byte on some XML (an
    /// 800 KB list took 3.4 s).
    public static let maxFileSize = 64 << 10
    /// Birthdays outside 1900-01-01...2100-01-01 are corrupt.
    public static let birthdayRange: ClosedRange<Date> = Date(timeIntervalSince1970: -2_208_988_800)...Date(timeIntervalSince1970: 4_102_444_800)

    /// Loads the file at `path`.
    public static func load(path: String) throws(FriendListLoadError) -> FriendList {
        guard FileManager.default.fileExists(atPath: path) else { throw FriendListLoadError("not-found", "\(path) does not exist") }
        guard let data = FileManager.default.contents(atPath: path) else { throw FriendListLoadError("unreadable", "cannot read \(path)") }
        return try load(data)
    }

    /// Loads a friend list from the file's bytes.
    public static func load(_ data: Data) throws(FriendListLoadError) -> FriendList {
        guard !data.isEmpty else { throw FriendListLoadError("empty", "the file is empty") }
        guard data.count <= maxFileSize else {
            throw FriendListLoadError("corrupt", "\(data.count) bytes is more than a friend list's \(maxFileSize)")
        }
        do {
            try ArchivePreflight.check(data, allowedClassNames: allowedClassNames)
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
        defer { unarchiver.finishDecoding() }
        let decoded = unarchiver.decodeObject(of: FriendList.self, forKey: NSKeyedArchiveRootObjectKey)
        // Check the error even when an object came back: when an element of an array fails
        // to decode, Foundation on Linux drops it, sets `error` and returns the rest.
        guard let list = decoded, unarchiver.error == nil else {
            let why = (unarchiver.error as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            throw FriendListLoadError("corrupt", why ?? "the root object is not a friend list")
        }
        switch list.version {
        case FriendList.currentVersion:
            break
        case (FriendList.currentVersion + 1)...:
            throw FriendListLoadError("unsupported-version", "version \(list.version) is newer than \(FriendList.currentVersion)")
        default:
            throw FriendListLoadError("corrupt", "version \(list.version) is not a valid version")
        }
        if let problem = validateUserData(list) { throw FriendListLoadError("corrupt", problem) }
        return list
    }

    /// The app's own check of a decoded document: nil when it is valid.
    public static func validateUserData(_ list: FriendList) -> String? {
        for (index, friend) in list.friends.enumerated() {
            if friend.name.isEmpty { return "friends[\(index)].name: empty" }
            if !birthdayRange.contains(friend.birthday) {
                return "friends[\(index)].birthday: \(friend.birthday.timeIntervalSinceReferenceDate) is outside 1900...2100"
            }
        }
        return nil
    }
}
