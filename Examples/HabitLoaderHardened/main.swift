// habit-loader-hardened PATH
//
// The hardened loader (HabitLoaders.HardenedHabitLoader) as a target-protocol executable:
// exit 0 with a digest line per habit, or exit 1 with `reason: WORD` first on stderr. Started
// by `corrupt-fuzz run --worker`, it serves input after input (corrupt_fuzz_worker.h's loop).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CCorruptFuzzWorker
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

guard CommandLine.arguments.count == 2 || getenv("CORRUPT_FUZZ_WORKER_FD") != nil else {
    printError("reason: usage\nusage: habit-loader-hardened PATH\n")
    exit(2)
}
let status = cf_worker_main_paths(CommandLine.argc, CommandLine.unsafeArgv) { path, reply in
    do throws(HabitLoadError) {
        let habits = try HardenedHabitLoader.load(try readFile(String(cString: path!)))
        cf_worker_accept(reply, habits.map(\.digest).joined(separator: "\n"))
        return 0
    } catch {
        cf_worker_reject(reply, error.reason, error.message)
        return 1
    }
}
exit(status)
