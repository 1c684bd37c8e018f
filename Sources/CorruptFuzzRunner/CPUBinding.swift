import CCorruptFuzzSpawn
import Foundation

/// Each job of a campaign, with the processes it starts, on a core of its own, as AFL++ binds
/// afl-fuzz and its target to a free CPU (Linux; elsewhere nothing is bound).
///
/// A persistent worker answers an input in microseconds. When the job's thread and its worker
/// run on different cores, every input wakes a sleeping core twice (an inter-processor interrupt
/// and an exit from its idle state): three quarters of a one-job campaign's time on the bundled
/// habit loader (17,000 inputs/s apart, 62,000/s on one core; BENCHMARKS.md). A job's thread is
/// bound before it starts its worker, which inherits the binding, as do its fork server's
/// children and the target processes it starts one per input.
///
/// Only free CPUs are taken: ones that no task of another process is bound to alone (another
/// fuzzer's; kernel threads do not count), and that no other campaign of this process holds.
/// A job that finds none is not bound. `CORRUPT_FUZZ_NO_AFFINITY=1` binds nothing (AFL++'s
/// `AFL_NO_AFFINITY`).
enum CPUBinding {
    /// The environment variable that turns binding off.
    static let variable = "CORRUPT_FUZZ_NO_AFFINITY"
    /// The CPUs this process's campaigns hold now.
    private static let held = LockedBox<Set<Int32>>([])

    /// A free CPU for each of `jobs` jobs, as long as there are (nil: that job is not bound);
    /// held until ``release(_:)``.
    static func claim(jobs: Int) -> [Int32?] {
        let none = [Int32?](repeating: nil, count: jobs)
        guard ProcessInfo.processInfo.environment[variable] != "1" else { return none }
        var found = [Int32](repeating: 0, count: 1024)
        let count = Int(cf_free_cpus(&found, Int32(found.count)))
        guard count > 0 else { return none }
        return held.withLock { taken in
            var free = found.prefix(count).filter { !taken.contains($0) }.makeIterator()
            return (0..<jobs).map { _ -> Int32? in
                guard let cpu = free.next() else { return nil }
                taken.insert(cpu)
                return cpu
            }
        }
    }

    /// Gives back the CPUs ``claim(jobs:)`` gave.
    static func release(_ cpus: [Int32?]) {
        held.withLock { taken in
            for cpu in cpus.compactMap({ $0 }) { taken.remove(cpu) }
        }
    }

    /// Runs `body` with the calling thread bound to `cpu` (nil: as it is), then gives the
    /// thread its binding back.
    static func bound<Result>(to cpu: Int32?, _ body: () throws -> Result) rethrows -> Result {
        var saved = cf_cpu_mask()
        guard let cpu, cf_bind_thread(cpu, &saved) == 0 else { return try body() }
        defer { _ = cf_restore_thread(&saved) }
        return try body()
    }

    /// The calling thread's CPUs (`0,1`); nil where that cannot be told.
    static func currentThreadCPUs() -> String? {
        var text = [CChar](repeating: 0, count: 4096)
        guard cf_thread_cpu_list(&text, text.count) == 0 else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
