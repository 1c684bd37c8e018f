import CorruptFuzzCore
import Foundation

/// The sqlite format's corruptions, from the file format's public description: header fields,
/// b-tree page headers, cell pointers, cell payloads and record headers, overflow chains, the
/// freelist, `sqlite_schema`, the WAL's header and frames; truncation at page boundaries and
/// pages zeroed or swapped. Each is named (`page[3](notes).cell-count=max`) and carries the
/// reason a loader must give when that is certain (`corrupt` for what `PRAGMA integrity_check`
/// or opening always reports, `unsupported-version` for a newer file format or `user_version`).
///
/// SQLite's main file has no checksums, so every edit is made in place and reaches SQLite as
/// is; WAL edits that must reach a deeper check (a format version, a commit size) reseal the
/// log's checksums, the others lie on purpose.
public struct SQLiteMutator: StructureAwareMutator {
    public let generator: SQLiteGenerator
    /// Most entries per family of the catalogue (pages zeroed, truncations, WAL frames…).
    public var perFamily = 12
    /// The seeds the catalogue was built for: a random mutation states an expectation only
    /// when it corrupts one of them, since a corruption stacked on another may change the
    /// reason (a read version made newer on top of a damaged log).
    private let seeds = SeedMemory()

    public init(_ description: SQLiteDescription) { generator = SQLiteGenerator(description) }

    public func generate(using rng: inout FuzzRNG) -> [UInt8] { generator.generate(using: &rng) }

    public func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [StructuredMutation] {
        guard let files = try? SQLiteFiles.decode(bytes) else { return [] }
        seeds.insert(bytes)
        let replaced = pagesInLog(files)
        return edits(of: files).map { $0.applied(to: files, replacedPages: replaced) }.filter { context.allows($0.bytes.count) }
    }

    public func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> StructuredMutation? {
        guard let files = try? SQLiteFiles.decode(bytes) else { return nil }
        if rng.oneIn(2), let random = randomEdit(of: files, using: &rng) { return random.applied(to: files) }
        let all = edits(of: files)
        guard !all.isEmpty else { return nil }
        var mutation = all[rng.below(all.count)].applied(to: files, replacedPages: pagesInLog(files))
        if !seeds.contains(bytes) { mutation.expectation = nil }
        return mutation
    }

    public func shrinkCandidates(of bytes: [UInt8]) -> [[UInt8]] {
        // A bundle without its log, then the database cut at each half of its pages.
        guard let files = try? SQLiteFiles.decode(bytes) else { return [] }
        var out: [[UInt8]] = []
        if files.wal != nil { out.append(files.database) }
        if let layout = SQLiteLayout(files.database), layout.pageCount > 1 {
            var cut = files
            cut.database = Array(files.database.prefix(layout.pageSize * max(1, layout.pageCount / 2)))
            out.append(cut.encoded())
        }
        return out
    }

    // MARK: - Edits

    /// One named change of a database's files.
    struct Edit {
        var name: String
        var expectation: Expectation?
        var change: (inout SQLiteFiles) -> Void

        /// The mutation; an expectation is dropped when the edit changed a page of the main file
        /// that the log replaces (SQLite reads the log's copy, even of page 1's header), or cut
        /// the main file of a database that has a log.
        func applied(to files: SQLiteFiles, replacedPages: Set<Int> = []) -> StructuredMutation {
            var changed = files
            change(&changed)
            var expected = expectation
            if expected != nil, !replacedPages.isEmpty, let pageSize = SQLiteLayout.pageSize(of: files.database) {
                if changed.database.count != files.database.count {
                    expected = nil
                } else {
                    let pages = Set(files.database.indices.lazy.filter { files.database[$0] != changed.database[$0] }.map { $0 / pageSize + 1 })
                    if !pages.isDisjoint(with: replacedPages) { expected = nil }
                }
            }
            return StructuredMutation(bytes: changed.encoded(), name: name, expectation: expected)
        }
    }

