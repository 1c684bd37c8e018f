// A persistent worker (CorruptFuzzWorker.serve) with one behaviour per mode, for the worker
// executor's tests:
//   WorkerFixture strict   accepts "OK…", rejects anything else as corrupt; crashes on an input
//                          holding a zero byte, hangs on one starting with "HANG", and says
//                          unsupported-version for "OK2…"
//   WorkerFixture leaky    rejects an input the first time and accepts it when it comes again
//                          (a cache of what it saw): state leaks between inputs
//   WorkerFixture holds    accepts every input, and keeps each input file open with a lock on it
//   WorkerFixture aging    accepts every input, and runs out of memory at its 50th (a leak)
//   WorkerFixture threaded strict, with a second thread running (so it is no fork server)
//   WorkerFixture habits   the hardened habit loader, which traps (an index out of range) on
//                          about one input in three (those whose FNV-1a hash is 0 modulo 3),
//                          unless WORKER_FIXTURE_CRASH=0: a frequent, shallow crash
//                          (Benchmarks/crash-pace)
//   WorkerFixture scarred  accepts every input with its process id as the digest; traps on an
//                          input holding a zero byte, mid-load: a process that lives through it
//                          keeps a load that never finished, and then traps (at another site)
//                          on an input starting with "M". WORKER_FIXTURE_CRASH_BY=abort, fault
//                          or double-free crashes so instead of the zero byte's trap: abort(), a
//                          write to address 8, a 4 kB block freed twice (glibc's check aborts
//                          with the allocator's lock held)
//   WorkerFixture locking  strict, holding a lock while it loads: a process that lives through
//                          its trap (a zero byte) waits forever for the lock on its next input
//   WorkerFixture two-aborts  calls abort() in one function for an input starting with "A", in
//                          another for one starting with "B" (after a line on stderr); accepts
//                          anything else
//   WorkerFixture digest   accepts every input with `<size> <FNV-1a hash>` as the digest
//   WorkerFixture digest-paths  the same, opening the file itself (CorruptFuzzWorker.serveFiles)
// or WORKER_FIXTURE_MODE=MODE WorkerFixture [PATH]
import CorruptFuzzWorker
import Foundation
import HabitLoaders

struct LoadError: Error {
    var reason: String
    var message: String
}

nonisolated(unsafe) var seen: Set<Data> = []

/// The planted bug of the `habits` mode: reads past the end of a two-entry table for one input
/// in three.
@inline(never) func checkedEntry(_ bytes: [UInt8]) -> Int {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    let table = [0, 1]
    return table[hash % 3 == 0 ? 2 : Int(hash % 2)]
}

/// The `digest` modes' digest: the size and the FNV-1a hash of the bytes.
func digest(of bytes: [UInt8]) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return "\(bytes.count) \(hash)"
}

/// The `two-aborts` mode's two aborts: two bugs, one finding each.
@inline(never) func abortInHeader(_ bytes: [UInt8]) {
    if bytes.first == UInt8(ascii: "A") {
        FileHandle.standardError.write(Data("bad header\n".utf8))
        abort()
    }
}

@inline(never) func abortInBody(_ bytes: [UInt8]) {
    if bytes.first == UInt8(ascii: "B") {
        FileHandle.standardError.write(Data("bad body\n".utf8))
        abort()
    }
}

/// The `scarred` mode's mark: loads started and not finished (one, while an input loads).
nonisolated(unsafe) var unfinished = 0

@inline(never) func leftLoading() -> Never { preconditionFailure("a trap left this process loading") }

/// The `scarred` mode's crash, as WORKER_FIXTURE_CRASH_BY says.
@inline(never) func crashOnZeroByte(at index: Int) {
    switch ProcessInfo.processInfo.environment["WORKER_FIXTURE_CRASH_BY"] {
    case "abort":
        FileHandle.standardError.write(Data("a zero byte at \(index)\n".utf8))
        abort()
    case "fault":
        UnsafeMutablePointer<Int>(bitPattern: 8)!.pointee = index
    case "double-free":
        let block = malloc(4096)
        free(block)
        free(block)
    default:
        fatalError("a zero byte at \(index)")
    }
}

