// friend-list-naive PATH: the naive friend-list loader (FriendListLoaders.NaiveFriendListLoader)
// as a target-protocol executable: exit 0 with a line per friend, or exit 1 with `reason: WORD`.
import FriendListLoaders
import Foundation

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("reason: usage\nusage: friend-list-naive PATH\n".utf8))
    exit(2)
}
do {
    let list = try NaiveFriendListLoader.load(path: CommandLine.arguments[1])
    print("version \(list.version)")
    for friend in list.friends { print("\(friend.name)\t\(friend.birthday.timeIntervalSinceReferenceDate)") }
} catch {
    FileHandle.standardError.write(Data("reason: \(error.reason)\n\(error.message)\n".utf8))
    exit(1)
}
