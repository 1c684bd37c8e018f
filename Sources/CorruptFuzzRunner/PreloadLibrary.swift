import CorruptFuzzCore
import Foundation

/// A small C library that corrupt-fuzz loads into the programs it runs (LD_PRELOAD, Linux): the
/// file-operation recorder of crash points (``recorder``), and the crash reporter that names the
/// crash site of targets that print no report of their own (``crashHandler``).
///
/// SwiftPM builds a dynamic library only when something asks for its product, and nothing a
/// user builds (`swift run corrupt-fuzz`, `swift build --product corrupt-fuzz`, `swift test` in
/// a package that depends on CorruptFuzzTesting) asks for it. So each library's C source is
/// embedded in this module, and the library is compiled from it on first use with the C compiler
/// that every Swift toolchain ships (clang), into a cache folder keyed by the source's hash:
///
/// 1. its variable (`CORRUPT_FUZZ_RECORDER`, `CORRUPT_FUZZ_CRASH_HANDLER`), when set, names a
///    prebuilt library to use as it is;
/// 2. else its file (`libCorruptFuzzRecorder.so`, `libCorruptFuzzCrashHandler.so`) beside the
///    running executable, for a packaged install;
/// 3. else `<name>-<hash>.so` in `$CORRUPT_FUZZ_CACHE`, `$XDG_CACHE_HOME/corrupt-fuzz` or
///    `~/.cache/corrupt-fuzz` (the temporary folder when none is writable), compiled there when
///    missing with `$CC`, the `clang` beside `swift`, `clang`, `cc` or `gcc`.
public struct PreloadLibrary: Sendable {
    /// The cache name's stem: `recorder`, `crash-handler`.
    public let name: String
    /// The library file name for a packaged install (beside the executable).
    public let fileName: String
    /// The environment variable that names a prebuilt library.
    public let variable: String
    /// What it is, for messages: "the file-operation recorder of crash points".
    public let purpose: String
    /// The embedded C source.
    public let source: [UInt8]

    /// The file-operation recorder of crash points.
    public static let recorder = PreloadLibrary(
        name: "recorder", fileName: "libCorruptFuzzRecorder.so", variable: "CORRUPT_FUZZ_RECORDER",
        purpose: "the file-operation recorder of crash points", source: PackageResources.recorder_c)

    /// The crash reporter of targets without one (C, C++ and Rust loaders built without a
    /// sanitizer): the faulting frames with symbol, module and offset on standard error.
    public static let crashHandler = PreloadLibrary(
        name: "crash-handler", fileName: "libCorruptFuzzCrashHandler.so", variable: "CORRUPT_FUZZ_CRASH_HANDLER",
        purpose: "the crash reporter of C targets", source: PackageResources.crash_handler_c)

    private static let lock = NSLock()
    /// Libraries this process has found or built, by the settings that chose them.
    nonisolated(unsafe) private static var built: [String: String] = [:]

    /// The library's path, compiled now if it has not been yet (about a second, once per
    /// source version and machine).
    public func path(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CorruptFuzzError) -> String {
        #if os(Linux)
            if let given = environment[variable], !given.isEmpty {
                guard FileManager.default.isReadableFile(atPath: given) else {
                    throw CorruptFuzzError(.unusableTarget, "\(variable) names \(given), which is not a readable file")
                }
                return given
            }
            let beside = URL(fileURLWithPath: ExecutablePath.current).deletingLastPathComponent().appendingPathComponent(fileName).path
            if FileManager.default.isReadableFile(atPath: beside) { return beside }
            let key = ([name] + ["CORRUPT_FUZZ_CACHE", "XDG_CACHE_HOME", "HOME", "CC", "PATH"].map { environment[$0] ?? "" }).joined(separator: "\u{0}")
            Self.lock.lock()
            defer { Self.lock.unlock() }
            if let path = Self.built[key], FileManager.default.isReadableFile(atPath: path) { return path }
            let path = try compile(environment: environment)
            Self.built[key] = path
            return path
        #else
            throw CorruptFuzzError(.unusableTarget, "\(purpose) is loaded with LD_PRELOAD, which needs Linux (DYLD_INSERT_LIBRARIES is not supported)")
        #endif
    }

    /// Cache folders to try, in order.
    static func cacheFolders(environment: [String: String]) -> [URL] {
        var folders: [URL] = []
        if let given = environment["CORRUPT_FUZZ_CACHE"], !given.isEmpty { folders.append(URL(fileURLWithPath: given)) }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            folders.append(URL(fileURLWithPath: xdg).appendingPathComponent("corrupt-fuzz"))
        }
        if let home = environment["HOME"], !home.isEmpty {
            folders.append(URL(fileURLWithPath: home).appendingPathComponent(".cache/corrupt-fuzz"))
        }
        folders.append(FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-\(getuid())"))
        return folders
    }

