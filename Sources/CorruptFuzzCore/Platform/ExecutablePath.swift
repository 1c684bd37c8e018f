import Foundation

/// Where this process's executable is, symbolic links resolved: to find the loaders built
/// beside corrupt-fuzz, and to print replay commands that call the same binary.
public enum ExecutablePath {
    public static var current: String {
        #if os(Linux)
            if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return undeleted(path) }
        #endif
        if let url = Bundle.main.executableURL { return url.resolvingSymlinksInPath().path }
        return CommandLine.arguments.first ?? "corrupt-fuzz"
    }

    /// `path` without the ` (deleted)` Linux adds to `/proc/self/exe` when the file was replaced
    /// since the process started: a rebuild while it runs (the demo builds the package's
    /// loaders, corrupt-fuzz among them) puts the new build at the same path, which is the one
    /// a replay command must name.
    public static func undeleted(_ path: String) -> String {
        path.hasSuffix(" (deleted)") ? String(path.dropLast(" (deleted)".count)) : path
    }
}
