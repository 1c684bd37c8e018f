// The naive habit loader, as a function, so tests can call it in-process; the
// habit-loader-naive executable wraps it. It works on every valid file and has the bugs such
// loaders really have:
// - trusts every length and count: slicing past the end traps (crash), and reserving room for
//   a lying count asks for gigabytes (oom);
// - never checks the version or the CRC, nor what follows the last habit (silent acceptance);
// - walks the calendar day by day from the first to the last date to find the longest streak,
//   so one corrupted date means billions of iterations (hang);
// - calls every failure it does notice "corrupt", an empty file included (wrong reason).

/// A loaded habit: its name, its days, and its longest streak.
public struct LoadedHabit: Sendable, Hashable {
    public var name: String
    public var days: [Int64]
    public var longestStreak: Int

    public init(name: String, days: [Int64], longestStreak: Int) {
        self.name = name
        self.days = days
        self.longestStreak = longestStreak
    }

    /// The digest line both loaders print.
    public var digest: String { "\(name): \(days.count) days, longest streak \(longestStreak)" }
}

/// Why a load failed, in the words of the target protocol (`reason: WORD`).
public struct HabitLoadError: Error, Sendable, Hashable {
    public var reason: String
    public var message: String

    public init(reason: String, message: String) {
        self.reason = reason
        self.message = message
    }
}

/// The loader a hurried app developer writes.
public enum NaiveHabitLoader {
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

    static func longestStreak(_ days: [Int64]) -> Int {
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

    /// Loads a habit file's bytes (and may trap, hang or accept garbage: see above).
    public static func load(_ bytes: [UInt8]) throws(HabitLoadError) -> [LoadedHabit] {
        guard bytes.count >= 4, bytes[0..<4] == [0x48, 0x42, 0x54, 0x53] else {
            throw HabitLoadError(reason: "corrupt", message: "not a habit file")
        }
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
        return habits.map { LoadedHabit(name: $0.name, days: $0.days, longestStreak: longestStreak($0.days)) }
    }
}
