import CorruptFuzzCore
import Foundation
import Testing

@testable import CorruptFuzzRunner

/// A C loader without a sanitizer, with three different crashes: an assert in one function, an
/// abort() in another, a wild read in a third (static functions, so their names are not in the
/// dynamic symbol table: the crash reporter names them by module and offset).
private let loaderSource = """
    #include <assert.h>
    #include <stdio.h>
    #include <stdlib.h>
    __attribute__((noinline)) static void check_header(const unsigned char *d, long n) { assert(!(n > 8 && d[0] == 'X')); }
    __attribute__((noinline)) static void check_body(const unsigned char *d, long n) { if (n > 2 && d[1] == 'Z') abort(); }
    int table[4];
    __attribute__((noinline)) static int read_index(const unsigned char *d, long n) { return n > 3 && d[2] == 'Q' ? table[d[3] * 10000000] : 0; }
    int main(int argc, char **argv) {
        FILE *f = fopen(argv[1], "rb");
        if (!f) { fprintf(stderr, "reason: not-found\\n"); return 1; }
        unsigned char buf[256];
        long n = (long)fread(buf, 1, sizeof buf, f);
        fclose(f);
        check_header(buf, n);
        check_body(buf, n);
        printf("%d\\n", read_index(buf, n));
        return 0;
    }
    """

@Suite("The crash reporter of C targets")
struct CrashHandlerTests {
    /// The loader, compiled with the first C compiler corrupt-fuzz itself would use.
    static func buildLoader() throws -> String? {
        guard let compiler = PreloadLibrary.compilers(environment: ProcessInfo.processInfo.environment).first else { return nil }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-crash-handler-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let source = folder.appendingPathComponent("loader.c")
        try Data(loaderSource.utf8).write(to: source)
        let binary = folder.appendingPathComponent("c-loader").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: compiler)
        process.arguments = ["-O1", "-o", binary, source.path]
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? binary : nil
    }

    @Test("an assert, an abort() and a wild read in three functions are three crash signatures, each naming its site", .enabled(if: isLinux))
    func threeCrashesThreeSignatures() throws {
        let binary = try #require(try Self.buildLoader(), "no C compiler")
        defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
        let executor = try ProcessExecutor(command: try TargetCommand("\(binary) @@"), limits: .init(timeoutMilliseconds: 5000))
        func signature(_ text: String) throws -> (String, Finding?) {
            let execution = try executor.execute(TestInput(bytes: Array(text.utf8), seedName: "s"), slot: 0)
            let finding = Judge().judge(TestInput(bytes: Array(text.utf8), seedName: "s"), execution: execution, label: nil)
            return (String(decoding: execution.stderr, as: UTF8.self), finding)
        }
        let (assertReport, assertion) = try signature("XAAAAAAAAA")
        let (abortReport, aborted) = try signature("AZA")
        let (readReport, wild) = try signature("AAQ\u{7F}")
        for (finding, report) in [(assertion, assertReport), (aborted, abortReport), (wild, readReport)] {
            #expect(finding?.kind == .crash, "\(report)")
            #expect(report.contains("corrupt-fuzz: crashed with signal"), "\(report)")
        }
        #expect(assertion?.signature.contains("Assertion `!(n > # && d[#] == '…')' failed") == true, "\(assertion?.signature ?? "")")
        #expect(assertion?.signature.contains("check_header") == true)
        #expect(aborted?.signature.hasPrefix("SIGABRT at c-loader+0x") == true, "\(aborted?.signature ?? "")")
        #expect(wild?.signature.hasPrefix("SIGSEGV at c-loader+0x") == true, "\(wild?.signature ?? "")")
        #expect(Set([assertion?.signature, aborted?.signature, wild?.signature]).count == 3)
        // The same crash again: the same signature (module offsets do not move between runs).
        #expect(try signature("AZA").1?.signature == aborted?.signature)
    }

    @Test("the crash reporter joins a target's own LD_PRELOAD, and a dynamically linked ASan is told not to mind", .enabled(if: isLinux))
    func preloadSetting() {
        let env = ProcessExecutor.targetEnvironment(adding: ["LD_PRELOAD": "/x/recorder.so"])
        let preload = env["LD_PRELOAD"] ?? ""
        #expect(preload.hasSuffix("/x/recorder.so"))
        #expect(preload.contains("crash-handler") || preload.contains(PreloadLibrary.crashHandler.fileName))
        #expect(env["ASAN_OPTIONS"]?.contains("verify_asan_link_order=0") == true)
    }
}

private let isLinux: Bool = {
    #if os(Linux)
        true
    #else
        false
    #endif
}()
