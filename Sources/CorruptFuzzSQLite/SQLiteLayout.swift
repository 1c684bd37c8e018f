/// A database file's pages as the file format describes them ("Database File Format", sqlite.org):
/// the 100-byte header, every b-tree reachable from `sqlite_schema` with its page headers,
/// cell pointers and cells, overflow chains, the freelist and the schema's records, with the
/// byte offset of each field, so mutations can change exactly one.
///
/// Reading never traps: out-of-range pointers, loops and short pages end a walk.
struct SQLiteLayout {
    static let magic = Array("SQLite format 3\0".utf8)

    let bytes: [UInt8]
    let pageSize: Int
    let usableSize: Int
    /// Pages in the file (its length divided by the page size).
    let pageCount: Int
    var btreePages: [BTreePage] = []
    /// Overflow chains in order, each with the offset of the pointer that starts it.
    var overflowChains: [(tree: String, pointerOffset: Int, pages: [Int])] = []
    var freelistTrunks: [Int] = []
    var freelistLeaves: [Int] = []
    var schema: [SchemaEntry] = []

    enum Role: Hashable {
        case btree(String)
        case overflow(String)
        case freelistTrunk
        case freelistLeaf
    }
    /// What each page reached holds.
    var roles: [Int: Role] = [:]

    struct BTreePage {
        var number: Int
        var tree: String
        /// The page's type byte: 2 index interior, 5 table interior, 10 index leaf, 13 table leaf.
        var type: UInt8
        /// The b-tree page header's offset in the file (100 bytes into page 1).
        var headerOffset: Int
        var cells: [Cell]
        var isLeaf: Bool { type == 10 || type == 13 }
        var isTable: Bool { type == 5 || type == 13 }
        /// The cell pointer array's offset.
        var pointerArrayOffset: Int { headerOffset + (isLeaf ? 8 : 12) }
    }

    struct Cell {
        /// The cell's offset in the file.
        var offset: Int
        /// The payload-size varint's offset and width (nil in table interior cells).
        var payloadSize: (offset: Int, width: Int, value: Int)?
        /// The rowid varint's offset and width (table cells).
        var rowid: (offset: Int, width: Int, value: Int64)?
        /// The record's header fields: each serial type's varint offset, width and value.
        var serialTypes: [(offset: Int, width: Int, value: Int)] = []
        var headerSize: (offset: Int, width: Int, value: Int)?
        /// The offset of the payload's first byte.
        var payloadOffset: Int?
        /// The local part of the payload and the offset of the first overflow page pointer.
        var localPayload: Int = 0
        var overflowPointerOffset: Int?
    }

    struct SchemaEntry {
        var type: String
        var name: String
        var rootpage: Int
        /// The rootpage integer's offset and width in bytes, when it is stored as an integer.
        var rootpageField: (offset: Int, width: Int)?
        /// The SQL text's first byte, when it is in the local payload.
        var sqlOffset: Int?
    }

