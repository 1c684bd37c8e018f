import CorruptFuzzCore
import Foundation

extension SQLiteFiles {
    /// Unpacks an input into a private temporary folder and runs `body` with the database's
    /// path (its `-wal` file beside it), then removes the folder: how an in-process check hands
    /// an input to a store that opens a path.
    /// - Throws: ``BundleProblem`` for a bundle that cannot be unpacked (with reason `corrupt`),
    ///   the folder's creation error, or what `body` throws.
    public static func withTemporaryDatabase<T>(_ data: some Collection<UInt8>, _ body: (String) throws -> T) throws -> T {
        let files = try decode(Array(data))
        return try ScratchFolder.with(prefix: "corrupt-fuzz-sqlite") { folder in
            let path = try files.write(into: folder.path)
            return try body(path)
        }
    }
}
