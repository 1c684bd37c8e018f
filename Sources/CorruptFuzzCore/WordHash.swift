/// A fast 64-bit hash for keys that live within one run (remembered verdicts, behaviours,
/// described errors): a multiply-and-rotate mix, bytes eight at a time. SipHash, the
/// `Hasher`'s, resists chosen collisions across runs, which none of these keys needs, and
/// costs more than many validators.
package struct WordHash {
    @usableFromInline static let prime: UInt64 = 0x9E37_79B9_7F4A_7C15
    @usableFromInline var h: UInt64 = 0x243F_6A88_85A3_08D3

    @inlinable package init() {}

    @inlinable package mutating func add(_ word: UInt64) { h = ((h ^ word) &* Self.prime).rotated(by: 31) }

    @inlinable package mutating func add(_ value: Int) { add(UInt64(bitPattern: Int64(value))) }

    /// Bytes, eight at a time (the tail zero-padded), then their count, so that `("ab", "c")`
    /// and `("a", "bc")` differ.
    @inlinable @inline(__always) package mutating func add(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        if let base = bytes.baseAddress {
            var offset = 0
            while offset + 8 <= count {
                add(base.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
                offset += 8
            }
            let rest = count - offset
            if rest > 0 {
                // The tail's bytes as a little-endian word: the file's last eight bytes shifted
                // (one load), or, in fewer than eight bytes, loads of four, two and one.
                var word: UInt64
                if count >= 8 {
                    word = base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self).littleEndian >> UInt64(8 * (8 - rest))
                } else {
                    word = 0
                    var at = 0
                    if rest & 4 != 0 {
                        word = UInt64(base.loadUnaligned(fromByteOffset: at, as: UInt32.self).littleEndian)
                        at += 4
                    }
                    if rest & 2 != 0 {
                        word |= UInt64(base.loadUnaligned(fromByteOffset: at, as: UInt16.self).littleEndian) << UInt64(8 * at)
                        at += 2
                    }
                    if rest & 1 != 0 { word |= UInt64(base.load(fromByteOffset: at, as: UInt8.self)) << UInt64(8 * at) }
                }
                add(word)
            }
        }
        add(count)
    }

    /// A text's UTF-8 bytes, as ``add(_:)-(UnsafeRawBufferPointer)`` adds them; nil differs from
    /// every text. Read through `withUTF8`, the standard library's own view of the bytes (a
    /// small string is copied to the stack for it, a native one is read in place).
    @inlinable @inline(__always) package mutating func add(_ text: String?) {
        guard var text else { return add(UInt64.max) }
        text.withUTF8 { add(UnsafeRawBufferPointer($0)) }
    }

    @inlinable package var value: UInt64 { (h ^ (h >> 29)) &* Self.prime }
}

extension UInt64 {
    @inlinable package func rotated(by n: UInt64) -> UInt64 { self << n | self >> (64 - n) }
}

/// Bytes as a set element or dictionary key, hashed in one pass (an array of bytes is hashed
/// one element at a time: a catalogue's hundred-kilobyte entries took longer to tell apart
/// than to build).
package struct ByteKey: Hashable {
    package let bytes: [UInt8]

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