    static func corrupt(_ because: String) -> Expectation { Expectation(reason: .corrupt, because: because) }

    /// Pages whose committed copies SQLite reads from the log instead of the main file.
    func pagesInLog(_ files: SQLiteFiles) -> Set<Int> {
        guard let bytes = files.wal else { return [] }
        let wal = WALFile(bytes, databasePageSize: SQLiteLayout.pageSize(of: files.database))
        let used = wal.reading().usedFrames
        return Set((0..<used).map { Int(wal.pageNumber(ofFrame: $0)) })
    }

    /// Every catalogue edit of `files`.
    /// Every catalogue edit of `files`: the log's first (where there is one: its silent losses
    /// are what a WAL database adds), then the header's, the pages', the file's.
    func edits(of files: SQLiteFiles) -> [Edit] {
        var out: [Edit] = []
        if let wal = files.wal { out += walEdits(WALFile(wal, databasePageSize: SQLiteLayout.pageSize(of: files.database))) }
        out += headerEdits(files.database)
        if let layout = SQLiteLayout(files.database) {
            out += pageEdits(layout) + overflowEdits(layout) + freelistEdits(layout) + schemaEdits(layout) + fileEdits(layout)
        }
        return out
    }

    // MARK: - The 100-byte header

    private func headerEdits(_ database: [UInt8]) -> [Edit] {
        guard database.count >= 100 else { return [] }
        let version = generator.description.userVersion
        let raw = Int(database[16]) << 8 | Int(database[17])
        let pageSize = raw == 1 ? 65536 : raw
        let pages = database.count / max(512, pageSize)
        var out: [Edit] = [
            .db("header.magic", Self.corrupt("SQLite refuses a file without its magic string")) { $0[0] ^= 0x01 },
            .db("header.page-size=1000", Self.corrupt("a page size that is not a power of two is refused")) { $0.put16(16, 1000) },
            .db("header.write-version=3", nil) { $0[18] = 3 },
            .db("header.read-version=3", Expectation(reason: .unsupportedVersion, because: "read version 3 is a newer SQLite file format")) { $0[19] = 3 },
            .db("header.payload-fraction=65", Self.corrupt("the payload fractions are fixed at 64, 32, 32")) { $0[21] = 65 },
            .db("header.reserved-bytes=32", nil) { $0[20] = 32 },
            .db("header.database-size=0", nil) { $0.put32(28, 0) },
            .db("header.database-size=+1", nil) { $0.put32(28, UInt32(pages + 1)) },
            .db("header.database-size=max", nil) { $0.put32(28, .max) },
            .db("header.freelist-trunk=out-of-range", Self.corrupt("the freelist starts past the end of the file")) { $0.put32(32, UInt32(pages + 7)) },
            .db("header.freelist-count=+1", Self.corrupt("the freelist holds fewer pages than the header says")) { $0.put32(36, UInt32($0.u32(36) &+ 1)) },
            .db("header.schema-cookie=+1", nil) { $0.put32(40, UInt32($0.u32(40) &+ 1)) },
            .db("header.schema-format=5", Self.corrupt("schema format 5 does not exist")) { $0.put32(44, 5) },
            .db("header.text-encoding=utf16le", nil) { $0.put32(56, 2) },
            .db("header.text-encoding=utf16be", nil) { $0.put32(56, 3) },
            .db("header.text-encoding=7", nil) { $0.put32(56, 7) },
            .db("header.largest-root-page=+3", nil) { $0.put32(52, UInt32(pages + 3)) },
            .db("header.change-counter=+1", nil) { $0.put32(24, UInt32($0.u32(24) &+ 1)) },
            .db("header.application-id=1", nil) { $0.put32(68, 1) },
            .db(
                "header.user-version=future", Expectation(reason: .unsupportedVersion, because: "user_version \(version &+ 1) is from a newer app")
            ) { $0.put32(60, UInt32(bitPattern: version &+ 1)) },
        ]
        if version > 0 {
            out.append(.db("header.user-version=0", Self.corrupt("user_version 0 is older than any schema the app wrote")) { $0.put32(60, 0) })
        }
        if pageSize > 512 { out.append(.db("header.page-size=half", nil) { $0.put16(16, pageSize / 2) }) }
        if pageSize < 65536 { out.append(.db("header.page-size=double", nil) { $0.put16(16, pageSize == 32768 ? 1 : pageSize * 2) }) }
        return out
    }

