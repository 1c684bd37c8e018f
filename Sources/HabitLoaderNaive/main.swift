// habit-loader-naive PATH
//
// Loads a habit-tracker file the way a hurried app developer would. It works on every valid
// file, and it has the bugs such loaders really have (the demo finds them all):
// - force-unwraps the file read, so a missing file crashes it;
// - trusts every length and count: slicing past the end traps (crash), and reserving room for
//   a lying count asks for gigabytes (oom);
// - never checks the version or the CRC, nor what follows the last habit (silent acceptance);
// - walks the calendar day by day from the first to the last date to find the longest streak,
//   so one corrupted date means billions of iterations (hang);
// - calls every failure it does notice "corrupt", an empty file included (wrong reason).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes `text` to standard error (fd 2).
func printError(_ text: String) {
    var text = text
    text.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}

func readWholeFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return bytes
}

func reject(_ reason: String) -> Never {
    printError("reason: \(reason)\n")
    exit(1)
}

struct Parser {
    let bytes: [UInt8]
    var offset = 0

    mutating func u16() -> Int {
        let value = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
        offset += 2
        return value
    }

    mutating func u32() -> Int {
        let value = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
        offset += 4
        return value
    }

    mutating func string(_ length: Int) -> String {
        let name = String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
        offset += length
        return name
    }
}

func longestStreak(_ days: [Int64]) -> Int {
    guard let first = days.min(), let last = days.max() else { return 0 }
    let done = Set(days)
    var best = 0, current = 0
    var day = first
    while day <= last {
        if done.contains(day) {
            current += 1
            best = max(best, current)
        } else {
            current = 0
        }
        day += 1
    }
    return best
}

let bytes = readWholeFile(CommandLine.arguments[1])!
guard bytes.count >= 4, bytes[0..<4] == [0x48, 0x42, 0x54, 0x53] else { reject("corrupt") }
var parser = Parser(bytes: bytes, offset: 6)  // the version is "always 1"
let count = parser.u32()
var habits: [(name: String, days: [Int64])] = []
habits.reserveCapacity(count)
for _ in 0..<count {
    let name = parser.string(parser.u16())
    let dateCount = parser.u32()
    var days: [Int64] = []
    days.reserveCapacity(dateCount)
    for _ in 0..<dateCount { days.append(Int64(Int32(truncatingIfNeeded: parser.u32()))) }
    habits.append((name, days))
}
for habit in habits {
    print("\(habit.name): \(habit.days.count) days, longest streak \(longestStreak(habit.days))")
}
