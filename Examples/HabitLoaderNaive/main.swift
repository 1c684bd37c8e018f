// habit-loader-naive PATH
//
// The naive loader (HabitLoaders.NaiveHabitLoader) as a target-protocol executable, with one
// more bug of its own: it force-unwraps the file read, so a missing file crashes it. Started by
// `corrupt-fuzz run --worker`, it serves input after input (corrupt_fuzz_worker.h's loop, which
// keeps this executable free of Foundation and so quick to start either way).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CCorruptFuzzWorker
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

let status = cf_worker_main_paths(CommandLine.argc, CommandLine.unsafeArgv) { path, reply in
    do throws(HabitLoadError) {
        let habits = try NaiveHabitLoader.load(readWholeFile(String(cString: path!))!)
        cf_worker_accept(reply, habits.map(\.digest).joined(separator: "\n"))
        return 0
    } catch {
        cf_worker_reject(reply, error.reason, "")
        return 1
    }
}
exit(status)
