import CorruptFuzzCore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A load that left the database open: statements not finalized (`sqlite3_close` then fails
/// with `SQLITE_BUSY` and the connection stays open, holding the file and its locks) or a
/// connection never closed.
public struct SQLiteLeak: Sendable, CustomStringConvertible {
    /// How the input was made (`generated-0`, `generated-1 + page[2](folders).cell-count=0`).
    public var input: String
    /// What the loader did with the input: accepted, or rejected with its error.
    public var outcome: String
    /// The files still open after the load returned.
    public var openFiles: [String]

    public var description: String {
        "after loading \(input) (\(outcome)), \(openFiles.count) descriptor\(openFiles.count == 1 ? "" : "s") still open on \(openFiles.joined(separator: ", ")): a statement was not finalized or the connection not closed"
    }
}

extension SQLiteFormat {
    /// Loads databases of this format with `load` (given a database path, its `-wal` beside it)
    /// and returns each load after which a file of the database was still open.
    ///
    /// The inputs are `databases` when given, else `count` databases the format generates from
    /// `seed` and the first entries of their catalogues, valid and corrupt alike (error paths are
    /// where statements are left unfinalized). The loader runs in this process: give it inputs
    /// it survives, or run this inside a crash-isolated check.
    public func leaks(
        databases: [(name: String, bytes: [UInt8])]? = nil, count: Int = 3, cataloguePerDatabase: Int = 40, seed: UInt64 = 0,
        load: (String) throws -> Void
    ) -> [SQLiteLeak] {
        var inputs = databases ?? []
        if databases == nil {
            var rng = FuzzRNG(seed: seed)
            for index in 0..<count {
                let bytes = sqliteMutator.generate(using: &rng)
                inputs.append(("generated-\(index)", bytes))
                for mutation in sqliteMutator.catalogue(of: bytes).prefix(cataloguePerDatabase) {
                    inputs.append(("generated-\(index) + \(mutation.name)", mutation.bytes))
                }
            }
        }
        var found: [SQLiteLeak] = []
        for input in inputs {
            guard let files = try? SQLiteFiles.decode(input.bytes), let folder = try? ScratchFolder(prefix: "corrupt-fuzz-sqlite") else { continue }
            defer { try? FileManager.default.removeItem(atPath: folder.path) }
            guard let path = try? files.write(into: folder.path) else { continue }
            let outcome: String
            do {
                try load(path)
                outcome = "accepted"
            } catch {
                outcome = "rejected: \(error)"
            }
            let open = OpenFiles.descriptors(inside: folder.path)
            if !open.isEmpty { found.append(SQLiteLeak(input: input.name, outcome: String(outcome.prefix(200)), openFiles: open.map(\.path))) }
        }
        return found
    }
}
