// The hardened habit loader, as a function, so tests can call it in-process; the
// habit-loader-hardened executable wraps it. Every length is checked against the bytes that
// remain before anything is allocated, the version before the checksum (a newer app's file is
// "unsupported-version", never "corrupt", so the app keeps it), the CRC before the structure,
// and every failure says why.

/// The loader done right.
public enum HardenedHabitLoader {
    /// Loads a habit file's bytes, or throws the reason it cannot.
    public static func load(_ bytes: [UInt8]) throws(HabitLoadError) -> [LoadedHabit] {
        try loadHardened(bytes)
    }
}

private let supportedVersion = 1
private let habitLimit = 10_000, dateLimit = 100_000, nameLimit = 256, lastDay = 73_048

private func fail(_ reason: String, _ message: String) -> HabitLoadError { HabitLoadError(reason: reason, message: message) }

private let crcTable: [UInt32] = (0..<256).map { n in
    (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
}

private func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    ~bytes.reduce(~UInt32(0)) { crc, byte in crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
}

/// Reads little-endian fields, never past `end`.
private struct Cursor {
    let bytes: [UInt8]
    let end: Int
    var at: Int

    var left: Int { end - at }

    mutating func take(_ count: Int, _ what: String) throws(HabitLoadError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= left else { throw fail("corrupt", "\(what) runs past the end") }
        defer { at += count }
        return bytes[at..<(at + count)]
    }

    mutating func int(_ width: Int, _ what: String) throws(HabitLoadError) -> Int {
        try take(width, what).reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}

func loadHardened(_ bytes: [UInt8]) throws(HabitLoadError) -> [LoadedHabit] {
    if bytes.isEmpty { throw fail("empty", "the file is empty") }
    if bytes.count < 4 || bytes[0..<4] != [0x48, 0x42, 0x54, 0x53] { throw fail("corrupt", "not a habit-tracker file") }
    if bytes.count < 6 { throw fail("corrupt", "no version") }
    let version = Int(bytes[4]) | Int(bytes[5]) << 8
    if version == 0 { throw fail("corrupt", "version 0") }
    if version > supportedVersion { throw fail("unsupported-version", "version \(version) is newer than \(supportedVersion)") }
    if bytes.count < 14 { throw fail("corrupt", "too short") }
    let end = bytes.count - 4
    var trailer = Cursor(bytes: bytes, end: bytes.count, at: end)
    if try UInt32(trailer.int(4, "crc")) != crc32(bytes[0..<end]) { throw fail("corrupt", "checksum mismatch") }

    var cursor = Cursor(bytes: bytes, end: end, at: 6)
    let count = try cursor.int(4, "habit count")
    if count > habitLimit { throw fail("corrupt", "\(count) habits") }
    var habits: [LoadedHabit] = []
    for index in 0..<count {
        let nameLength = try cursor.int(2, "name length of habit \(index)")
        if nameLength == 0 || nameLength > nameLimit { throw fail("corrupt", "name length \(nameLength) of habit \(index)") }
        guard let name = String(validating: try cursor.take(nameLength, "name of habit \(index)"), as: UTF8.self) else {
            throw fail("corrupt", "name of habit \(index) is not UTF-8")
        }
        let dateCount = try cursor.int(4, "date count of habit \(index)")
        if dateCount > dateLimit || dateCount * 4 > cursor.left { throw fail("corrupt", "\(dateCount) dates in habit \(index)") }
        var days: [Int] = []
        days.reserveCapacity(dateCount)
        for _ in 0..<dateCount {
            let day = Int(Int32(truncatingIfNeeded: try cursor.int(4, "date")))
            if day < 0 || day > lastDay || (days.last.map { day <= $0 } ?? false) {
                throw fail("corrupt", "bad date \(day) in habit \(index)")
            }
            days.append(day)
        }
        habits.append(LoadedHabit(name: name, days: days.map(Int64.init), longestStreak: longestStreak(days)))
    }
    if cursor.left != 0 { throw fail("corrupt", "\(cursor.left) unexpected bytes after the habits") }
    return habits
}

/// The longest run of consecutive days; `days` is strictly increasing, so one pass suffices.
private func longestStreak(_ days: [Int]) -> Int {
    var best = 0, current = 0, previous: Int?
    for day in days {
        current = previous == day - 1 ? current + 1 : 1
        best = max(best, current)
        previous = day
    }
    return best
}
