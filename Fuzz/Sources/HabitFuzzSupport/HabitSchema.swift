import CorruptFuzzLibFuzzer
import CorruptFuzzSchema
import Foundation

/// The habit tracker's format from its Kaitai Struct schema, found beside the fuzzer (where
/// build.sh copies it) or in the checkout; a fuzzer without it stops with a message.
public let habitFormat: SchemaFormat = {
    let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Corpus/schemas/habit-tracker.ksy").path
    guard let path = LibFuzzerBridge.locate("habit-tracker.ksy", checkoutPath: checkout) else {
        FileHandle.standardError.write(Data("habit-tracker.ksy not found beside the fuzzer nor at \(checkout); set CORRUPT_FUZZ_RESOURCES\n".utf8))
        exit(2)
    }
    do {
        return try SchemaFormat(ksyPath: path)
    } catch {
        FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
        exit(2)
    }
}()
