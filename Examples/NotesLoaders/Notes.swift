import Foundation

/// One note of the notes document: `<note id="…" created="…">text</note>`.
public struct Note: Sendable, Hashable {
    /// Missing in a document the naive loader accepted.
    public var id: String?
    public var created: String?
    public var text: String

    public init(id: String?, created: String?, text: String) {
        self.id = id
        self.created = created
        self.text = text
    }

    /// A line of the loaders' digest.
    public var digest: String { "\(id ?? "-")\t\(created ?? "-")\t\(text)" }
}

/// Why a notes document could not be loaded: the reason word of the target protocol and what
/// is wrong.
public struct NotesLoadError: Error, Sendable, Hashable {
    /// `not-found`, `empty`, `corrupt`, `unsupported-version`.
    public var reason: String
    public var message: String

    public init(_ reason: String, _ message: String) {
        self.reason = reason
        self.message = message
    }
}

/// The notes document's XML Schema: this target's resource `notes.xsd` (the one copy;
/// `Corpus/schemas/notes.xsd` is a link to it), read once.
public enum NotesSchema {
    /// The schema's bytes, or why they cannot be read: a program copied away from its resource
    /// bundle gets an error here, never a trap.
    public static let bytes: Result<[UInt8], NotesLoadError> = read()

    /// The resource bundle's name, as SwiftPM builds it beside the products.
    static let bundleName = "corrupt-fuzz_NotesLoaders"

    static func read() -> Result<[UInt8], NotesLoadError> {
        guard let url = resourceBundle()?.url(forResource: "notes", withExtension: "xsd") else {
            return .failure(NotesLoadError("unreadable", "the resource notes.xsd (\(bundleName)) is not beside the program"))
        }
        guard let data = FileManager.default.contents(atPath: url.path), !data.isEmpty else {
            return .failure(NotesLoadError("unreadable", "cannot read the resource \(url.path)"))
        }
        return .success([UInt8](data))
    }

    /// The bundle SwiftPM's `Bundle.module` names, looked up where SwiftPM puts it (beside the
    /// executable, or beside the test bundle on macOS) without `Bundle.module`, which traps
    /// when the bundle is not there.
    static func resourceBundle() -> Bundle? {
        var folders = [Bundle.main.bundleURL, Bundle(for: BundleToken.self).bundleURL.deletingLastPathComponent()]
        if let resources = Bundle.main.resourceURL { folders.append(resources) }
        if let executable = Bundle.main.executableURL { folders.append(executable.resolvingSymlinksInPath().deletingLastPathComponent()) }
        for folder in folders {
            for suffix in ["resources", "bundle"] {
                if let bundle = Bundle(url: folder.appendingPathComponent("\(bundleName).\(suffix)")) { return bundle }
            }
        }
        return nil
    }

    private final class BundleToken {}
}
