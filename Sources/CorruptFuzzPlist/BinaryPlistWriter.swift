/// Writes a ``BinaryPlist`` as bytes: header, objects (in index order, or at the offsets read),
/// offset table, trailer.
public enum BinaryPlistWriter {
    public static func write(_ plist: BinaryPlist) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        if let fixed = plist.offsets, fixed.count == plist.objects.count {
            // Place objects where they were; gaps are zero-filled.
            let encoded = plist.objects.map { encode($0, refSize: plist.objectRefSize) }
            let end = zip(fixed, encoded).map { $0 + $1.count }.max() ?? 8
            out += [UInt8](repeating: 0, count: max(0, end - 8))
            for (offset, bytes) in zip(fixed, encoded) { out.replaceSubrange(offset..<(offset + bytes.count), with: bytes) }
            offsets = fixed
        } else {
            for object in plist.objects {
                offsets.append(out.count)
                out += encode(object, refSize: plist.objectRefSize)
            }
        }
        let tableStart = out.count
        for offset in offsets { appendUInt(&out, UInt64(offset), plist.offsetIntSize) }
        out += [0, 0, 0, 0, 0, plist.sortVersion, UInt8(plist.offsetIntSize), UInt8(plist.objectRefSize)]
        appendUInt(&out, UInt64(plist.objects.count), 8)
        appendUInt(&out, UInt64(plist.topObject), 8)
        appendUInt(&out, UInt64(tableStart), 8)
        return out
    }

    /// `encode(object, refSize:).count`, without encoding.
    static func encodedSize(_ object: BinaryPlist.Object, refSize: Int) -> Int {
        func header(_ count: Int, _ length: BinaryPlist.LengthEncoding) -> Int {
            switch length {
            case .inline where count < 15: 1
            case .inline: header(count, .natural(count))
            case .extended(let widthLog2): 2 + (1 << widthLog2)
            }
        }
        switch object {
        case .null, .bool, .fill: return 1
        case .integer(_, let widthLog2), .real(_, let widthLog2): return 1 + (1 << widthLog2)
        case .date: return 9
        case .data(let bytes, let length), .ascii(let bytes, let length): return header(bytes.count, length) + bytes.count
        case .utf16(let units, let length): return header(units.count, length) + 2 * units.count
        case .uid(_, let width): return 1 + width
        case .array(let refs, let length), .set(let refs, let length): return header(refs.count, length) + refs.count * refSize
        case .dictionary(let keys, let values, let length): return header(keys.count, length) + (keys.count + values.count) * refSize
        }
    }

    static func appendUInt(_ out: inout [UInt8], _ value: UInt64, _ width: Int) {
        for i in (0..<width).reversed() { out.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * i))) }
    }

    static func header(_ type: UInt8, _ count: Int, _ length: BinaryPlist.LengthEncoding, into out: inout [UInt8]) {
        switch length {
        case .inline where count < 15:
            out.append(type << 4 | UInt8(count))
        case .inline:
            header(type, count, .natural(count), into: &out)
        case .extended(let widthLog2):
            out.append(type << 4 | 0x0F)
            out.append(0x10 | UInt8(widthLog2))
            appendUInt(&out, UInt64(count), 1 << widthLog2)
        }
    }

    static func encode(_ object: BinaryPlist.Object, refSize: Int) -> [UInt8] {
        var out: [UInt8] = []
        switch object {
        case .null: out.append(0x00)
        case .bool(let b): out.append(b ? 0x09 : 0x08)
        case .fill: out.append(0x0F)
        case .integer(let v, let widthLog2):
            out.append(0x10 | UInt8(widthLog2))
            if widthLog2 == 4 {
                appendUInt(&out, UInt64(truncatingIfNeeded: v >> 64), 8)
                appendUInt(&out, UInt64(truncatingIfNeeded: v), 8)
            } else {
                appendUInt(&out, UInt64(truncatingIfNeeded: v), 1 << widthLog2)
            }
        case .real(let d, let widthLog2):
            out.append(0x20 | UInt8(widthLog2))
            appendUInt(&out, widthLog2 == 2 ? UInt64(Float(d).bitPattern) : d.bitPattern, 1 << widthLog2)
        case .date(let d):
            out.append(0x33)
            appendUInt(&out, d.bitPattern, 8)
        case .data(let b, let length):
            header(0x4, b.count, length, into: &out)
            out += b
        case .ascii(let b, let length):
            header(0x5, b.count, length, into: &out)
            out += b
        case .utf16(let units, let length):
            header(0x6, units.count, length, into: &out)
            for u in units { appendUInt(&out, UInt64(u), 2) }
        case .uid(let v, let width):
            out.append(0x80 | UInt8(width - 1))
            appendUInt(&out, v, width)
        case .array(let refs, let length):
            header(0xA, refs.count, length, into: &out)
            for r in refs { appendUInt(&out, UInt64(r), refSize) }
        case .set(let refs, let length):
            header(0xC, refs.count, length, into: &out)
            for r in refs { appendUInt(&out, UInt64(r), refSize) }
        case .dictionary(let keys, let values, let length):
            header(0xD, keys.count, length, into: &out)
            for r in keys + values { appendUInt(&out, UInt64(r), refSize) }
        }
        return out
    }
}
