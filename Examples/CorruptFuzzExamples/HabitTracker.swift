import CorruptFuzzSchema

/// One habit: a name and the days it was done.
public struct Habit: Sendable, Hashable {
    public var name: String
    /// Day numbers since 1970-01-01, strictly increasing.
    public var days: [Int32]

    public init(name: String, days: [Int32]) {
        self.name = name
        self.days = days
    }
}

/// A habit-tracker document, the user data of a fitness app.
public struct HabitDocument: Sendable, Hashable {
    public var version: UInt16
    public var habits: [Habit]

    public init(version: UInt16 = HabitTracker.currentVersion, habits: [Habit]) {
        self.version = version
        self.habits = habits
    }
}

/// The habit-tracker binary format: the demo's format, with its encoder and strict reference
/// validator.
///
/// All integers are little-endian:
/// ```
/// magic "HBTS" · version u16 · habitCount u32 ·
///   habitCount × (nameLength u16 · name UTF-8 · dateCount u32 · dateCount × day i32) ·
/// crc32 u32 (zlib's CRC-32 of every byte before it)
/// ```
/// Checks, in this order, with the reason each failure gets: no bytes → `empty`; bad magic →
/// `corrupt`; version 0 → `corrupt`, above ``currentVersion`` → `unsupported-version` (before
/// the CRC: a newer app may change the layout); wrong CRC → `corrupt`; then the structure →
/// `corrupt`.
public enum HabitTracker {
    public static let currentVersion: UInt16 = 1
    public static let magic: [UInt8] = Array("HBTS".utf8)
    public static let maxHabits: UInt32 = 10_000
    public static let maxDates: UInt32 = 100_000
    public static let maxNameLength = 256
    /// The last valid day: 2170-01-01.
    public static let maxDay: Int32 = 73_048

    /// A precise description of what is wrong with a file.
    public struct Violation: Error, Sendable, Hashable, CustomStringConvertible {
        /// The reason word a loader should give: `empty`, `corrupt`, `unsupported-version`.
        public var reason: String
        /// What is wrong and where, e.g. `habits[2].dates.count: 4294967295 exceeds limit 100000`.
        public var message: String

        public init(reason: String, message: String) {
            self.reason = reason
            self.message = message
        }

        public var description: String { "\(reason): \(message)" }
    }

    // MARK: - Encoding

    /// Encodes a document, computing the CRC.
    public static func encode(_ document: HabitDocument) -> [UInt8] {
        var out = magic
        append(&out, document.version)
        append(&out, UInt32(document.habits.count))
        for habit in document.habits {
            let name = Array(habit.name.utf8)
            append(&out, UInt16(name.count))
            out += name
            append(&out, UInt32(habit.days.count))
            for day in habit.days { append(&out, UInt32(bitPattern: day)) }
        }
        append(&out, crc32(out))
        return out
    }

    private static func append(_ out: inout [UInt8], _ value: some FixedWidthInteger) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    // MARK: - Validation and decoding

    /// Returns the first violation in `bytes`, or nil when they are a valid document.
    public static func validate(_ bytes: [UInt8]) -> Violation? {
        do {
            _ = try decode(bytes)
            return nil
        } catch {
            return error
        }
    }

