import ContactsApp
import Foundation

/// Sample data of the contacts app, for its tests.
public enum ContactFixtures {
    public static let lists: [ContactList] = [
        ContactList(names: ["Ada Lovelace", "Grace Hopper"]),
        ContactList(names: []),
        ContactList(names: ["Émilie du Châtelet", "李白", "Alan Turing", "K"]),
    ]

    /// The sample lists as files: the seeds of a fuzzing campaign.
    public static func files() throws -> [Data] {
        try lists.map { Data(try ContactsFile.encode($0)) }
    }

    /// A data folder holding the first sample list, under the temporary folder: what a save
    /// starts from in a crash-point check. Made once per process (tests run in parallel), and
    /// put in place by a rename, so processes that race to make it all see the same folder.
    public static func dataFolder() throws -> URL {
        try madeDataFolder.get()
    }

    private static let madeDataFolder = Result<URL, any Error> {
        let manager = FileManager.default
        let folder = manager.temporaryDirectory.appendingPathComponent("consumer-app-contacts-v1")
        if (try? ContactsStore.load(in: folder)) == lists[0] { return folder }
        if manager.fileExists(atPath: folder.path) { try manager.removeItem(at: folder) }
        let staging = manager.temporaryDirectory.appendingPathComponent("consumer-app-contacts-v1-\(UUID().uuidString)")
        try manager.createDirectory(at: staging, withIntermediateDirectories: true)
        try ContactsStore.save(lists[0], in: staging)
        // Fails when another process put its folder in place first: that one serves.
        do {
            try manager.moveItem(at: staging, to: folder)
        } catch {
            try? manager.removeItem(at: staging)
        }
        guard (try? ContactsStore.load(in: folder)) == lists[0] else {
            throw ContactsError(reason: "io-error", message: "could not make \(folder.path)")
        }
        return folder
    }
}
