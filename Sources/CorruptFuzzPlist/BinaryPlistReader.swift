import CorruptFuzzCore
/// Reads a binary property list strictly: every offset, length and reference is checked
/// before it is used, containers may not contain themselves, and the trailer must agree with
/// the file. The message of each failure says exactly which rule broke.
public enum BinaryPlistReader {
    /// Reads `bytes`.
    /// - Throws: ``Violation`` with the first broken rule.
    public static func read(_ bytes: [UInt8]) throws(Violation) -> BinaryPlist {
        guard bytes.count >= 8 + 32 else { throw Violation(.corrupt, "file: \(bytes.count) bytes is shorter than a header and a trailer") }
        guard bytes.starts(with: Array("bplist".utf8)) else { throw Violation(.corrupt, "header: not bplist") }
        guard bytes[6] == 0x30, bytes[7] == 0x30 else {
            throw Violation(.corrupt, "header: version \(String(decoding: bytes[6..<8], as: UTF8.self)) is not 00")
        }
        let t = bytes.count - 32
        let sortVersion = bytes[t + 5]
        let offsetIntSize = Int(bytes[t + 6])
        let objectRefSize = Int(bytes[t + 7])
        let count = readUInt(bytes, t + 8, 8)
        let top = readUInt(bytes, t + 16, 8)
        let tableStart = readUInt(bytes, t + 24, 8)
        guard (1...8).contains(offsetIntSize) else { throw Violation(.corrupt, "trailer.offsetIntSize: \(offsetIntSize) is not 1...8") }
        guard (1...8).contains(objectRefSize) else { throw Violation(.corrupt, "trailer.objectRefSize: \(objectRefSize) is not 1...8") }
        guard count >= 1 else { throw Violation(.corrupt, "trailer.numObjects: 0") }
        guard tableStart >= 8, tableStart < UInt64(t) else {
            throw Violation(.corrupt, "trailer.offsetTableOffset: \(tableStart) is outside 8..<\(t)")
        }
        let (tableBytes, overflow) = count.multipliedReportingOverflow(by: UInt64(offsetIntSize))
        guard !overflow, tableBytes <= UInt64(t) - tableStart else {
            throw Violation(.corrupt, "trailer.numObjects: \(count) offsets of \(offsetIntSize) bytes do not fit before the trailer")
        }
        // As CoreFoundation requires: the offset table ends where the trailer begins.
        guard tableBytes == UInt64(t) - tableStart else {
            throw Violation(.corrupt, "trailer: \(UInt64(t) - tableStart - tableBytes) bytes between the offset table and the trailer")
        }
        guard top < count else { throw Violation(.corrupt, "trailer.topObject: \(top) is not below numObjects \(count)") }
        let addressable: UInt64 = objectRefSize >= 8 ? .max : UInt64(1) << UInt64(objectRefSize * 8)
        // As CoreFoundation requires: the count itself must fit in a reference.
        if objectRefSize < 8, count >= addressable {
            throw Violation(.corrupt, "trailer.objectRefSize: \(objectRefSize) bytes cannot address \(count) objects")
        }
        // As CoreFoundation requires: an offset can reach the start of the offset table.
        if offsetIntSize < 8, tableStart >= UInt64(1) << UInt64(offsetIntSize * 8) {
            throw Violation(.corrupt, "trailer.offsetIntSize: \(offsetIntSize) bytes cannot address the offset table at \(tableStart)")
        }
        let n = Int(count)
        var offsets: [Int] = []
        offsets.reserveCapacity(n)
        for i in 0..<n {
            let offset = readUInt(bytes, Int(tableStart) + i * offsetIntSize, offsetIntSize)
            guard offset >= 8, offset < tableStart else { throw Violation(.corrupt, "offsets[\(i)]: \(offset) is outside the object area 8..<\(tableStart)") }
            offsets.append(Int(offset))
        }
        let reader = ObjectReader(bytes: bytes, end: Int(tableStart), refSize: objectRefSize, count: n)
        var objects: [BinaryPlist.Object] = []
        objects.reserveCapacity(n)
        for i in 0..<n {
            objects.append(try reader.object(at: offsets[i], index: i))
        }
        try checkNamedFill(objects, top: Int(top))
        try checkAcyclic(objects, top: Int(top))
        for (index, object) in objects.enumerated() {
            guard case .dictionary(let keys, _, _) = object else { continue }
            for key in keys {
                switch objects[key] {
                case .ascii, .utf16: continue
                default: throw Violation(.corrupt, "objects[\(index)]: key objects[\(key)] is not a string")
                }
            }
        }
        var plist = BinaryPlist(objects: objects, topObject: Int(top), offsetIntSize: offsetIntSize, objectRefSize: objectRefSize, sortVersion: sortVersion)
        // Keep the layout when it is not the contiguous index order the writer produces.
        var expected = 8
        var contiguous = true
        for (i, object) in objects.enumerated() {
            if offsets[i] != expected { contiguous = false; break }
            expected += BinaryPlistWriter.encodedSize(object, refSize: objectRefSize)
        }
        if !contiguous || expected != Int(tableStart) { plist.offsets = offsets }
        return plist
    }

