import CorruptFuzzCore

extension SQLiteMutator {
    // MARK: - The write-ahead log

    /// The log's corruptions. A frame that fails (bad salt, checksum, page 0) ends SQLite's
    /// reading of the log without an error: when a later commit frame shows that transactions
    /// were committed after it, the loss is silent and the loader must notice (`corrupt`); when
    /// the failing frame is in the last transaction, SQLite drops that transaction as a torn
    /// write, which it allows (no expectation: the validator calls it valid).
    func walEdits(_ wal: WALFile) -> [Edit] {
        guard wal.bytes.count >= WALFile.headerSize else { return [] }
        let frames = wal.frameCount
        let commits = (0..<frames).filter { wal.commitSize(ofFrame: $0) != 0 }
        let loss = Self.corrupt("SQLite would silently drop committed transactions after this frame")
        // A failure inside the last transaction is a torn write SQLite rolls back; one before
        // a later commit loses that commit.
        func losesCommits(_ frame: Int) -> Bool {
            guard let own = commits.first(where: { $0 >= frame }) else { return false }
            return commits.contains { $0 > own }
        }
        func expectation(failingAt frame: Int) -> Expectation? { losesCommits(frame) ? loss : nil }
        func lastTransactionNote(_ frame: Int) -> String { losesCommits(frame) ? "" : " (last transaction: SQLite drops it as a torn write)" }
        var out: [Edit] = [
            .init(name: "wal.absent (the log's transactions never reach the main file)", expectation: nil) { $0.wal = nil },
            .wal("wal.empty", nil) { $0.bytes = [] },
            .wal("wal.header.magic", expectation(failingAt: 0)) { $0.bytes[3] ^= 0x10 },
            .wal("wal.header.checksum", expectation(failingAt: 0)) { $0.bytes[31] ^= 0x01 },
            .wal("wal.header.salt-1 (checksums resealed)", expectation(failingAt: 0)) { wal in
                wal.setWord(16, wal.word(16) &+ 7)
                wal.reseal(fromFrame: frames)
            },
            .wal("wal.header.version=3007001 (checksums resealed)", Self.corrupt("SQLite refuses a log of another format version")) { wal in
                wal.setWord(4, 3_007_001)
                wal.reseal(fromFrame: frames)
            },
            .wal("wal.header.page-size=1000", expectation(failingAt: 0)) { wal in wal.setWord(8, 1000) },
        ]
        for frame in Self.spread(0..<frames, perFamily) {
            let at = "wal.frame[\(frame)]"
            let offset = wal.frameOffset(frame)
            let note = lastTransactionNote(frame)
            let fails = expectation(failingAt: frame)
            out += [
                .wal("\(at).page-bit-flip\(note)", fails) { $0.bytes[offset + WALFile.frameHeaderSize + $0.framePageSize / 2] ^= 0x04 },
                .wal("\(at).salt-2\(note)", fails) { $0.bytes[offset + 15] ^= 0x01 },
                .wal("\(at).checksum\(note)", fails) { $0.bytes[offset + 23] ^= 0x01 },
                .wal("\(at).page-number=0 (checksums resealed)\(note)", fails) { wal in
                    wal.setWord(offset, 0)
                    wal.reseal(fromFrame: frame)
                },
                .wal("truncate wal@frame[\(frame)] (SQLite keeps the commits before it)", nil) { $0.bytes.removeSubrange(offset...) },
            ]
            if wal.commitSize(ofFrame: frame) != 0 {
                out.append(
                    .wal("\(at).commit-size=0 (checksums resealed)", nil) { wal in
                        wal.setWord(offset + 4, 0)
                        wal.reseal(fromFrame: frame)
                    })
            }
        }
        if let last = (0..<frames).last {
            out.append(.wal("truncate wal inside frame[\(last)] (a torn write)", nil) { $0.bytes.removeSubrange((wal.frameOffset(last) + 30)...) })
        }
        return out
    }

    // MARK: - Random edits

