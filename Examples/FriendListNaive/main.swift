// friend-list-naive PATH: the naive friend-list loader (FriendListLoaders.NaiveFriendListLoader)
// as a target-protocol executable: exit 0 with a line per friend, or exit 1 with `reason: WORD`.
// Started by `corrupt-fuzz run --worker`, it serves input after input (CorruptFuzzWorker).
import CorruptFuzzWorker
import FriendListLoaders
import Foundation

guard CommandLine.arguments.count == 2 || CorruptFuzzWorker.isWorker else {
    FileHandle.standardError.write(Data("reason: usage\nusage: friend-list-naive PATH\n".utf8))
    exit(2)
}
CorruptFuzzWorker.serveFiles { path in
    try NaiveFriendListLoader.load(path: path ?? "/dev/stdin")
} digest: { list in
    (["version \(list.version)"] + list.friends.map { "\($0.name)\t\($0.birthday.timeIntervalSinceReferenceDate)" }).joined(separator: "\n")
}
