// The libFuzzer side of Benchmarks/Speed/run.sh: the same hardened habit loader, called from a
// libFuzzer entry point. Built with swiftc -O -sanitize=fuzzer together with
// Examples/HabitLoaders. At exit it prints the mean length of the inputs it ran, beside
// corrupt-fuzz's (a fuzzer that runs shorter inputs runs more of them).
import Glibc

nonisolated(unsafe) var inputs = 0
nonisolated(unsafe) var inputBytes = 0

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    atexit {
        fputs("libFuzzer mean input: \(inputBytes / max(1, inputs)) bytes\n", stderr)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    inputs += 1
    inputBytes += size
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    _ = try? HardenedHabitLoader.load(bytes)
    return 0
}
