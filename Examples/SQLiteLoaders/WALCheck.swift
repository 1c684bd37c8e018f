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
        func commit(_ frame: Int) -> Bool { word(32 + frame * frameSize + 4) != 0 }
        func salted(_ frame: Int, _ salts: (UInt32, UInt32)) -> Bool { (word(32 + frame * frameSize + 8), word(32 + frame * frameSize + 12)) == salts }
        // The failing frame's own transaction may be a torn write (the last one, being written
        // when the machine stopped), which SQLite rightly rolls back; a commit after it is lost.
        func lostCommits(after failure: Int, salts: (UInt32, UInt32)) -> Bool {
            guard let own = (failure..<frames).first(where: commit) else { return false }
            return ((own + 1)..<max(own + 1, frames)).contains { commit($0) && salted($0, salts) }
        }
        let headerSalts = (word(16), word(20))
        if !headerValid {
            let lost = frames > 0 && lostCommits(after: 0, salts: (word(32 + 8), word(32 + 12)))
            return lost ? "the log's header is damaged, so SQLite ignores every transaction in it" : nil
        }
        if word(4) != 3_007_000 { return "the log's format version \(word(4)) is unknown" }
        var running = (word(24), word(28))
        for index in 0..<frames {
            let offset = 32 + index * frameSize
            let expected = sum((offset + 24)..<(offset + frameSize), sum(offset..<(offset + 8), running))
            if salted(index, headerSalts), word(offset) != 0, expected == (word(offset + 16), word(offset + 20)) {
                running = (word(offset + 16), word(offset + 20))
                continue
            }
            var lost = lostCommits(after: index, salts: headerSalts)
            if !lost, index == 0, !salted(0, headerSalts), headerSalts.0 != word(32 + 8) &+ 1 {
                // No frame is this header's: unless the log was restarted (salt-1 one higher),
                // the header replaced the one its frames were written with.
                lost = lostCommits(after: 0, salts: (word(32 + 8), word(32 + 12)))
            }
            return lost ? "log frame \(index) is damaged and committed transactions follow it; SQLite would silently drop them" : nil
        }
        return nil
    }

    /// The newest copy of page 1 in the frames SQLite uses (up to the last commit before the
    /// first failing frame), nil when page 1 is not in the log or the log is unreadable.
    static func newestPageOne(in wal: [UInt8]) -> ArraySlice<UInt8>? {
        guard wal.count > 32 else { return nil }
        func word(_ offset: Int) -> UInt32 {
            offset + 4 <= wal.count ? UInt32(wal[offset]) << 24 | UInt32(wal[offset + 1]) << 16 | UInt32(wal[offset + 2]) << 8 | UInt32(wal[offset + 3]) : 0
        }
        let big = word(0) & 1 == 1
        let pageSize = Int(word(8))
        guard word(0) & 0xFFFF_FFFE == 0x377F_0682, pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0, word(4) == 3_007_000 else { return nil }
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
        guard sum(0..<24, (0, 0)) == (word(24), word(28)) else { return nil }
        let frameSize = 24 + pageSize
        var running = (word(24), word(28))
        var newest: Int?
        var pending: Int?
        for index in 0..<((wal.count - 32) / frameSize) {
            let offset = 32 + index * frameSize
            let expected = sum((offset + 24)..<(offset + frameSize), sum(offset..<(offset + 8), running))
            guard word(offset + 8) == word(16), word(offset + 12) == word(20), word(offset) != 0, expected == (word(offset + 16), word(offset + 20)) else {
                break
            }
            running = expected
            if word(offset) == 1 { pending = offset + 24 }
            if word(offset + 4) != 0, let copy = pending { newest = copy }
        }
        return newest.map { wal[$0..<($0 + pageSize)] }
    }
}