    /// One edit with a random target and value: a field of a b-tree page header, a cell
    /// pointer, a varint of a cell, an overflow or freelist pointer, a header byte, or a bit of
    /// a WAL frame.
    func randomEdit(of files: SQLiteFiles, using rng: inout FuzzRNG) -> Edit? {
        if let wal = files.wal, wal.count > WALFile.headerSize, rng.oneIn(4) {
            let position = WALFile.headerSize + rng.below(wal.count - WALFile.headerSize)
            let bit = UInt8(1) << UInt8(rng.below(8))
            return .wal("wal.bit-flip@\(position)", nil) { $0.bytes[position] ^= bit }
        }
        guard let layout = SQLiteLayout(files.database) else { return nil }
        let value = Self.interesting(&rng, pages: layout.pageCount, usable: layout.usableSize)
        switch rng.below(5) {
        case 0:
            let offset = 16 + rng.below(84)
            let byte = UInt8(truncatingIfNeeded: value)
            return .db("header[\(offset)]=\(byte)", nil) { $0[offset] = byte }
        case 1, 2:
            guard !layout.btreePages.isEmpty else { return nil }
            let page = layout.btreePages[rng.below(layout.btreePages.count)]
            let fields: [(String, Int, Int)] =
                [("type", 0, 1), ("first-freeblock", 1, 2), ("cell-count", 3, 2), ("content-start", 5, 2), ("fragmented-bytes", 7, 1)]
                + (page.isLeaf ? [] : [("right-child", 8, 4)]) + (page.cells.isEmpty ? [] : [("cell-pointer[\(rng.below(page.cells.count))]", -1, 2)])
            let (name, field, width) = fields[rng.below(fields.count)]
            var offset = page.headerOffset + field
            if field < 0, let index = Int(name.dropFirst("cell-pointer[".count).dropLast()) { offset = page.pointerArrayOffset + 2 * index }
            return .db("page[\(page.number)](\(page.tree)).\(name)=\(value)", nil) { $0.putInt(offset, width, value) }
        case 3:
            let cells = layout.btreePages.flatMap(\.cells)
            guard !cells.isEmpty else { return nil }
            let cell = cells[rng.below(cells.count)]
            let varints =
                [
                    cell.payloadSize.map { ("payload-size", $0.offset, $0.width) }, cell.rowid.map { ("rowid", $0.offset, $0.width) },
                    cell.headerSize.map { ("record-header-size", $0.offset, $0.width) },
                ]
                .compactMap { $0 } + cell.serialTypes.enumerated().map { ("serial-type[\($0.offset)]", $0.element.offset, $0.element.width) }
            guard !varints.isEmpty else { return nil }
            let (name, offset, width) = varints[rng.below(varints.count)]
            return .db("cell@\(cell.offset).\(name)=\(value)", nil) { $0.putVarint(offset, width, Int64(value)) }
        default:
            var pointers = layout.overflowChains.map { ("overflow-start", $0.pointerOffset) }
            pointers += layout.overflowChains.flatMap { chain in chain.pages.map { ("overflow[\($0)].next", layout.pageOffset($0)) } }
            pointers += layout.freelistTrunks.map { ("freelist-trunk[\($0)].next", layout.pageOffset($0)) }
            guard !pointers.isEmpty else { return nil }
            let (name, offset) = pointers[rng.below(pointers.count)]
            return .db("\(name)=\(value)", nil) { $0.putInt(offset, 4, value) }
        }
    }

    /// A value that tends to break a page: 0, 1, the page count and past it, the usable size,
    /// the largest of each width, or a small random number.
    static func interesting(_ rng: inout FuzzRNG, pages: Int, usable: Int) -> Int {
        let choices = [0, 1, pages, pages + 1, usable, usable - 1, 0xFF, 0xFFFF, 0x7FFF_FFFF, 2]
        return rng.oneIn(3) ? rng.below(256) : choices[rng.below(choices.count)]
    }
}
