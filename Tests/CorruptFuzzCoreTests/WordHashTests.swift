@testable import CorruptFuzzCore
import Foundation
import Testing

@Suite("Word hash")
struct WordHashTests {
    /// The hash of bytes as the first version computed it: words of eight, the tail
    /// zero-padded byte by byte, then the count.
    static func reference(_ bytes: [UInt8]) -> UInt64 {
        var hash = WordHash()
        var offset = 0
        while offset + 8 <= bytes.count {
            var word: UInt64 = 0
            for i in 0..<8 { word |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
            hash.add(word)
            offset += 8
        }
        if offset < bytes.count {
            var word: UInt64 = 0
            for i in offset..<bytes.count { word |= UInt64(bytes[i]) << (8 * UInt64(i - offset)) }
            hash.add(word)
        }
        hash.add(bytes.count)
        return hash.value
    }

    static func hash(_ bytes: [UInt8]) -> UInt64 {
        var hash = WordHash()
        bytes.withUnsafeBytes { hash.add($0) }
        return hash.value
    }

    static func hash(_ text: String?) -> UInt64 {
        var hash = WordHash()
        hash.add(text)
        return hash.value
    }

    @Test("bytes hash as words with the tail zero-padded, at every length from 0 to 40")
    func bytesAtEveryLength() {
        var rng = FuzzRNG(seed: 5)
        for length in 0...40 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            #expect(Self.hash(bytes) == Self.reference(bytes), "length \(length)")
            // Read from the middle of a larger buffer too: no byte outside the range counts.
            let padded = [0xFF, 0xEE] + bytes + [0xDD, 0xCC, 0xBB]
            let inner = padded.withUnsafeBytes { raw -> UInt64 in
                var hash = WordHash()
                hash.add(UnsafeRawBufferPointer(rebasing: raw[2..<(2 + length)]))
                return hash.value
            }
            #expect(inner == Self.reference(bytes), "length \(length) inside a larger buffer")
        }
    }

    @Test("a text hashes as its UTF-8 bytes, however the String holds it (small, large, literal, built)")
    func textsAsTheirBytes() {
        let texts = [
            "", "a", "corrupt", "12345678", "123456789", "unsupported-ver", "unsupported-version", "naïve café",
            "habits[2].num_dates: 100001 exceeds max 100000",
        ]
        for text in texts {
            let bytes = Array(text.utf8)
            let expected = Self.reference(bytes)
            // A literal, one built by interpolation, one decoded from bytes, one from a
            // substring, and one in a native buffer with room to spare (not small even when short).
            var spacious = String()
            spacious.reserveCapacity(64)
            spacious += text
            let built = "\(text)"
            let decoded = String(decoding: bytes, as: UTF8.self)
            let sliced = String(("<" + text + ">").dropFirst().dropLast())
            for (form, value) in [("literal", text), ("interpolated", built), ("decoded", decoded), ("substring", sliced), ("reserved", spacious)] {
                #expect(Self.hash(value) == expected, "\(form) \(text.debugDescription)")
            }
        }
        #expect(Self.hash(nil as String?) != Self.hash(""))
        #expect(Self.hash("corrupt") != Self.hash("corrupu"))
        #expect(Self.hash("ab") != Self.hash("ab\u{0}"))
    }
}
