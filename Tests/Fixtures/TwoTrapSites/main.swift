// A loader with two unrelated trap sites in one function, compiled with `swiftc -O` by the
// engine tests: an optimized build traps without a runtime message, so only the trap site
// tells the two bugs apart. Not a package target: the test builds it.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@inline(never)
func loadHabits(_ bytes: [UInt8]) -> Int {
    guard bytes.count >= 2, bytes[0] == UInt8(ascii: "H") else { return -1 }
    var sum = 0
    if bytes[1] == UInt8(ascii: "A") {
        // Trap site 1: an index read from the file.
        sum += Int(bytes[Int(bytes.last!)])
    } else if bytes[1] == UInt8(ascii: "B") {
        // Trap site 2: an unrelated overflow of a count read from the file.
        sum = Int(bytes.last!) * 400_000_000_000_000_000
    }
    return sum
}

guard CommandLine.arguments.count > 1, let file = fopen(CommandLine.arguments[1], "rb") else {
    fputs("reason: not-found\n", stderr)
    exit(1)
}
var bytes: [UInt8] = []
var buffer = [UInt8](repeating: 0, count: 4096)
while case let n = fread(&buffer, 1, buffer.count, file), n > 0 { bytes += buffer[0..<n] }
let result = loadHabits(bytes)
if result < 0 {
    fputs(bytes.isEmpty ? "reason: empty\n" : "reason: corrupt\n", stderr)
    exit(1)
}
print("digest: \(result)")