    static func readUInt(_ bytes: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<width { value = value << 8 | UInt64(bytes[at + i]) }
        return value
    }

    /// A fill byte (0x0F) is padding, not an object: Foundation refuses a file whose top object
    /// or container names one (one that nothing names is never read).
    static func checkNamedFill(_ objects: [BinaryPlist.Object], top: Int) throws(Violation) {
        if case .fill = objects[top] { throw Violation(.corrupt, "trailer.topObject: objects[\(top)] is a fill byte (0x0F), not an object") }
        for (index, object) in objects.enumerated() {
            for ref in object.references {
                guard case .fill = objects[ref] else { continue }
                throw Violation(.corrupt, "objects[\(index)]: names objects[\(ref)], a fill byte (0x0F) where an object belongs")
            }
        }
    }

    /// Containers must not contain themselves (directly or through others): a reader that
    /// follows references would loop forever.
    static func checkAcyclic(_ objects: [BinaryPlist.Object], top: Int) throws(Violation) {
        var state = [UInt8](repeating: 0, count: objects.count)  // 0 new, 1 on the path, 2 done
        var stack: [(Int, Int)] = [(top, 0)]
        state[top] = 1
        while let (index, next) = stack.last {
            let refs = objects[index].references
            if next < refs.count {
                stack[stack.count - 1].1 += 1
                let child = refs[next]
                if state[child] == 1 { throw Violation(.corrupt, "objects[\(index)]: refers back to objects[\(child)], a cycle") }
                if state[child] == 0 {
                    state[child] = 1
                    stack.append((child, 0))
                }
            } else {
                state[index] = 2
                stack.removeLast()
            }
        }
    }
}

struct ObjectReader {
    let bytes: [UInt8]
    let end: Int
    let refSize: Int
    let count: Int

    func need(_ at: Int, _ length: Int, _ what: String) throws(Violation) {
        guard length >= 0, at <= end, length <= end - at else {
            throw Violation(.corrupt, "\(what): needs \(length) bytes at \(at), the object area ends at \(end)")
        }
    }

    func length(_ marker: UInt8, at offset: Int, _ what: String) throws(Violation) -> (Int, BinaryPlist.LengthEncoding, Int) {
        let low = Int(marker & 0x0F)
        if low != 0x0F { return (low, .inline, offset + 1) }
        try need(offset + 1, 1, what)
        let intMarker = bytes[offset + 1]
        guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else {
            throw Violation(.corrupt, "\(what): length marker 0x\(String(intMarker, radix: 16)) is not an integer")
        }
        let widthLog2 = Int(intMarker & 0x0F)
        let width = 1 << widthLog2
        try need(offset + 2, width, what)
        let value = BinaryPlistReader.readUInt(bytes, offset + 2, width)
        guard value <= UInt64(end) else { throw Violation(.corrupt, "\(what): length \(value) is larger than the file") }
        return (Int(value), .extended(widthLog2: widthLog2), offset + 2 + width)
    }

    func refs(_ n: Int, at start: Int, _ what: String) throws(Violation) -> [Int] {
        let (total, overflow) = n.multipliedReportingOverflow(by: refSize)
        guard !overflow else { throw Violation(.corrupt, "\(what): \(n) references overflow") }
        try need(start, total, what)
        return try (0..<n).map { (i: Int) throws(Violation) -> Int in
            let ref = BinaryPlistReader.readUInt(bytes, start + i * refSize, refSize)
            guard ref < UInt64(count) else { throw Violation(.corrupt, "\(what)[\(i)]: reference \(ref) is not below numObjects \(count)") }
            return Int(ref)
        }
    }