// The mode: WORKER_FIXTURE_MODE, else the first argument (with the variable set, the first
// argument is free for an input's path, so the fixture also runs one input at a time).
let mode = ProcessInfo.processInfo.environment["WORKER_FIXTURE_MODE"] ?? CommandLine.arguments.dropFirst().first
switch mode {
case "holds":
    CorruptFuzzWorker.serveFiles { (path: String?) throws(LoadError) -> Int in
        guard let path else { throw LoadError(reason: "not-found", message: "no file") }
        let fd = open(path, O_RDONLY)
        if fd >= 0 { _ = flock(fd, LOCK_SH) }
        return Int(fd)
    }
case "aging":
    nonisolated(unsafe) var count = 0
    CorruptFuzzWorker.serve { (data: Data) throws(LoadError) -> Int in
        count += 1
        if count >= 50 { fatalError("failed to allocate 1408 bytes of memory, after \(count) inputs") }
        return data.count
    }
case "habits":
    let crashes = ProcessInfo.processInfo.environment["WORKER_FIXTURE_CRASH"] != "0"
    CorruptFuzzWorker.serve { (data: Data) throws -> Int in
        let bytes = [UInt8](data)
        let entry = crashes ? checkedEntry(bytes) : 0
        return try HardenedHabitLoader.load(bytes).count + entry
    }
case "scarred":
    CorruptFuzzWorker.serve { (data: Data) throws(LoadError) -> String in
        let bytes = [UInt8](data)
        unfinished += 1
        if unfinished > 1, bytes.first == UInt8(ascii: "M") { leftLoading() }
        if let index = bytes.firstIndex(of: 0) { crashOnZeroByte(at: index) }
        unfinished -= 1
        return "\(getpid())"
    }
case "locking":
    // A semaphore, not an NSLock: Foundation's lock on Linux checks for errors, and its owner
    // taking it again gets an error, not a wait.
    let lock = DispatchSemaphore(value: 1)
    CorruptFuzzWorker.serve { (data: Data) throws(LoadError) -> String in
        lock.wait()
        defer { lock.signal() }
        let bytes = [UInt8](data)
        if let index = bytes.firstIndex(of: 0) { fatalError("a zero byte at \(index)") }
        guard bytes.starts(with: Array("OK".utf8)) else { throw LoadError(reason: "corrupt", message: "no OK") }
        return String(decoding: bytes, as: UTF8.self)
    }
case "two-aborts":
    CorruptFuzzWorker.serve { (data: Data) -> Int in
        let bytes = [UInt8](data)
        abortInHeader(bytes)
        abortInBody(bytes)
        return bytes.count
    }
case "digest":
    CorruptFuzzWorker.serve { (data: Data) -> String in digest(of: [UInt8](data)) }
case "digest-paths":
    CorruptFuzzWorker.serveFiles { (path: String?) throws(LoadError) -> String in
        guard let path, let data = FileManager.default.contents(atPath: path) else { throw LoadError(reason: "not-found", message: "no file") }
        return digest(of: [UInt8](data))
    }
case "leaky":
    CorruptFuzzWorker.serve { (data: Data) throws(LoadError) -> Int in
        guard seen.insert(data).inserted else { return data.count }
        throw LoadError(reason: "corrupt", message: "not seen before")
    }
default:
    if mode == "threaded" {
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            started.signal()
            while true { sleep(60) }
        }
        started.wait()
    }
    CorruptFuzzWorker.serve { (data: Data) throws(LoadError) -> String in
        let bytes = [UInt8](data)
        if let index = bytes.firstIndex(of: 0) { fatalError("a zero byte at \(index)") }
        if bytes.starts(with: Array("HANG".utf8)) { while true { sleep(1) } }
        if bytes.isEmpty { throw LoadError(reason: "empty", message: "no bytes") }
        if bytes.starts(with: Array("OK2".utf8)) { throw LoadError(reason: "unsupported-version", message: "version 2") }
        guard bytes.starts(with: Array("OK".utf8)) else { throw LoadError(reason: "corrupt", message: "no OK") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
