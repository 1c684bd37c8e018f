func hex(_ value: Int128) -> String {
    let digits = String(UInt64(truncatingIfNeeded: value), radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}

func describe(_ bytes: [UInt8]) -> String {
    if bytes.allSatisfy({ (0x20..<0x7F).contains($0) }) { return "\"\(String(decoding: bytes, as: UTF8.self))\"" }
    return "[" + bytes.map { hex(Int128($0)) }.joined(separator: ", ") + "]"
}

/// Reads and writes integers of any width in either byte order.
public enum IntegerCodec {
    public static func decode(_ raw: some Collection<UInt8>, signed: Bool, bigEndian: Bool) -> Int128 {
        var value: UInt64 = 0
        let ordered = bigEndian ? Array(raw) : raw.reversed()
        for byte in ordered { value = value << 8 | UInt64(byte) }
        let width = raw.count
        if signed, width < 8, value & (1 << UInt64(width * 8 - 1)) != 0 {
            return Int128(value) - (Int128(1) << Int128(width * 8))
        }
        if signed, width == 8 { return Int128(Int64(bitPattern: value)) }
        return Int128(value)
    }

    /// Decodes `bytes[range]` (1 to 8 bytes), as ``decode(_:signed:bigEndian:)`` does, without
    /// copying them.
    static func decode(_ bytes: [UInt8], at range: Range<Int>, signed: Bool, bigEndian: Bool) -> Int128 {
        var value: UInt64 = 0
        if bigEndian {
            for index in range { value = value << 8 | UInt64(bytes[index]) }
        } else {
            for index in range.reversed() { value = value << 8 | UInt64(bytes[index]) }
        }
        let width = range.count
        if signed, width < 8, value & (1 << UInt64(width * 8 - 1)) != 0 {
            return Int128(value) - (Int128(1) << Int128(width * 8))
        }
        if signed, width == 8 { return Int128(Int64(bitPattern: value)) }
        return Int128(value)
    }

    public static func encode(_ value: Int128, width: Int, bigEndian: Bool, into out: inout [UInt8]) {
        let bits = UInt64(truncatingIfNeeded: value)
        for i in 0..<width {
            let shift = bigEndian ? (width - 1 - i) * 8 : i * 8
            out.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
    }
}

/// Checksums a schema can name.
public enum Checksum {
    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func compute(_ algorithm: ChecksumRule.Algorithm, _ bytes: some Sequence<UInt8>) -> UInt32 {
        // Files and their slices are contiguous: sum them from a buffer, without the generic
        // iteration and bounds checks.
        if let sum = bytes.withContiguousStorageIfAvailable({ compute(algorithm, buffer: $0) }) { return sum }
        return Array(bytes).withUnsafeBufferPointer { compute(algorithm, buffer: $0) }
    }

    private static func compute(_ algorithm: ChecksumRule.Algorithm, buffer bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        switch algorithm {
        case .crc32:
            return crcTable.withUnsafeBufferPointer { table in
                var crc: UInt32 = 0xFFFF_FFFF
                for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
                return crc ^ 0xFFFF_FFFF
            }
        case .adler32:
            // zlib's deferral: 5552 bytes cannot overflow the sums before they are reduced,
            // which gives the same result as reducing after every byte.
            var a: UInt32 = 1, b: UInt32 = 0
            var rest = bytes[...]
            while !rest.isEmpty {
                let block = rest.prefix(5552)
                for byte in block {
                    a += UInt32(byte)
                    b += a
                }
                a %= 65521
                b %= 65521
                rest = rest.dropFirst(block.count)
            }
            return b << 16 | a
        }
    }
}