    /// The page size a database header states, nil when it states none SQLite accepts.
    static func pageSize(of database: [UInt8]) -> Int? {
        guard database.count >= 18 else { return nil }
        let raw = Int(database[16]) << 8 | Int(database[17])
        let size = raw == 1 ? 65536 : raw
        return size >= 512 && size & (size - 1) == 0 ? size : nil
    }

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 512, bytes[0..<16].elementsEqual(Self.magic) else { return nil }
        let raw = Int(bytes[16]) << 8 | Int(bytes[17])
        let size = raw == 1 ? 65536 : raw
        guard size >= 512, size & (size - 1) == 0, size - Int(bytes[20]) >= 480 else { return nil }
        self.bytes = bytes
        pageSize = size
        usableSize = size - Int(bytes[20])
        pageCount = bytes.count / size
        guard pageCount >= 1 else { return nil }
        walk(root: 1, tree: "sqlite_schema")
        readSchema()
        for entry in schema where entry.rootpage > 1 { walk(root: entry.rootpage, tree: entry.name) }
        readFreelist()
    }

    // MARK: - Reading

    func u16(_ offset: Int) -> Int { offset + 2 <= bytes.count ? Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) : 0 }
    func u32(_ offset: Int) -> Int {
        offset + 4 <= bytes.count ? Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]) : 0
    }

    /// A varint at `offset`: value and width, nil past the end.
    func varint(_ offset: Int) -> (value: Int64, width: Int)? {
        var value: UInt64 = 0
        for index in 0..<9 {
            guard offset + index < bytes.count else { return nil }
            let byte = bytes[offset + index]
            if index == 8 { return (Int64(bitPattern: value << 8 | UInt64(byte)), 9) }
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 { return (Int64(bitPattern: value), index + 1) }
        }
        return nil
    }

    func pageOffset(_ number: Int) -> Int { (number - 1) * pageSize }
    func isPage(_ number: Int) -> Bool { number >= 1 && number <= pageCount }

    private mutating func walk(root: Int, tree: String) {
        var queue = [root]
        var steps = 0
        while let number = queue.popLast(), steps < 10_000 {
            steps += 1
            guard isPage(number), roles[number] == nil else { continue }
            let header = pageOffset(number) + (number == 1 ? 100 : 0)
            let type = bytes[header]
            guard [2, 5, 10, 13].contains(type) else { continue }
            roles[number] = .btree(tree)
            var page = BTreePage(number: number, tree: tree, type: type, headerOffset: header, cells: [])
            let count = min(u16(header + 3), usableSize / 2)
            if !page.isLeaf { queue.append(u32(header + 8)) }
            for index in 0..<count {
                let pointer = u16(page.pointerArrayOffset + 2 * index)
                guard pointer >= 8, pointer < usableSize else { continue }
                guard let cell = readCell(at: pageOffset(number) + pointer, page: page) else { continue }
                if !page.isLeaf { queue.append(u32(cell.offset)) }
                if let pointerOffset = cell.overflowPointerOffset { followOverflow(from: pointerOffset, tree: tree) }
                page.cells.append(cell)
            }
            btreePages.append(page)
        }
    }

    private func readCell(at offset: Int, page: BTreePage) -> Cell? {
        var cell = Cell(offset: offset)
        var cursor = offset + (page.isLeaf ? 0 : 4)
        if page.type == 5 {
            guard let rowid = varint(cursor) else { return nil }
            cell.rowid = (cursor, rowid.width, rowid.value)
            return cell
        }
        guard let size = varint(cursor), size.value >= 0, size.value < Int64(Int32.max) else { return nil }
        cell.payloadSize = (cursor, size.width, Int(size.value))
        cursor += size.width
        if page.type == 13 {
            guard let rowid = varint(cursor) else { return nil }
            cell.rowid = (cursor, rowid.width, rowid.value)
            cursor += rowid.width
        }
        let payload = Int(size.value)
        let local = localPayloadSize(payload, table: page.isTable)
        cell.payloadOffset = cursor
        cell.localPayload = local
        if local < payload, cursor + local + 4 <= bytes.count { cell.overflowPointerOffset = cursor + local }
        // The record header: its size, then one serial type per column.
        guard let headerSize = varint(cursor), headerSize.value > 0, headerSize.value <= Int64(local) else { return cell }
        cell.headerSize = (cursor, headerSize.width, Int(headerSize.value))
        var position = cursor + headerSize.width
        while position < cursor + Int(headerSize.value), let serial = varint(position) {
            cell.serialTypes.append((position, serial.width, Int(truncatingIfNeeded: serial.value)))
            position += serial.width
        }
        return cell
    }

    /// The part of a payload of `size` bytes stored in the cell (the format's X, M and K).
    func localPayloadSize(_ size: Int, table: Bool) -> Int {
        let u = usableSize
        let maxLocal = table ? u - 35 : (u - 12) * 64 / 255 - 23
        let minLocal = (u - 12) * 32 / 255 - 23
        if size <= maxLocal { return size }
        let k = minLocal + (size - minLocal) % (u - 4)
        return k <= maxLocal ? k : minLocal
    }

    private mutating func followOverflow(from pointerOffset: Int, tree: String) {
        var pages: [Int] = []
        var next = u32(pointerOffset)
        while isPage(next), roles[next] == nil, pages.count < 100_000 {
            roles[next] = .overflow(tree)
            pages.append(next)
            next = u32(pageOffset(next))
        }
        if !pages.isEmpty { overflowChains.append((tree, pointerOffset, pages)) }
    }

    private mutating func readSchema() {
        for page in btreePages where page.tree == "sqlite_schema" && page.type == 13 {
            for cell in page.cells {
                guard let header = cell.headerSize, cell.serialTypes.count >= 5 else { continue }
                var position = header.offset + header.value
                var fields: [(offset: Int, serial: Int)] = []
                for serial in cell.serialTypes {
                    fields.append((position, serial.value))
                    position += Self.contentSize(serial.value)
                }
                func text(_ index: Int) -> String? {
                    let (offset, serial) = fields[index]
                    guard serial >= 13, serial % 2 == 1 else { return nil }
                    let length = (serial - 13) / 2
                    guard length <= 100_000, offset + length <= bytes.count else { return nil }
                    return String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
                }
                let (rootOffset, rootSerial) = fields[3]
                var rootpage = 0
                var field: (offset: Int, width: Int)?
                if let width = Self.integerWidth(rootSerial), rootOffset + width <= bytes.count {
                    for index in 0..<width { rootpage = rootpage << 8 | Int(bytes[rootOffset + index]) }
                    field = (rootOffset, width)
                }
                let sqlInLocal = fields[4].offset < (cell.payloadOffset ?? 0) + cell.localPayload
                schema.append(
                    SchemaEntry(
                        type: text(0) ?? "", name: text(1) ?? "", rootpage: rootpage, rootpageField: field,
                        sqlOffset: sqlInLocal && fields[4].serial >= 13 ? fields[4].offset : nil))
            }
        }
    }

    private mutating func readFreelist() {
        var trunk = u32(32)
        while isPage(trunk), roles[trunk] == nil, freelistTrunks.count < 10_000 {
            roles[trunk] = .freelistTrunk
            freelistTrunks.append(trunk)
            let count = min(u32(pageOffset(trunk) + 4), usableSize / 4 - 2)
            for index in 0..<count {
                let leaf = u32(pageOffset(trunk) + 8 + 4 * index)
                if isPage(leaf), roles[leaf] == nil {
                    roles[leaf] = .freelistLeaf
                    freelistLeaves.append(leaf)
                }
            }
            trunk = u32(pageOffset(trunk))
        }
    }

    /// Bytes of a serial type's content.
    static func contentSize(_ serial: Int) -> Int {
        switch serial {
        case 0, 8, 9, 10, 11: 0
        case 1: 1
        case 2: 2
        case 3: 3
        case 4: 4
        case 5: 6
        case 6, 7: 8
        default: serial >= 12 ? (serial - 12) / 2 : 0
        }
    }

    /// Width of an integer serial type, nil for other types.
    static func integerWidth(_ serial: Int) -> Int? {
        switch serial {
        case 1...4: serial
        case 5: 6
        case 6: 8
        default: nil
        }
    }
}
