// friend-list-v2: version 2 of the friend-list app (FriendListLoaders.FriendListV2Store), whose
// friends may have a nickname.
//
//   friend-list-v2 PATH            loads a friend list of version 1 or 2: exit 0 with a line per
//                                  friend, or exit 1 with `reason: WORD` (a persistent worker
//                                  under `corrupt-fuzz run --worker`)
//   friend-list-v2 resave IN OUT   loads IN and saves it as version 2 to OUT (a temporary file,
//                                  then a rename), as the app does when it opens and saves a
//                                  file: the newer writer of `corrupt-fuzz skew`
import CorruptFuzzWorker
import Foundation
import FriendListLoaders

func fail(_ reason: String, _ message: String, status: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("reason: \(reason)\n\(message)\n".utf8))
    exit(status)
}

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "resave" {
    let list: FriendListV2
    do {
        list = try FriendListV2Store.load(path: arguments[2])
    } catch {
        fail(error.reason, error.message)
    }
    do {
        try FriendListV2Store.save(list).write(to: URL(fileURLWithPath: arguments[3]), options: .atomic)
    } catch let error as FriendListLoadError {
        fail(error.reason, error.message)
    } catch {
        fail("unwritable", "cannot write \(arguments[3]): \(error.localizedDescription)")
    }
    exit(0)
}
guard arguments.count == 2 || CorruptFuzzWorker.isWorker else {
    fail("usage", "usage: friend-list-v2 PATH | friend-list-v2 resave IN OUT", status: 2)
}
CorruptFuzzWorker.serveFiles { path in
    try FriendListV2Store.load(path: path ?? "/dev/stdin")
} digest: { list in
    list.digest
}
