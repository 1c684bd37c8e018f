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

    /// The checksum of `bytes[range]`, read straight from the array's storage (every input of
    /// a campaign has its checksum computed, by the validator and by the mutator).
    public static func compute(_ algorithm: ChecksumRule.Algorithm, _ bytes: [UInt8], _ range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            let covered = UnsafeBufferPointer(rebasing: buffer[range])
            guard algorithm == .crc32 else { return compute(algorithm, covered) }
            return crcTable.withUnsafeBufferPointer { table in
                var crc: UInt32 = 0xFFFF_FFFF
                for byte in covered { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
                return crc ^ 0xFFFF_FFFF
            }
        }
    }

    public static func compute(_ algorithm: ChecksumRule.Algorithm, _ bytes: some Sequence<UInt8>) -> UInt32 {
        switch algorithm {
        case .crc32:
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
            return crc ^ 0xFFFF_FFFF
        case .adler32:
            var a: UInt32 = 1, b: UInt32 = 0
            for byte in bytes {
                a = (a + UInt32(byte)) % 65521
                b = (b + a) % 65521
            }
            return b << 16 | a
        }
    }
}
