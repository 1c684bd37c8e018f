import Foundation

/// A database as one fuzzing input: the main file alone (rollback journal), or the main file
/// and its write-ahead log, carried together as a small ustar archive (a *bundle*: members
/// `main.db` and `main.db-wal`, mode 0644, time 0), which `tar -xf` unpacks into the pair
/// SQLite opens.
///
/// A campaign gives a loader one file; a WAL database is two. The bundle keeps them together
/// through mutation, minimization and reports, and stays readable by ordinary tools.
public struct SQLiteFiles: Sendable, Hashable {
    /// The main database file.
    public var database: [UInt8]
    /// The `-wal` file, nil when there is none.
    public var wal: [UInt8]?

    public init(database: [UInt8], wal: [UInt8]? = nil) {
        self.database = database
        self.wal = wal
    }

    /// The member names of a bundle.
    public static let databaseMember = "main.db"
    public static let walMember = "main.db-wal"

    /// The input's bytes: the database itself, or a bundle when there is a WAL.
    public func encoded() -> [UInt8] {
        guard let wal else { return database }
        return Self.tarMember(Self.databaseMember, database) + Self.tarMember(Self.walMember, wal) + [UInt8](repeating: 0, count: 1024)
    }

    /// Whether `bytes` are a bundle (a ustar archive) rather than a database file.
    public static func isBundle(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 512 && bytes[257..<262].elementsEqual("ustar".utf8)
    }

    /// The files of an input: a bundle's members, or the bytes as the database.
    /// - Throws: ``BundleProblem`` for a bundle that is cut short, has a bad header checksum,
    ///   or lacks `main.db`.
    public static func decode(_ bytes: [UInt8]) throws(BundleProblem) -> SQLiteFiles {
        guard isBundle(bytes) else { return SQLiteFiles(database: bytes) }
        // tar reads 512-byte blocks: an archive cut inside one is refused (Python's tarfile
        // says "unexpected end of data").
        guard bytes.count % 512 == 0 else { throw BundleProblem("\(bytes.count) bytes is not a whole number of 512-byte blocks") }
        var offset = 0
        var database: [UInt8]?
        var wal: [UInt8]?
        while offset + 512 <= bytes.count {
            let header = bytes[offset..<(offset + 512)]
            if header.allSatisfy({ $0 == 0 }) { break }
            let stored = octal(header, 148, 8)
            var sum = 0
            for (index, byte) in header.enumerated() { sum += (148..<156).contains(index) ? 32 : Int(byte) }
            guard stored == sum else { throw BundleProblem("member header at \(offset): checksum \(stored.map(String.init) ?? "unreadable") is not \(sum)") }
            guard let size = octal(header, 124, 12) else { throw BundleProblem("member header at \(offset): unreadable size") }
            let nameBytes = header[offset..<(offset + 100)].prefix { $0 != 0 }
            let name = String(decoding: nameBytes, as: UTF8.self)
            let start = offset + 512
            guard size <= bytes.count - start else { throw BundleProblem("member \(name): \(size) bytes, \(bytes.count - start) left") }
            let content = Array(bytes[start..<(start + size)])
            switch name {
            case databaseMember: database = content
            case walMember: wal = content
            default: throw BundleProblem("member \(name) is neither \(databaseMember) nor \(walMember)")
            }
            offset = start + (size + 511) / 512 * 512
        }
        guard let database else { throw BundleProblem("no \(databaseMember) member") }
        return SQLiteFiles(database: database, wal: wal)
    }

    /// Writes the files into `directory` as `main.db` (and `main.db-wal`); returns the
    /// database's path.
    @discardableResult
    public func write(into directory: String) throws -> String {
        let path = directory + "/" + Self.databaseMember
        try Data(database).write(to: URL(fileURLWithPath: path))
        if let wal { try Data(wal).write(to: URL(fileURLWithPath: path + "-wal")) }
        return path
    }

    /// What makes a bundle unreadable.
    public struct BundleProblem: Error, Sendable, CustomStringConvertible {
        public var message: String
        /// The reason word a loader gives for it.
        public let reason = "corrupt"
        init(_ message: String) { self.message = message }
        public var description: String { "bundle: " + message }
    }

    // MARK: - ustar

    static func tarMember(_ name: String, _ content: [UInt8]) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, _ offset: Int) {
            for (index, byte) in text.utf8.enumerated() { header[offset + index] = byte }
        }
        func octalField(_ value: Int, _ offset: Int, _ width: Int) {
            let digits = String(value, radix: 8)
            put(String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits, offset)
        }
        put(name, 0)
        octalField(0o644, 100, 8)
        octalField(0, 108, 8)
        octalField(0, 116, 8)
        octalField(content.count, 124, 12)
        octalField(0, 136, 12)
        header[156] = UInt8(ascii: "0")
        put("ustar", 257)
        put("00", 263)
        for index in 148..<156 { header[index] = 32 }
        let sum = header.reduce(0) { $0 + Int($1) }
        octalField(sum, 148, 7)
        header[155] = 32
        return header + content + [UInt8](repeating: 0, count: (512 - content.count % 512) % 512)
    }

    private static func octal(_ header: ArraySlice<UInt8>, _ offset: Int, _ width: Int) -> Int? {
        let start = header.startIndex + offset
        var value = 0
        var digits = 0
        for byte in header[start..<(start + width)] {
            if byte == 0 || byte == 32 {
                if digits > 0 { break } else { continue }
            }
            guard byte >= 0x30, byte <= 0x37, value < Int.max >> 4 else { return nil }
            value = value * 8 + Int(byte - 0x30)
            digits += 1
        }
        return digits > 0 ? value : nil
    }
}
