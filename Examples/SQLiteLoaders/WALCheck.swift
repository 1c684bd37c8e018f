/// The note store's own check of a write-ahead log, from the file format's description: SQLite
/// reads frames until one fails (salts other than the header's, page number 0, or a checksum
/// that does not chain) and silently ignores the rest, committed transactions included. A
/// failing frame followed by commit frames written after it means committed notes would vanish
/// without an error; a failure only in the last transaction is a torn write SQLite rolls back,
/// which is fine.
enum WALCheck {
    static func problem(in wal: [UInt8], databasePageSize: Int) -> String? {
        guard wal.count > 32 else { return nil }
        func word(_ offset: Int) -> UInt32 {
            offset + 4 <= wal.count ? UInt32(wal[offset]) << 24 | UInt32(wal[offset + 1]) << 16 | UInt32(wal[offset + 2]) << 8 | UInt32(wal[offset + 3]) : 0
        }
        let big = word(0) & 1 == 1
        func sum(_ range: Range<Int>, _ start: (UInt32, UInt32)) -> (UInt32, UInt32) {
            var (s0, s1) = start
            for offset in stride(from: range.lowerBound, to: range.upperBound - 7, by: 8) {
                let x0 = big ? word(offset) : word(offset).byteSwapped
                let x1 = big ? word(offset + 4) : word(offset + 4).byteSwapped
                s0 = s0 &+ x0 &+ s1
                s1 = s1 &+ x1 &+ s0
            }
            return (s0, s1)
        }
        let stated = Int(word(8))
        let statedValid = stated >= 512 && stated <= 65536 && stated & (stated - 1) == 0
        let pageSize = statedValid ? stated : databasePageSize
        let frameSize = 24 + pageSize
        let headerValid = word(0) & 0xFFFF_FFFE == 0x377F_0682 && statedValid && sum(0..<24, (0, 0)) == (word(24), word(28))
        let frames = (wal.count - 32) / frameSize
        if !headerValid {
            let hasCommit = (0..<frames).contains { word(32 + $0 * frameSize + 4) != 0 }
            return hasCommit ? "the log's header is damaged, so SQLite ignores every transaction in it" : nil
        }
        if word(4) != 3_007_000 { return "the log's format version \(word(4)) is unknown" }
        var running = (word(24), word(28))
        for index in 0..<frames {
            let offset = 32 + index * frameSize
            let expected = sum((offset + 24)..<(offset + frameSize), sum(offset..<(offset + 8), running))
            let fine = word(offset + 8) == word(16) && word(offset + 12) == word(20) && word(offset) != 0 && expected == (word(offset + 16), word(offset + 20))
            if fine {
                running = (word(offset + 16), word(offset + 20))
                continue
            }
            let later = ((index + 1)..<frames).contains { frame in
                let at = 32 + frame * frameSize
                return word(at + 8) == word(16) && word(at + 12) == word(20) && word(at + 4) != 0
            }
            let salted = word(offset + 8) == word(16) && word(offset + 12) == word(20)
            if later || (!salted && index == 0 && word(16) != word(offset + 8) &+ 1 && (0..<frames).contains { word(32 + $0 * frameSize + 4) != 0 }) {
                return "log frame \(index) is damaged and committed transactions follow it; SQLite would silently drop them"
            }
            return nil
        }
        return nil
    }
}
