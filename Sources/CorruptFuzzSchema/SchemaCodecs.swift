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
    /// CRC-32 (the zlib polynomial) tables for slicing by 8: table k (at 256 * k) gives a byte's
    /// contribution k bytes before the end of an 8-byte block, so a block costs eight lookups
    /// and no dependency from byte to byte.
    private static let crcTables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            tables[n] = c
        }
        for k in 1..<8 {
            for n in 0..<256 {
                let previous = tables[256 * (k - 1) + n]
                tables[256 * k + n] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return tables
    }()

    public static func compute(_ algorithm: ChecksumRule.Algorithm, _ bytes: some Sequence<UInt8>) -> UInt32 {
        // Files and their slices are contiguous: sum them from a buffer, without the generic
        // iteration and bounds checks.
        if let sum = bytes.withContiguousStorageIfAvailable({ compute(algorithm, buffer: $0) }) { return sum }
        return Array(bytes).withUnsafeBufferPointer { compute(algorithm, buffer: $0) }
    }

    private static func compute(_ algorithm: ChecksumRule.Algorithm, buffer bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        switch algorithm {
        case .crc32:
            return crcTables.withUnsafeBufferPointer { t in
                var crc: UInt32 = 0xFFFF_FFFF
                let raw = UnsafeRawBufferPointer(bytes)
                var i = 0
                while i + 8 <= raw.count {
                    let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    let low = UInt32(truncatingIfNeeded: word) ^ crc
                    let high = UInt32(truncatingIfNeeded: word >> 32)
                    crc =
                        t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                        ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                        ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                        ^ t[256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                    i += 8
                }
                while i < raw.count {
                    crc = t[Int((crc ^ UInt32(raw[i])) & 0xFF)] ^ (crc >> 8)
                    i += 1
                }
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
