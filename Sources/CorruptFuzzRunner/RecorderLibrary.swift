import CorruptFuzzCore
import Foundation

/// The file-operation recorder of crash-point checks (`libCorruptFuzzRecorder.so`, loaded into
/// the program under test with LD_PRELOAD).
///
/// SwiftPM builds a dynamic library only when something asks for its product, and nothing a
/// user builds (`swift run corrupt-fuzz`, `swift build --product corrupt-fuzz`, `swift test` in
/// a package that depends on CorruptFuzzTesting) asks for it. So the recorder's C source is
/// embedded in this module, and the library is compiled from it on first use with the C compiler
/// that every Swift toolchain ships (clang), into a cache folder keyed by the source's hash:
///
/// 1. `CORRUPT_FUZZ_RECORDER`, when set, names a prebuilt library to use as it is;
/// 2. else `libCorruptFuzzRecorder.so` beside the running executable, for a packaged install;
/// 3. else `recorder-<hash>.so` in `$CORRUPT_FUZZ_CACHE`, `$XDG_CACHE_HOME/corrupt-fuzz` or
///    `~/.cache/corrupt-fuzz` (the temporary folder when none is writable), compiled there when
///    missing with `$CC`, the `clang` beside `swift`, `clang`, `cc` or `gcc`.
public enum RecorderLibrary {
    /// The library file name for a packaged install (beside the executable).
    public static let fileName = "libCorruptFuzzRecorder.so"

    private static let lock = NSLock()
    /// Libraries this process has found or built, by the settings that chose them.
    nonisolated(unsafe) private static var built: [String: String] = [:]

    /// The recorder's path, compiled now if it has not been yet (about a second, once per
    /// source version and machine).
    public static func path(environment: [String: String] = ProcessInfo.processInfo.environment) throws(CorruptFuzzError) -> String {
        #if os(Linux)
            if let given = environment["CORRUPT_FUZZ_RECORDER"], !given.isEmpty {
                guard FileManager.default.isReadableFile(atPath: given) else {
                    throw CorruptFuzzError(.unusableTarget, "CORRUPT_FUZZ_RECORDER names \(given), which is not a readable file")
                }
                return given
            }
            let beside = URL(fileURLWithPath: ExecutablePath.current).deletingLastPathComponent().appendingPathComponent(fileName).path
            if FileManager.default.isReadableFile(atPath: beside) { return beside }
            let key = ["CORRUPT_FUZZ_CACHE", "XDG_CACHE_HOME", "HOME", "CC", "PATH"].map { environment[$0] ?? "" }.joined(separator: "\u{0}")
            lock.lock()
            defer { lock.unlock() }
            if let path = built[key], FileManager.default.isReadableFile(atPath: path) { return path }
            let path = try compile(environment: environment)
            built[key] = path
            return path
        #else
            throw CorruptFuzzError(
                .unusableTarget, "crash points record file operations with LD_PRELOAD, which needs Linux (DYLD_INSERT_LIBRARIES is not supported)")
        #endif
    }

    /// The embedded C source.
    public static var source: [UInt8] { PackageResources.recorder_c }

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

    private static func compile(environment: [String: String]) throws(CorruptFuzzError) -> String {
        let source = Self.source
        let name = "recorder-\(SHA1.hex(source).prefix(16))"
        var problems: [String] = []
        for folder in cacheFolders(environment: environment) {
            let library = folder.appendingPathComponent("\(name).so")
            if FileManager.default.isReadableFile(atPath: library.path) { return library.path }
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let sourceFile = folder.appendingPathComponent("\(name)-\(getpid()).c")
                try Data(source).write(to: sourceFile)
                defer { try? FileManager.default.removeItem(at: sourceFile) }
                let compilers = compilers(environment: environment)
                guard !compilers.isEmpty else {
                    throw CorruptFuzzError(
                        .unusableTarget,
                        "crash points need a C compiler to build the file-operation recorder once, and none was found (tried $CC, clang beside swift, clang, cc, gcc); install clang, or set CORRUPT_FUZZ_RECORDER to a prebuilt \(fileName)"
                    )
                }
                var failures: [String] = []
                for compiler in compilers {
                    // Each process writes its own file, then renames it into place: two test
                    // processes building at once both end with a complete library.
                    let partial = folder.appendingPathComponent("\(name)-\(getpid()).so.partial")
                    let (status, output) = run(
                        compiler, ["-shared", "-fPIC", "-O2", "-w", "-o", partial.path, sourceFile.path, "-ldl", "-lpthread"])
                    if status == 0 {
                        if rename(partial.path, library.path) != 0 {
                            try? FileManager.default.removeItem(at: partial)
                            if !FileManager.default.isReadableFile(atPath: library.path) {
                                throw CorruptFuzzError(.system, "cannot move the recorder into \(library.path): \(String(cString: strerror(errno)))")
                            }
                        }
                        return library.path
                    }
                    try? FileManager.default.removeItem(at: partial)
                    failures.append("\(compiler) exited \(status): \(output.split(separator: "\n").prefix(3).joined(separator: " / "))")
                }
                throw CorruptFuzzError(
                    .unusableTarget,
                    "the file-operation recorder of crash points did not compile (\(failures.joined(separator: "; "))); set CORRUPT_FUZZ_RECORDER to a prebuilt \(fileName)"
                )
            } catch let error as CorruptFuzzError {
                if error.code == .unusableTarget { throw error }
                problems.append(error.message)
            } catch {
                problems.append("\(folder.path): \(error.localizedDescription)")
            }
        }
        throw CorruptFuzzError(.system, "no writable cache folder for the crash-point recorder: \(problems.joined(separator: "; "))")
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
