// The libFuzzer side of Benchmarks/speed.sh: the same hardened habit loader, called from a
// libFuzzer entry point. Built with swiftc -O -sanitize=fuzzer together with
// Examples/HabitLoaders.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    _ = try? HardenedHabitLoader.load(bytes)
    return 0
}
