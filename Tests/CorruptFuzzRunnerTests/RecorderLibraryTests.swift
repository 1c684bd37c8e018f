import CorruptFuzzCore
import Foundation
import Testing

@testable import CorruptFuzzRunner

#if os(Linux)
    /// The crash-point recorder is compiled from the source embedded in CorruptFuzzRunner on
    /// first use, so a package that only depends on the test module, or a CLI built alone, has it.
    @Suite("The crash-point recorder, built on first use")
    struct RecorderLibraryTests {
        func freshCache() throws -> URL {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("recorder-cache-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return folder
        }

        @Test("compiles into an empty cache folder a library that exports the interposed functions, and reuses it")
        func compilesOnce() throws {
            let cache = try freshCache()
            defer { try? FileManager.default.removeItem(at: cache) }
            var environment = ProcessInfo.processInfo.environment
            environment["CORRUPT_FUZZ_RECORDER"] = nil
            environment["CORRUPT_FUZZ_CACHE"] = cache.path
            let path = try RecorderLibrary.path(environment: environment)
            #expect(path.hasPrefix(cache.path))
            let handle = try #require(dlopen(path, RTLD_NOW | RTLD_LOCAL), "\(String(cString: dlerror()))")
            defer { dlclose(handle) }
            for symbol in ["open", "write", "rename", "fsync", "unlink"] {
                #expect(dlsym(handle, symbol) != nil, "\(symbol) is not interposed")
            }
            let built = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
            #expect(try RecorderLibrary.path(environment: environment) == path)
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == built)
            // Nothing but the library is left in the folder (no source, no partial file).
            #expect(try FileManager.default.contentsOfDirectory(atPath: cache.path) == [URL(fileURLWithPath: path).lastPathComponent])
        }

        @Test("CORRUPT_FUZZ_RECORDER names a prebuilt library; a missing one is a clear error")
        func givenLibrary() throws {
            var environment = ProcessInfo.processInfo.environment
            environment["CORRUPT_FUZZ_RECORDER"] = "/nonexistent/libCorruptFuzzRecorder.so"
            #expect {
                try RecorderLibrary.path(environment: environment)
            } throws: { error in
                (error as? CorruptFuzzError)?.message.contains("CORRUPT_FUZZ_RECORDER names /nonexistent") == true
            }
        }

        @Test("without any C compiler, the error says what to install or set")
        func noCompiler() throws {
            let cache = try freshCache()
            defer { try? FileManager.default.removeItem(at: cache) }
            let environment = ["CORRUPT_FUZZ_CACHE": cache.path, "PATH": cache.path, "HOME": cache.path]
            #expect {
                try RecorderLibrary.path(environment: environment)
            } throws: { error in
                let message = (error as? CorruptFuzzError)?.message ?? ""
                return message.contains("needs a C compiler") && message.contains("CORRUPT_FUZZ_RECORDER")
            }
        }
    }
#endif