    /// Decodes and fully validates a document.
    /// - Throws: The first ``Violation``.
    public static func decode(_ bytes: [UInt8]) throws(Violation) -> HabitDocument {
        func corrupt(_ message: String) -> Violation { Violation(reason: "corrupt", message: message) }
        guard !bytes.isEmpty else { throw Violation(reason: "empty", message: "the file is empty") }
        guard bytes.count >= 4, Array(bytes[0..<4]) == magic else { throw corrupt(#"magic: expected "HBTS""#) }
        guard bytes.count >= 6 else { throw corrupt("version: file ends at byte \(bytes.count)") }
        let version = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
        guard version != 0 else { throw corrupt("version: 0 is not a version") }
        guard version <= currentVersion else {
            throw Violation(reason: "unsupported-version", message: "version: \(version) is newer than supported \(currentVersion)")
        }
        guard bytes.count >= 14 else { throw corrupt("habits.count: file ends at byte \(bytes.count)") }
        let body = bytes.count - 4
        let stored = read32(bytes, body)
        let computed = crc32(bytes[0..<body])
        guard stored == computed else {
            throw corrupt("crc32: stored \(hex(stored)) != computed \(hex(computed))")
        }
        var reader = Reader(bytes: bytes, end: body, offset: 6)
        let count = try reader.u32("habits.count")
        guard count <= maxHabits else { throw corrupt("habits.count: \(count) exceeds limit \(maxHabits)") }
        var habits: [Habit] = []
        for index in 0..<Int(count) {
            let path = "habits[\(index)]"
            let nameLength = Int(try reader.u16("\(path).name.length"))
            guard nameLength > 0 else { throw corrupt("\(path).name: is empty") }
            guard nameLength <= maxNameLength else { throw corrupt("\(path).name.length: \(nameLength) exceeds limit \(maxNameLength)") }
            let nameBytes = try reader.bytes(nameLength, "\(path).name")
            guard let name = String(validating: nameBytes, as: UTF8.self) else {
                throw corrupt("\(path).name: invalid UTF-8 at byte \(firstInvalidUTF8(nameBytes))")
            }
            let dateCount = try reader.u32("\(path).dates.count")
            guard dateCount <= maxDates else { throw corrupt("\(path).dates.count: \(dateCount) exceeds limit \(maxDates)") }
            guard Int(dateCount) * 4 <= reader.remaining else {
                throw corrupt("\(path).dates.count: \(dateCount) dates need \(Int(dateCount) * 4) bytes, \(reader.remaining) left")
            }
            var days: [Int32] = []
            days.reserveCapacity(Int(dateCount))
            for d in 0..<Int(dateCount) {
                let day = Int32(bitPattern: try reader.u32("\(path).dates[\(d)]"))
                guard day >= 0, day <= maxDay else { throw corrupt("\(path).dates[\(d)]: day \(day) is outside 0...\(maxDay)") }
                if let last = days.last, day <= last {
                    throw corrupt("\(path).dates[\(d)]: day \(day) is not after \(last)")
                }
                days.append(day)
            }
            habits.append(Habit(name: name, days: days))
        }
        guard reader.remaining == 0 else { throw corrupt("trailing: \(reader.remaining) bytes after last habit") }
        return HabitDocument(version: version, habits: habits)
    }

    private struct Reader {
        let bytes: [UInt8]
        let end: Int
        var offset: Int
        var remaining: Int { end - offset }

        mutating func bytes(_ count: Int, _ path: String) throws(Violation) -> ArraySlice<UInt8> {
            guard count <= remaining else {
                throw Violation(reason: "corrupt", message: "\(path): needs \(count) bytes, \(remaining) left")
            }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }

        mutating func u16(_ path: String) throws(Violation) -> UInt16 {
            let b = try bytes(2, path)
            return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8
        }

        mutating func u32(_ path: String) throws(Violation) -> UInt32 {
            _ = try bytes(4, path)
            return HabitTracker.read32(bytes, offset - 4)
        }
    }

    /// The offset of the first byte that is not part of a valid UTF-8 scalar.
    private static func firstInvalidUTF8(_ bytes: ArraySlice<UInt8>) -> Int {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while case .valid(let scalar) = parser.parseScalar(from: &iterator) { offset += scalar.count }
        return offset
    }

    static func read32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    // MARK: - CRC-32

    /// zlib's CRC-32 (IEEE 802.3) of `bytes`.
    public static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        Checksum.compute(.crc32, bytes)
    }

    // MARK: - Samples

    /// Small realistic documents: the demo's seed files.
    public static func sampleDocuments() -> [String: HabitDocument] {
        [
            "run-and-read": HabitDocument(habits: [
                Habit(name: "Run 5 km", days: [20_010, 20_011, 20_013, 20_014, 20_015, 20_020]),
                Habit(name: "Read 20 pages", days: [20_001, 20_002, 20_003, 20_004, 20_005, 20_006, 20_007, 20_030]),
            ]),
            "empty-list": HabitDocument(habits: []),
            "no-dates": HabitDocument(habits: [Habit(name: "Floss", days: [])]),
            "unicode-name": HabitDocument(habits: [
                Habit(name: "Méditer 🧘", days: [19_990, 19_991, 19_992]),
                Habit(name: "水を飲む", days: [20_100]),
            ]),
        ]
    }
}
