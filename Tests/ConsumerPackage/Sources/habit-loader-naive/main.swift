import ContactsApp
import Foundation

// The contacts loader as a command, by corrupt-fuzz's target protocol: exit 0 and a name a
// line, or exit 1 and `reason: WORD`. (Named as one of corrupt-fuzz's demo loaders on purpose.)
guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: habit-loader-naive FILE\n".utf8))
    exit(2)
}
do {
    let list = try ContactsFile.load(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1]))
    for name in list.names { print(name) }
} catch let error as ContactsError {
    FileHandle.standardError.write(Data("reason: \(error.reason)\n\(error.message)\n".utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("reason: corrupt\n\(error)\n".utf8))
    exit(1)
}
