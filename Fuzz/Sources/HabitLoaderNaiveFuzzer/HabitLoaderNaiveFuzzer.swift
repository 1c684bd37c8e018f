// The naive habit loader as a libFuzzer target through the bridge: libFuzzer sees its crashes
// by itself; the bridge adds its silent acceptances and wrong reasons (judged by the schema's
// validator) and mutates inputs with the schema's structure-aware mutations.
import CorruptFuzzLibFuzzer
import HabitFuzzSupport
import HabitLoaders

let bridge = LibFuzzerBridge(name: "habit-loader-naive", format: habitFormat) { bytes in
    try NaiveHabitLoader.load(bytes).map(\.digest)
}

/// The fuzzer's entry point: libFuzzer's driver with the bridge as target.
@main
enum HabitLoaderNaiveFuzzer {
    static func main() { LibFuzzerBridge.runDriver(testOneInput) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    bridge.testOneInput(data, size)
}

// Built with -D CORRUPT_FUZZ_BYTES_ONLY, the fuzzer mutates with libFuzzer's own mutations
// only: the benchmark's baseline (Benchmarks/libfuzzer-bridge/run.sh).
#if !CORRUPT_FUZZ_BYTES_ONLY
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
#endif
