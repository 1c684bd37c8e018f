import CorruptFuzzCore
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
        func corrupt(_ message: String, at path: String) -> Violation { Violation(.corrupt, message, at: path) }
        if let violation = Violation.intrinsic(for: bytes) { throw violation }
        guard bytes.count >= 4, Array(bytes[0..<4]) == magic else { throw corrupt(#"expected "HBTS""#, at: "magic") }
        guard bytes.count >= 6 else { throw corrupt("file ends at byte \(bytes.count)", at: "version") }
        let version = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
        guard version != 0 else { throw corrupt("0 is not a version", at: "version") }
        guard version <= currentVersion else {
            throw Violation(.unsupportedVersion, "\(version) is newer than supported \(currentVersion)", at: "version")
        }
        guard bytes.count >= 14 else { throw corrupt("file ends at byte \(bytes.count)", at: "habits.count") }
        let body = bytes.count - 4
        let stored = read32(bytes, body)
        let computed = crc32(bytes[0..<body])
        guard stored == computed else {
            throw corrupt("stored \(hex(stored)) != computed \(hex(computed))", at: "crc32")
        }
        var reader = Reader(bytes: bytes, end: body, offset: 6)
        let count = try reader.u32("habits.count")
        guard count <= maxHabits else { throw corrupt("\(count) exceeds limit \(maxHabits)", at: "habits.count") }
        var habits: [Habit] = []
        for index in 0..<Int(count) {
            let path = "habits[\(index)]"
            let nameLength = Int(try reader.u16("\(path).name.length"))
            guard nameLength > 0 else { throw corrupt("is empty", at: "\(path).name") }
            guard nameLength <= maxNameLength else { throw corrupt("\(nameLength) exceeds limit \(maxNameLength)", at: "\(path).name.length") }
            let nameBytes = try reader.bytes(nameLength, "\(path).name")
            guard let name = String(validating: nameBytes, as: UTF8.self) else {
                throw corrupt("invalid UTF-8 at byte \(firstInvalidUTF8(nameBytes))", at: "\(path).name")
            }
            let dateCount = try reader.u32("\(path).dates.count")
            guard dateCount <= maxDates else { throw corrupt("\(dateCount) exceeds limit \(maxDates)", at: "\(path).dates.count") }
            guard Int(dateCount) * 4 <= reader.remaining else {
                throw corrupt("\(dateCount) dates need \(Int(dateCount) * 4) bytes, \(reader.remaining) left", at: "\(path).dates.count")
            }
            var days: [Int32] = []
            days.reserveCapacity(Int(dateCount))
            for d in 0..<Int(dateCount) {
                let day = Int32(bitPattern: try reader.u32("\(path).dates[\(d)]"))
                guard day >= 0, day <= maxDay else { throw corrupt("day \(day) is outside 0...\(maxDay)", at: "\(path).dates[\(d)]") }
                if let last = days.last, day <= last {
                    throw corrupt("day \(day) is not after \(last)", at: "\(path).dates[\(d)]")
                }
                days.append(day)
            }
            habits.append(Habit(name: name, days: days))
        }
        guard reader.remaining == 0 else { throw corrupt("\(reader.remaining) bytes after last habit", at: "trailing") }
        return HabitDocument(version: version, habits: habits)
    }

    private struct Reader {
        let bytes: [UInt8]
        let end: Int
        var offset: Int
        var remaining: Int { end - offset }

        mutating func bytes(_ count: Int, _ path: String) throws(Violation) -> ArraySlice<UInt8> {
            guard count <= remaining else {
                throw Violation(.corrupt, "needs \(count) bytes, \(remaining) left", at: path)
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

/// The habit tracker as a fuzzing format: ``HabitTracker/validate(_:)`` as reference validator.
/// It has no mutator of its own: its structure-aware mutations come from its Kaitai Struct
/// description, `Corpus/schemas/habit-tracker.ksy` (`--schema`).
public struct HabitTrackerFormat: FuzzFormat {
    public let fileExtension = "habits"

    public init() {}

    public var validator: any Validator {
        ClosureValidator(name: "habit-tracker reference validator", contents: { HabitTracker.validate($0).map(Verdict.invalid) ?? .valid })
    }
}
