// friend-list-hardened PATH: the hardened friend-list loader
// (FriendListLoaders.HardenedFriendListLoader) as a target-protocol executable: exit 0 with a
// line per friend, or exit 1 with `reason: WORD` and the message. Started by
// `corrupt-fuzz run --worker`, it serves input after input (CorruptFuzzWorker).
import CorruptFuzzWorker
import FriendListLoaders
import Foundation

guard CommandLine.arguments.count == 2 || CorruptFuzzWorker.isWorker else {
    FileHandle.standardError.write(Data("reason: usage\nusage: friend-list-hardened PATH\n".utf8))
    exit(2)
}
CorruptFuzzWorker.serveFiles { path in
    try HardenedFriendListLoader.load(path: path ?? "/dev/stdin")
} digest: { list in
    (["version \(list.version)"] + list.friends.map(\.digest)).joined(separator: "\n")
}
