import CorruptFuzzCore
import Foundation

/// Targets built with a sanitizer that reserves its shadow memory when it starts.
///
/// AddressSanitizer maps about 20 TB of address space before `main`; under an address-space
/// limit (RLIMIT_AS, what `--memory-limit` sets) it cannot start, and says so with exit status 1
/// ("ReserveShadowMemoryRange failed … Perhaps you're using ulimit -v"), which would read as a
/// rejection of every input. libFuzzer and AFL++ (`-m none`) do not limit the address space of
/// such targets either: the limit is given to the sanitizer instead, as `hard_rss_limit_mb`
/// (resident memory, checked by the runtime's background thread) and `malloc_limit_mb` (one
/// allocation), so a memory blow-up is still an `oom`.
enum SanitizedExecutable {
    /// The runtimes that reserve shadow memory up front, by the symbol they all call at start,
    /// and the variable that holds their options.
    static let runtimes: [(symbol: String, name: String, optionsVariable: String)] = [
        ("__asan_init", "AddressSanitizer", "ASAN_OPTIONS"),
        ("__hwasan_init", "HWAddressSanitizer", "HWASAN_OPTIONS"),
        ("__msan_init", "MemorySanitizer", "MSAN_OPTIONS"),
        ("__tsan_init", "ThreadSanitizer", "TSAN_OPTIONS"),
    ]

    /// What a sanitizer prints when the address-space limit kept it from starting.
    static let startFailureMarkers = ["ReserveShadowMemoryRange failed", "Perhaps you're using ulimit -v"]

    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [String: Int?] = [:]

    /// The index in ``runtimes`` of the sanitizer the executable at `path` was built with, found
    /// by its start-up symbol's name in the file (its symbol tables, static or dynamic); nil for
    /// none, or for a file that cannot be read (a script that starts a sanitized program is
    /// caught by ``startFailureMarkers`` instead).
    static func runtime(ofExecutableAt path: String) -> Int? {
        if let known = lock.withLock({ cache[path] }) { return known }
        var found: Int?
        if let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) {
            found = runtimes.indices.first { data.range(of: Data(runtimes[$0].symbol.utf8)) != nil }
        }
        lock.withLock { cache[path] = .some(found) }
        return found
    }

    /// The address-space limit to set for the executable at `path`: none for a sanitized one.
    static func addressSpaceLimit(forExecutableAt path: String, limit: Int64) -> Int64 {
        runtime(ofExecutableAt: path) == nil ? limit : 0
    }

    /// `environment` with the memory limit given to the executable's sanitizer, unless the
    /// user's options for it already set one.
    static func environment(_ environment: [String: String], forExecutableAt path: String, limit: Int64) -> [String: String] {
        guard limit > 0, let index = runtime(ofExecutableAt: path) else { return environment }
        let variable = runtimes[index].optionsVariable
        var options = environment[variable] ?? ""
        let megabytes = max(1, limit >> 20)
        for option in ["hard_rss_limit_mb", "malloc_limit_mb"] where !options.contains(option + "=") {
            options += (options.isEmpty ? "" : ":") + "\(option)=\(megabytes)"
        }
        var result = environment
        result[variable] = options
        return result
    }

    /// The error for a run whose sanitizer could not start under the address-space limit.
    static func startFailure(_ executable: String, stderr: String) -> CorruptFuzzError? {
        guard startFailureMarkers.contains(where: { stderr.contains($0) }) else { return nil }
        return CorruptFuzzError(
            .unusableTarget,
            "\(executable) runs a sanitized program that could not reserve its shadow memory under the address-space limit: run with --memory-limit 0 and give the sanitizer its limit (ASAN_OPTIONS=hard_rss_limit_mb=1024). corrupt-fuzz does this by itself when the sanitized program is the target's executable"
        )
    }
}