    // MARK: - B-tree pages

    /// Pages to corrupt: each tree's root and first leaf.
    private func chosenPages(_ layout: SQLiteLayout) -> [SQLiteLayout.BTreePage] {
        var seen: Set<String> = []
        var leaves: Set<String> = []
        var out: [SQLiteLayout.BTreePage] = []
        for page in layout.btreePages {
            if seen.insert(page.tree).inserted {
                out.append(page)
            } else if page.isLeaf, leaves.insert(page.tree).inserted {
                out.append(page)
            }
        }
        return out
    }

    private func pageEdits(_ layout: SQLiteLayout) -> [Edit] {
        var out: [Edit] = []
        let broken = Self.corrupt("integrity_check walks every b-tree page")
        for page in chosenPages(layout) {
            let at = "page[\(page.number)](\(page.tree))"
            let h = page.headerOffset
            out += [
                .db("\(at).type=0", broken) { $0[h] = 0 },
                .db("\(at).type=\(page.isTable ? "index" : "table")", broken) { $0[h] = page.type == 13 ? 10 : page.type == 10 ? 13 : page.type == 5 ? 2 : 5 },
                .db("\(at).first-freeblock=end", nil) { $0.put16(h + 1, layout.usableSize - 2) },
                .db("\(at).cell-count=0", nil) { $0.put16(h + 3, 0) },
                .db("\(at).cell-count=+1", nil) { $0.put16(h + 3, $0.u16(h + 3) + 1) },
                .db("\(at).cell-count=max", nil) { $0.put16(h + 3, 0xFFFF) },
                .db("\(at).content-start=0", nil) { $0.put16(h + 5, 0) },
                .db("\(at).content-start=header", nil) { $0.put16(h + 5, 4) },
                .db("\(at).fragmented-bytes=255", nil) { $0[h + 7] = 255 },
            ]
            if !page.isLeaf {
                out += [
                    .db("\(at).right-child=0", broken) { $0.put32(h + 8, 0) },
                    .db("\(at).right-child=self", broken) { $0.put32(h + 8, UInt32(page.number)) },
                    .db("\(at).right-child=out-of-range", broken) { $0.put32(h + 8, UInt32(layout.pageCount + 9)) },
                ]
            }
            out += cellEdits(page, layout)
        }
        return out
    }

