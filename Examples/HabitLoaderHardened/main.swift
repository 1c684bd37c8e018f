// habit-loader-hardened PATH
//
// The hardened loader (HabitLoaders.HardenedHabitLoader) as a target-protocol executable:
// exit 0 with a digest line per habit, or exit 1 with `reason: WORD` first on stderr.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import HabitLoaders

/// Writes `text` to standard error (fd 2).
func printError(_ text: String) {
    var text = text
    text.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}

func readFile(_ path: String) throws(HabitLoadError) -> [UInt8] {
    guard let file = fopen(path, "rb") else {
        throw errno == ENOENT ? HabitLoadError.make("not-found", "\(path) does not exist") : HabitLoadError.make("unreadable", "cannot open \(path)")
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n > 0 { bytes += chunk[0..<n] }
        if n < chunk.count {
            if ferror(file) != 0 { throw HabitLoadError.make("unreadable", "read error in \(path)") }
            break
        }
    }
    return bytes
}

extension HabitLoadError {
    static func make(_ reason: String, _ message: String) -> HabitLoadError { HabitLoadError(reason: reason, message: message) }
}

guard CommandLine.arguments.count == 2 else {
    printError("reason: usage\nusage: habit-loader-hardened PATH\n")
    exit(2)
}
do {
    for habit in try HardenedHabitLoader.load(try readFile(CommandLine.arguments[1])) { print(habit.digest) }
} catch {
    printError("reason: \(error.reason)\n\(error.message)\n")
    exit(1)
}