    func object(at offset: Int, index: Int) throws(Violation) -> BinaryPlist.Object {
        let what = "objects[\(index)]"
        try need(offset, 1, what)
        let marker = bytes[offset]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: return .null
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            case 0x0F: return .fill
            default: throw Violation(.corrupt, "\(what): unknown marker 0x\(String(marker, radix: 16))")
            }
        case 0x1:
            guard low <= 4 else { throw Violation(.corrupt, "\(what): integer of 2^\(low) bytes") }
            let width = 1 << low
            try need(offset + 1, width, what)
            if width == 16 {
                let high = Int128(Int64(bitPattern: BinaryPlistReader.readUInt(bytes, offset + 1, 8)))
                let lowPart = Int128(BinaryPlistReader.readUInt(bytes, offset + 9, 8))
                return .integer(high << 64 | lowPart, widthLog2: low)
            }
            let raw = BinaryPlistReader.readUInt(bytes, offset + 1, width)
            // 1, 2 and 4-byte integers are unsigned; 8-byte ones signed.
            return .integer(width == 8 ? Int128(Int64(bitPattern: raw)) : Int128(raw), widthLog2: low)
        case 0x2:
            guard low == 2 || low == 3 else { throw Violation(.corrupt, "\(what): real of 2^\(low) bytes") }
            try need(offset + 1, 1 << low, what)
            let raw = BinaryPlistReader.readUInt(bytes, offset + 1, 1 << low)
            return .real(low == 2 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw), widthLog2: low)
        case 0x3:
            guard marker == 0x33 else { throw Violation(.corrupt, "\(what): date marker 0x\(String(marker, radix: 16))") }
            try need(offset + 1, 8, what)
            return .date(Double(bitPattern: BinaryPlistReader.readUInt(bytes, offset + 1, 8)))
        case 0x4, 0x5:
            let (n, encoding, start) = try length(marker, at: offset, what)
            try need(start, n, what)
            let body = Array(bytes[start..<(start + n)])
            if marker >> 4 == 0x4 { return .data(body, length: encoding) }
            if let bad = body.firstIndex(where: { $0 >= 0x80 }) {
                throw Violation(.corrupt, "\(what): ASCII string has byte 0x\(String(body[bad], radix: 16)) at \(bad)")
            }
            return .ascii(body, length: encoding)
        case 0x6:
            let (n, encoding, start) = try length(marker, at: offset, what)
            // CoreFoundation allocates the characters first and fails on none (an empty string is
            // written as ASCII).
            guard n > 0 else { throw Violation(.corrupt, "\(what): a UTF-16 string of no characters, which Foundation refuses") }
            try need(start, n * 2, what)
            let units = (0..<n).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
            if String(decoding: units, as: UTF16.self).utf16.elementsEqual(units) == false {
                throw Violation(.corrupt, "\(what): UTF-16 string has an unpaired surrogate")
            }
            return .utf16(units, length: encoding)
        case 0x8:
            let width = low + 1
            try need(offset + 1, width, what)
            let value = BinaryPlistReader.readUInt(bytes, offset + 1, width)
            // As CoreFoundation requires (and as XML's CF$UID is read): a UID is 32 bits.
            guard value <= UInt64(UInt32.max) else { throw Violation(.corrupt, "\(what): UID \(value) is not a UID (0...4294967295)") }
            return .uid(value, width: width)
        case 0xA, 0xC:
            let (n, encoding, start) = try length(marker, at: offset, what)
            let refs = try refs(n, at: start, what)
            return marker >> 4 == 0xA ? .array(refs, length: encoding) : .set(refs, length: encoding)
        case 0xD:
            let (n, encoding, start) = try length(marker, at: offset, what)
            let keys = try refs(n, at: start, "\(what).keys")
            let values = try refs(n, at: start + n * refSize, "\(what).values")
            return .dictionary(keys: keys, values: values, length: encoding)
        default:
            throw Violation(.corrupt, "\(what): unknown marker 0x\(String(marker, radix: 16))")
        }
    }
}