    private func cellEdits(_ page: SQLiteLayout.BTreePage, _ layout: SQLiteLayout) -> [Edit] {
        guard let first = page.cells.first else { return [] }
        let at = "page[\(page.number)](\(page.tree))"
        let pointers = page.pointerArrayOffset
        var out: [Edit] = [
            .db("\(at).cell[0].pointer=0", nil) { $0.put16(pointers, 0) },
            .db("\(at).cell[0].pointer=end", nil) { $0.put16(pointers, layout.usableSize - 1) },
        ]
        if page.cells.count > 1 {
            let last = 2 * (page.cells.count - 1)
            out.append(.db("\(at).cell[1].pointer=cell[0]", nil) { $0.put16(pointers + 2, $0.u16(pointers)) })
            out.append(
                .db("\(at).cell-pointers=first-and-last-swapped", nil) { bytes in
                    let a = bytes.u16(pointers)
                    bytes.put16(pointers, bytes.u16(pointers + last))
                    bytes.put16(pointers + last, a)
                })
            if let rowid = page.cells[1].rowid, let previous = page.cells[0].rowid {
                out.append(.db("\(at).cell[1].rowid=cell[0]'s", nil) { $0.putVarint(rowid.offset, rowid.width, previous.value) })
            }
        }
        if let size = first.payloadSize {
            out.append(.db("\(at).cell[0].payload-size=max", nil) { $0.putVarint(size.offset, size.width, Self.maxVarint(width: size.width)) })
            out.append(.db("\(at).cell[0].payload-size=+1", nil) { $0.putVarint(size.offset, size.width, Int64(size.value + 1)) })
        }
        if let header = first.headerSize {
            out.append(.db("\(at).cell[0].record-header-size=max", nil) { $0.putVarint(header.offset, header.width, Self.maxVarint(width: header.width)) })
            out.append(.db("\(at).cell[0].record-header-size=0", nil) { $0.putVarint(header.offset, header.width, 0) })
        }
        for (column, serial) in first.serialTypes.enumerated().prefix(8) {
            let name = "\(at).cell[0].column[\(column)].serial-type"
            if (1...4).contains(serial.value) {
                // The same number of bytes, read as text: a consistent lie about the type.
                out.append(.db("\(name)=int-as-text", nil) { $0.putVarint(serial.offset, serial.width, Int64(13 + 2 * serial.value)) })
            } else if serial.value >= 13, serial.value % 2 == 1 {
                out.append(
                    .db("\(name)=text-longer", nil) {
                        $0.putVarint(serial.offset, serial.width, Int64(min(serial.value + 200, Int(Self.maxVarint(width: serial.width)))))
                    })
                out.append(.db("\(name)=text-as-blob", nil) { $0.putVarint(serial.offset, serial.width, Int64(serial.value - 1)) })
            }
            out.append(.db("\(name)=10", nil) { $0.putVarint(serial.offset, serial.width, 10) })
        }
        return out
    }

    static func maxVarint(width: Int) -> Int64 { width >= 9 ? .max : (Int64(1) << (7 * Int64(width))) - 1 }

    // MARK: - Overflow chains, freelist, schema

    private func overflowEdits(_ layout: SQLiteLayout) -> [Edit] {
        var out: [Edit] = []
        let broken = Self.corrupt("integrity_check follows every overflow chain")
        for (index, chain) in layout.overflowChains.prefix(3).enumerated() {
            let at = "overflow[\(index)](\(chain.tree))"
            let first = layout.pageOffset(chain.pages[0])
            out += [
                .db("\(at).next=self", broken) { $0.put32(first, UInt32(chain.pages[0])) },
                .db("\(at).next=out-of-range", broken) { $0.put32(first, UInt32(layout.pageCount + 11)) },
                .db("\(at).start=out-of-range", broken) { $0.put32(chain.pointerOffset, UInt32(layout.pageCount + 13)) },
                .db("\(at).start=page-1", broken) { $0.put32(chain.pointerOffset, 1) },
            ]
            if chain.pages.count > 1 { out.append(.db("\(at).next=0 (chain cut short)", broken) { $0.put32(first, 0) }) }
        }
        return out
    }

    private func freelistEdits(_ layout: SQLiteLayout) -> [Edit] {
        guard let trunk = layout.freelistTrunks.first else { return [] }
        let broken = Self.corrupt("integrity_check walks the freelist")
        let offset = layout.pageOffset(trunk)
        var out: [Edit] = [
            .db("freelist.trunk[\(trunk)].next=self", broken) { $0.put32(offset, UInt32(trunk)) },
            .db("freelist.trunk[\(trunk)].leaf-count=max", broken) { $0.put32(offset + 4, .max) },
        ]
        if layout.u32(offset + 4) > 0 {
            out.append(.db("freelist.trunk[\(trunk)].leaf[0]=out-of-range", broken) { $0.put32(offset + 8, UInt32(layout.pageCount + 17)) })
            out.append(.db("freelist.trunk[\(trunk)].leaf[0]=page-1", broken) { $0.put32(offset + 8, 1) })
        }
        if let leaf = layout.freelistLeaves.first {
            out.append(.db("freelist.leaf[\(leaf)] filled with 0xAA", nil) { $0.fill(layout.pageOffset(leaf), layout.pageSize, 0xAA) })
        }
        return out
    }

