import CSQLite
import Foundation

/// The contacts an app keeps: names, in order.
public struct ContactList: Equatable, Sendable {
    public var names: [String]

    public init(names: [String]) {
        self.names = names
    }

    /// The app's own check of a loaded list: nil when it is valid, else what is wrong.
    public func validateUserData() -> String? {
        if names.count > ContactsFile.maximumCount { return "\(names.count) contacts, more than \(ContactsFile.maximumCount)" }
        if let index = names.firstIndex(where: \.isEmpty) { return "contact \(index) has no name" }
        if let index = names.firstIndex(where: { $0.utf8.count > 255 }) { return "contact \(index)'s name is over 255 bytes" }
        return nil
    }
}

/// Why a contacts file does not load. `reason` is the word corrupt-fuzz reads: `not-found`,
/// `empty`, `corrupt` or `unsupported-version` (a file from a newer version of the app, which
/// the app must keep, not delete).
public struct ContactsError: Error, Equatable, Sendable, CustomStringConvertible {
    public var reason: String
    public var message: String

    public init(reason: String, message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(reason): \(message)" }

    static func corrupt(_ message: String) -> ContactsError { ContactsError(reason: "corrupt", message: message) }
}

/// The contacts file, version 1: the magic `CNTC`, a version byte, a little-endian UInt16
/// count, each name as a length byte (1...255) and that many bytes of UTF-8, and last the
/// FNV-1a checksum (`contacts_checksum`, the CSQLite target) of everything before it, as a
/// little-endian UInt32.
public enum ContactsFile {
    public static let magic: [UInt8] = Array("CNTC".utf8)
    public static let version: UInt8 = 1
    public static let maximumCount = 10_000

    /// The bytes of `list`; throws when the list cannot be written (see `validateUserData`).
    public static func encode(_ list: ContactList) throws -> [UInt8] {
        if let problem = list.validateUserData() { throw ContactsError(reason: "invalid", message: problem) }
        var bytes = magic + [version, UInt8(list.names.count & 0xFF), UInt8(list.names.count >> 8)]
        for name in list.names {
            bytes.append(UInt8(name.utf8.count))
            bytes += Array(name.utf8)
        }
        let checksum = bytes.withUnsafeBufferPointer { contacts_checksum($0.baseAddress, $0.count) }
        bytes += (0..<4).map { UInt8(truncatingIfNeeded: checksum >> (8 * $0)) }
        return bytes
    }

    /// The list a file holds, or why it cannot be loaded.
    public static func decode(_ bytes: [UInt8]) throws -> ContactList {
        guard !bytes.isEmpty else { throw ContactsError(reason: "empty", message: "the file is empty") }
        guard bytes.count >= 4, Array(bytes[0..<4]) == magic else { throw ContactsError.corrupt("not a contacts file (no CNTC magic)") }
        guard bytes.count >= 5 else { throw ContactsError.corrupt("no version") }
        // The version first: a newer app's file is kept, whatever else it holds.
        if bytes[4] > version { throw ContactsError(reason: "unsupported-version", message: "version \(bytes[4]) is newer than \(version)") }
        guard bytes[4] == version else { throw ContactsError.corrupt("version \(bytes[4])") }
        guard bytes.count >= 11 else { throw ContactsError.corrupt("truncated: \(bytes.count) bytes") }
        let end = bytes.count - 4
        let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[end + $1]) << (8 * $1) }
        let computed = bytes.withUnsafeBufferPointer { contacts_checksum($0.baseAddress, end) }
        guard stored == computed else { throw ContactsError.corrupt("checksum \(stored) is not \(computed)") }
        let count = Int(bytes[5]) | Int(bytes[6]) << 8
        guard count <= maximumCount else { throw ContactsError.corrupt("\(count) contacts, more than \(maximumCount)") }
        var names: [String] = []
        var position = 7
        for index in 0..<count {
            guard position < end else { throw ContactsError.corrupt("contact \(index): past the end") }
            let length = Int(bytes[position])
            position += 1
            guard length > 0 else { throw ContactsError.corrupt("contact \(index) has no name") }
            guard position + length <= end else { throw ContactsError.corrupt("contact \(index): name past the end") }
            guard let name = String(validating: bytes[position..<position + length], as: UTF8.self) else {
                throw ContactsError.corrupt("contact \(index): the name is not UTF-8")
            }
            names.append(name)
            position += length
        }
        guard position == end else { throw ContactsError.corrupt("\(end - position) bytes after the last contact") }
        return ContactList(names: names)
    }

    /// The list in the file at `url`; a missing file is `not-found`.
    public static func load(contentsOf url: URL) throws -> ContactList {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw ContactsError(reason: "not-found", message: "no file at \(url.path)")
        }
        return try decode(Array(try Data(contentsOf: url)))
    }
}
