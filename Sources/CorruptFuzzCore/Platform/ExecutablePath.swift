import Foundation

/// Where this process's executable is, symbolic links resolved: to find the loaders built
/// beside corrupt-fuzz, and to print replay commands that call the same binary.
public enum ExecutablePath {
    public static var current: String {
        #if os(Linux)
            if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        #endif
        if let url = Bundle.main.executableURL { return url.resolvingSymlinksInPath().path }
        return CommandLine.arguments.first ?? "corrupt-fuzz"
    }
}