    private func schemaEdits(_ layout: SQLiteLayout) -> [Edit] {
        var out: [Edit] = []
        let roots = layout.schema.map(\.rootpage).filter { $0 > 1 }
        for entry in layout.schema {
            let at = "sqlite_schema[\(entry.name)]"
            if let sql = entry.sqlOffset {
                out.append(.db("\(at).sql=syntax-error", Self.corrupt("SQLite cannot parse the schema")) { $0[sql] = UInt8(ascii: "X") })
            }
            guard let field = entry.rootpageField, entry.rootpage > 1 else { continue }
            let widest = (1 << (8 * field.width - 1)) - 1
            if layout.pageCount + 3 <= widest {
                out.append(
                    .db("\(at).rootpage=out-of-range", Self.corrupt("a root page past the end of the file")) {
                        $0.putInt(field.offset, field.width, layout.pageCount + 3)
                    })
            }
            if let other = roots.first(where: { $0 != entry.rootpage }), other <= widest {
                out.append(.db("\(at).rootpage=\(other) (another tree's)", nil) { $0.putInt(field.offset, field.width, other) })
            }
        }
        return out
    }

    // MARK: - Whole pages and truncation

    private func fileEdits(_ layout: SQLiteLayout) -> [Edit] {
        var out: [Edit] = []
        let size = layout.pageSize
        let count = layout.pageCount
        out.append(.db("truncate@50 (inside the header)", Self.corrupt("the header is 100 bytes")) { $0.removeSubrange(50...) })
        for k in Self.spread(1..<count, perFamily) {
            out.append(.db("truncate@page-\(k) (\(k) of \(count) pages)", nil) { $0.removeSubrange((k * size)...) })
        }
        // B-tree and overflow pages first: zeroing one is always found.
        let ordered = (1...count).sorted { a, b in (layout.roles[a] == nil ? 1 : 0, a) < (layout.roles[b] == nil ? 1 : 0, b) }
        for number in ordered.prefix(perFamily) {
            let role = layout.roles[number]
            let certain: Bool
            switch role {
            case .btree?: certain = true
            case .overflow?: certain = layout.overflowChains.contains { $0.pages.dropLast().contains(number) }  // its next pointer becomes 0
            default: certain = false
            }
            out.append(
                .db("page[\(number)] zeroed (\(Self.describe(role)))", certain ? Self.corrupt("a zeroed b-tree or overflow page") : nil) {
                    $0.fill(layout.pageOffset(number), size, 0)
                })
        }
        let btree = layout.btreePages.map(\.number).filter { $0 > 1 }
        for (a, b) in zip(btree, btree.dropFirst()).prefix(perFamily / 2) {
            out.append(
                .db("pages[\(a)]<->[\(b)] swapped", nil) { bytes in
                    let first = Array(bytes[layout.pageOffset(a)..<(layout.pageOffset(a) + size)])
                    bytes.replaceSubrange(
                        layout.pageOffset(a)..<(layout.pageOffset(a) + size), with: bytes[layout.pageOffset(b)..<(layout.pageOffset(b) + size)])
                    bytes.replaceSubrange(layout.pageOffset(b)..<(layout.pageOffset(b) + size), with: first)
                })
        }
        return out
    }

    static func describe(_ role: SQLiteLayout.Role?) -> String {
        switch role {
        case .btree(let tree)?: "b-tree page of \(tree)"
        case .overflow(let tree)?: "overflow page of \(tree)"
        case .freelistTrunk?: "freelist trunk"
        case .freelistLeaf?: "freelist leaf"
        case nil: "unused"
        }
    }

