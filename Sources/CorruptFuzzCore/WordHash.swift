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
        var offset = 0
        while offset + 8 <= bytes.count {
            add(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        if offset < bytes.count {
            var word: UInt64 = 0
            for i in offset..<bytes.count { word |= UInt64(bytes[i]) << (8 * UInt64(i - offset)) }
            add(word)
        }
        add(bytes.count)
    }

    /// A text's UTF-8 bytes; nil differs from every text.
    @inlinable @inline(__always) package mutating func add(_ text: String?) {
        guard var text else { return add(UInt64.max) }
        text.withUTF8 { add(UnsafeRawBufferPointer($0)) }
    }

    @inlinable package var value: UInt64 { (h ^ (h >> 29)) &* Self.prime }
}

extension UInt64 {
    @inlinable package func rotated(by n: UInt64) -> UInt64 { self << n | self >> (64 - n) }
}
