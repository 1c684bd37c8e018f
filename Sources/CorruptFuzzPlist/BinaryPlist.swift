import CorruptFuzzCore
/// A binary property list (`bplist00`) as it is laid out: its object table, trailer fields
/// and the encoding choices of each object, so an unmutated file writes back byte for byte
/// and a mutation controls every byte it corrupts.
///
/// XML property lists read into the same object table (``XMLPlistReader``), so the archive
/// checker and the graph mutations work on either encoding; ``PropertyListFile`` reads and
/// writes both.
///
/// corrupt-fuzz owns this layer rather than going through PropertyListSerialization, because
/// fuzzing needs to lie in it: a trailer that claims more objects than there are, an offset into
/// the middle of an object, a reference to an object that does not exist.
public struct BinaryPlist: Sendable, Hashable {
    /// One object of the table.
    public indirect enum Object: Sendable, Hashable {
        case null
        case bool(Bool)
        case fill
        /// An integer, with the log2 of its byte width (0...4) as written.
        case integer(Int128, widthLog2: Int)
        /// A real, with the log2 of its byte width (2 or 3).
        case real(Double, widthLog2: Int)
        /// A date: seconds since 2001-01-01.
        case date(Double)
        case data([UInt8], length: LengthEncoding)
        case ascii([UInt8], length: LengthEncoding)
        case utf16([UInt16], length: LengthEncoding)
        /// A keyed archive's object reference, with its byte width.
        case uid(UInt64, width: Int)
        case array([Int], length: LengthEncoding)
        case set([Int], length: LengthEncoding)
        case dictionary(keys: [Int], values: [Int], length: LengthEncoding)

        /// The object references it holds.
        public var references: [Int] {
            switch self {
            case .array(let refs, _), .set(let refs, _): refs
            case .dictionary(let keys, let values, _): keys + values
            default: []
            }
        }
    }

    /// How a count was written: in the marker's low nibble, or as a following integer object
    /// of 2^widthLog2 bytes.
    public enum LengthEncoding: Sendable, Hashable {
        case inline
        case extended(widthLog2: Int)

        public static func natural(_ count: Int) -> LengthEncoding {
            if count < 15 { return .inline }
            return .extended(widthLog2: count <= 0xFF ? 0 : count <= 0xFFFF ? 1 : count <= 0xFFFF_FFFF ? 2 : 3)
        }
    }

    public var objects: [Object]
    public var topObject: Int
    /// Bytes per offset-table entry (1...8).
    public var offsetIntSize: Int
    /// Bytes per object reference (1...8).
    public var objectRefSize: Int
    public var sortVersion: UInt8
    /// The object offsets as read (for layouts that are not in index order); nil to lay out
    /// objects contiguously in index order, as Foundation does.
    public var offsets: [Int]?

    public init(objects: [Object], topObject: Int, offsetIntSize: Int? = nil, objectRefSize: Int? = nil, sortVersion: UInt8 = 0) {
        self.objects = objects
        self.topObject = topObject
        self.objectRefSize = objectRefSize ?? Self.bytesNeeded(UInt64(objects.count))
        self.offsetIntSize = offsetIntSize ?? 1
        self.sortVersion = sortVersion
        offsets = nil
    }

    public static func bytesNeeded(_ value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }

    /// Sets the reference and offset widths as Foundation's writer chooses them for the objects
    /// laid out contiguously in index order (1, 2, 4 or 8 bytes, enough for the object count and
    /// for the offset table's position), and drops recorded offsets: the layout a graph that did
    /// not come from a binary file (an XML property list, say) is written with.
    public mutating func fitLayout() {
        offsets = nil
        // Foundation's reader wants 2^(8 × objectRefSize) > numObjects.
        objectRefSize = Self.bytesNeeded(UInt64(objects.count))
        var tableStart = 8
        for object in objects { tableStart += BinaryPlistWriter.encodedSize(object, refSize: objectRefSize) }
        offsetIntSize = Self.bytesNeeded(UInt64(tableStart))
    }
}

extension BinaryPlist.Object {
    /// A string as Foundation's binary writer encodes it: ASCII when every character is, UTF-16
    /// otherwise.
    public static func naturalString(_ string: String) -> Self {
        let utf8 = Array(string.utf8)
        if utf8.allSatisfy({ $0 < 0x80 }) { return .ascii(utf8, length: .natural(utf8.count)) }
        let units = Array(string.utf16)
        return .utf16(units, length: .natural(units.count))
    }

    /// An integer with the width Foundation's binary writer gives it: negative ones in 8 bytes,
    /// others in the fewest of 1, 2, 4 or 8 bytes, and those past Int64.max in 16.
    public static func naturalInteger(_ value: Int128) -> Self {
        let widthLog2 = value < 0 ? 3 : value <= 0xFF ? 0 : value <= 0xFFFF ? 1 : value <= 0xFFFF_FFFF ? 2 : value <= Int128(Int64.max) ? 3 : 4
        return .integer(value, widthLog2: widthLog2)
    }

    /// A keyed archive's UID in the fewest of 1, 2, 4 or 8 bytes.
    public static func naturalUID(_ value: UInt64) -> Self {
        .uid(value, width: BinaryPlist.bytesNeeded(value))
    }

    /// The text of a string object; nil for other objects.
    public var stringValue: String? {
        switch self {
        case .ascii(let bytes, _): String(decoding: bytes, as: UTF8.self)
        case .utf16(let units, _): String(decoding: units, as: UTF16.self)
        default: nil
        }
    }
}