    /// Up to `count` values spread evenly over `range`.
    static func spread(_ range: Range<Int>, _ count: Int) -> [Int] {
        guard !range.isEmpty else { return [] }
        if range.count <= count { return Array(range) }
        return (0..<count).map { range.lowerBound + $0 * (range.count - 1) / max(1, count - 1) }
    }
}

// MARK: - Byte edits

extension SQLiteMutator.Edit {
    static func db(_ name: String, _ expectation: Expectation?, _ change: @escaping (inout [UInt8]) -> Void) -> Self {
        Self(name: name, expectation: expectation) { files in change(&files.database) }
    }
    static func wal(_ name: String, _ expectation: Expectation?, _ change: @escaping (inout WALFile) -> Void) -> Self {
        Self(name: name, expectation: expectation) { files in
            var wal = WALFile(files.wal ?? [], databasePageSize: SQLiteLayout.pageSize(of: files.database))
            change(&wal)
            files.wal = wal.bytes
        }
    }
}

extension [UInt8] {
    func u16(_ offset: Int) -> Int { offset + 2 <= count ? Int(self[offset]) << 8 | Int(self[offset + 1]) : 0 }
    func u32(_ offset: Int) -> UInt32 {
        offset + 4 <= count ? UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3]) : 0
    }
    mutating func put16(_ offset: Int, _ value: Int) {
        guard offset >= 0, offset + 2 <= count else { return }
        self[offset] = UInt8(truncatingIfNeeded: value >> 8)
        self[offset + 1] = UInt8(truncatingIfNeeded: value)
    }
    mutating func put32(_ offset: Int, _ value: UInt32) {
        guard offset >= 0, offset + 4 <= count else { return }
        for index in 0..<4 { self[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(index))) }
    }
    /// A big-endian integer of `width` bytes.
    mutating func putInt(_ offset: Int, _ width: Int, _ value: Int) {
        guard offset >= 0, offset + width <= count else { return }
        for index in 0..<width { self[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * (width - 1 - index))) }
    }
    mutating func fill(_ offset: Int, _ length: Int, _ byte: UInt8) {
        let end = Swift.min(count, offset + length)
        guard offset >= 0, offset < end else { return }
        for index in offset..<end { self[index] = byte }
    }
    /// Writes `value` as a varint of exactly `width` bytes (SQLite reads padded varints), keeping
    /// the cell's layout; values too wide for it are cut to the widest it holds.
    mutating func putVarint(_ offset: Int, _ width: Int, _ value: Int64) {
        guard offset >= 0, width >= 1, width <= 9, offset + width <= count else { return }
        var remaining = UInt64(bitPattern: Swift.max(0, Swift.min(value, SQLiteMutator.maxVarint(width: width))))
        if width == 9 {
            self[offset + 8] = UInt8(truncatingIfNeeded: remaining)
            remaining >>= 8
            for index in stride(from: 7, through: 0, by: -1) {
                self[offset + index] = UInt8(truncatingIfNeeded: remaining & 0x7F) | 0x80
                remaining >>= 7
            }
            return
        }
        for index in stride(from: width - 1, through: 0, by: -1) {
            self[offset + index] = UInt8(truncatingIfNeeded: remaining & 0x7F) | (index == width - 1 ? 0 : 0x80)
            remaining >>= 7
        }
    }
}

/// Hashes of the seeds a mutator has seen, shared by its copies.
final class SeedMemory: @unchecked Sendable {
    private let lock = NSLock()
    private var hashes: Set<Int> = []

    func insert(_ bytes: [UInt8]) { lock.withLock { _ = hashes.insert(bytes.hashValue) } }
    func contains(_ bytes: [UInt8]) -> Bool { lock.withLock { hashes.contains(bytes.hashValue) } }
}
