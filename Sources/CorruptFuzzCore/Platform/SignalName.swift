#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Names of POSIX signals as people read them.
///
/// Signal numbers differ between platforms (SIGBUS is 7 on Linux and 10 on Darwin), so the
/// table is built from the platform's own constants.
public enum SignalName {
    private static let names: [Int32: String] = {
        var table: [Int32: String] = [:]
        let known: [(Int32, String)] = [
            (SIGHUP, "SIGHUP"), (SIGINT, "SIGINT"), (SIGQUIT, "SIGQUIT"), (SIGILL, "SIGILL"), (SIGTRAP, "SIGTRAP"),
            (SIGABRT, "SIGABRT"), (SIGBUS, "SIGBUS"), (SIGFPE, "SIGFPE"), (SIGKILL, "SIGKILL"), (SIGUSR1, "SIGUSR1"),
            (SIGSEGV, "SIGSEGV"), (SIGUSR2, "SIGUSR2"), (SIGPIPE, "SIGPIPE"), (SIGALRM, "SIGALRM"), (SIGTERM, "SIGTERM"),
            (SIGXCPU, "SIGXCPU"), (SIGXFSZ, "SIGXFSZ"), (SIGSYS, "SIGSYS"),
        ]
        for (number, name) in known where table[number] == nil { table[number] = name }
        return table
    }()

    /// Returns `SIGSEGV` for the platform's SIGSEGV and so on; unknown numbers read `signal N`.
    public static func of(_ signal: Int32) -> String {
        names[signal] ?? "signal \(signal)"
    }
}