    /// C compilers to try, in order.
    static func compilers(environment: [String: String]) -> [String] {
        var names: [String] = []
        if let cc = environment["CC"], !cc.isEmpty { names.append(cc) }
        // The toolchain's own clang, beside the swift driver (present in every Swift toolchain).
        if let swift = findInPath("swift", environment: environment) {
            let resolved = URL(fileURLWithPath: swift).resolvingSymlinksInPath()
            names.append(resolved.deletingLastPathComponent().appendingPathComponent("clang").path)
        }
        names += ["clang", "cc", "gcc"]
        return names.compactMap { $0.contains("/") ? (FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil) : findInPath($0, environment: environment) }
    }

    /// The first executable `name` in `environment`'s PATH.
    public static func findInPath(_ name: String, environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    private func compile(environment: [String: String]) throws(CorruptFuzzError) -> String {
        let name = "\(self.name)-\(SHA1.hex(source).prefix(16))"
        var problems: [String] = []
        for folder in Self.cacheFolders(environment: environment) {
            let library = folder.appendingPathComponent("\(name).so")
            if FileManager.default.isReadableFile(atPath: library.path) { return library.path }
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let sourceFile = folder.appendingPathComponent("\(name)-\(getpid()).c")
                try Data(source).write(to: sourceFile)
                defer { try? FileManager.default.removeItem(at: sourceFile) }
                let compilers = Self.compilers(environment: environment)
                guard !compilers.isEmpty else {
                    throw CorruptFuzzError(
                        .unusableTarget,
                        "\(purpose) is built once with a C compiler, and none was found: it needs a C compiler (tried $CC, clang beside swift, clang, cc, gcc); install clang, or set \(variable) to a prebuilt \(fileName)"
                    )
                }
                var failures: [String] = []
                for compiler in compilers {
                    // Each process writes its own file, then renames it into place: two test
                    // processes building at once both end with a complete library.
                    let partial = folder.appendingPathComponent("\(name)-\(getpid()).so.partial")
                    let (status, output) = Self.run(
                        compiler, ["-shared", "-fPIC", "-O2", "-w", "-o", partial.path, sourceFile.path, "-ldl", "-lpthread"])
                    if status == 0 {
                        if rename(partial.path, library.path) != 0 {
                            try? FileManager.default.removeItem(at: partial)
                            if !FileManager.default.isReadableFile(atPath: library.path) {
                                throw CorruptFuzzError(.system, "cannot move \(purpose) into \(library.path): \(String(cString: strerror(errno)))")
                            }
                        }
                        return library.path
                    }
                    try? FileManager.default.removeItem(at: partial)
                    failures.append("\(compiler) exited \(status): \(output.split(separator: "\n").prefix(3).joined(separator: " / "))")
                }
                throw CorruptFuzzError(
                    .unusableTarget,
                    "\(purpose) did not compile (\(failures.joined(separator: "; "))); set \(variable) to a prebuilt \(fileName)"
                )
            } catch let error as CorruptFuzzError {
                if error.code == .unusableTarget { throw error }
                problems.append(error.message)
            } catch {
                problems.append("\(folder.path): \(error.localizedDescription)")
            }
        }
        throw CorruptFuzzError(.system, "no writable cache folder for \(purpose): \(problems.joined(separator: "; "))")
    }

    /// Runs a compiler, returning its exit status and what it printed.
    private static func run(_ executable: String, _ arguments: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}

/// The crash-point recorder, as ``PreloadLibrary/recorder`` (the names crash points use).
public enum RecorderLibrary {
    /// The library file name for a packaged install (beside the executable).
    public static var fileName: String { PreloadLibrary.recorder.fileName }

    /// The recorder's path, compiled on first use.
    public static func path(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CorruptFuzzError) -> String {
        try PreloadLibrary.recorder.path(environment: environment)
    }

    /// The embedded C source.
    public static var source: [UInt8] { PreloadLibrary.recorder.source }

    /// The first executable `name` in `environment`'s PATH.
    public static func findInPath(_ name: String, environment: [String: String]) -> String? {
        PreloadLibrary.findInPath(name, environment: environment)
    }

    static func cacheFolders(environment: [String: String]) -> [URL] { PreloadLibrary.cacheFolders(environment: environment) }

    static func compilers(environment: [String: String]) -> [String] { PreloadLibrary.compilers(environment: environment) }
}
