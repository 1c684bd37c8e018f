// habit-loader-naive PATH
//
// The naive loader (HabitLoaders.NaiveHabitLoader) as a target-protocol executable, with one
// more bug of its own: it force-unwraps the file read, so a missing file crashes it.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import HabitLoaders

func readWholeFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return bytes
}

do {
    for habit in try NaiveHabitLoader.load(readWholeFile(CommandLine.arguments[1])!) { print(habit.digest) }
} catch {
    var line = "reason: \(error.reason)\n"
    line.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
    exit(1)
}
