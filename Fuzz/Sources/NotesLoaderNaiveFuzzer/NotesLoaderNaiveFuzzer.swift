// The naive notes loader (libxml2 with entity substitution and DTD loading) as a libFuzzer
// target through the bridge: the notes format's catalogue names a canary file and a loopback
// URL, so an XXE (the canary's content in the loaded notes, or a fetch) is a crash here.
import CorruptFuzzExamples
import CorruptFuzzLibFuzzer
import NotesLoaders

let bridge = LibFuzzerBridge(name: "notes-loader-naive", format: NotesFormat()) { bytes in
    try NaiveNotesLoader.load(bytes)
}

/// The fuzzer's entry point: libFuzzer's driver with the bridge as target.
@main
enum NotesLoaderNaiveFuzzer {
    static func main() { LibFuzzerBridge.runDriver(testOneInput) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    bridge.testOneInput(data, size)
}

@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    bridge.mutate(data, size, maxSize, seed)
}

@_cdecl("LLVMFuzzerCustomCrossOver")
public func customCrossOver(
    _ a: UnsafePointer<UInt8>?, _ aSize: Int, _ b: UnsafePointer<UInt8>?, _ bSize: Int, _ out: UnsafeMutablePointer<UInt8>?, _ maxOutSize: Int,
    _ seed: UInt32
) -> Int {
    bridge.crossOver(a, aSize, b, bSize, out, maxOutSize, seed)
}
