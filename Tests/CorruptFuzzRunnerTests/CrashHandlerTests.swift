import CorruptFuzzCore
import Foundation
import Testing

@testable import CorruptFuzzRunner

/// A C loader without a sanitizer, with three different crashes: an assert in one function, an
/// abort() in another, a wild read in a third (static functions, so their names are not in the
/// dynamic symbol table: corrupt-fuzz names them from the program's own symbol table and debug
/// info).
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
    static func buildLoader(_ source: String = loaderSource, flags: [String] = [], options: [String] = ["-O1", "-g"]) throws -> String? {
        guard let compiler = PreloadLibrary.compilers(environment: ProcessInfo.processInfo.environment).first else { return nil }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-crash-handler-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let sourceFile = folder.appendingPathComponent("loader.c")
        try Data(source.utf8).write(to: sourceFile)
        let binary = folder.appendingPathComponent("c-loader").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: compiler)
        process.arguments = options + flags + ["-o", binary, sourceFile.path]
        // ld.gold warns about every local symbol of the ASan runtime.
        process.standardError = FileHandle.nullDevice
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
            #expect(report.contains("[crash reporter in the target] signal"), "\(report)")
        }
        #expect(assertion?.signature.contains("Assertion `!(n > # && d[#] == '…')' failed") == true, "\(assertion?.signature ?? "")")
        #expect(assertion?.signature.contains("check_header") == true)
        // Named by their source lines (the binary has debug info), through libc's abort().
        #expect(aborted?.signature == "SIGABRT at loader.c:5", "\(aborted?.signature ?? "")")
        #expect(wild?.signature == "SIGSEGV at loader.c:7", "\(wild?.signature ?? "")")
        #expect(Set([assertion?.signature, aborted?.signature, wild?.signature]).count == 3)
        // The same crash again: the same signature (module offsets do not move between runs).
        #expect(try signature("AZA").1?.signature == aborted?.signature)
    }

    /// A C loader whose checks all end in one helper that calls abort(), as `die()`, `fatal()`
    /// and a project's assert macro do.
    static let dieSource = """
        #include <stdio.h>
        #include <stdlib.h>
        __attribute__((noinline)) static void die(const char *why) { fprintf(stderr, "fatal: %s\\n", why); abort(); }
        __attribute__((noinline)) static int parse_header(const unsigned char *d, long n) { if (n < 4 || d[0] != 'H') die("bad header"); return d[1]; }
        __attribute__((noinline)) static int parse_body(const unsigned char *d, long n) { if (d[1] == 'X') die("bad body"); return (int)n; }
        int main(int argc, char **argv) {
            FILE *f = fopen(argv[1], "rb");
            if (!f) { fprintf(stderr, "reason: not-found\\n"); return 1; }
            unsigned char buf[256];
            long n = (long)fread(buf, 1, sizeof buf, f);
            fclose(f);
            return parse_header(buf, n) + parse_body(buf, n) > 0 ? 0 : 1;
        }
        """

    @Test(
        "two callers of one die() helper are two findings, each naming its caller (static functions from the symbol table, lines from debug info)",
        .enabled(if: isLinux), arguments: [["-O1"], ["-O0", "-g"]])
    func dieHelperCallersAreTwoFindings(flags: [String]) throws {
        let binary = try #require(try Self.buildLoader(Self.dieSource, options: flags), "no C compiler")
        defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
        let executor = try ProcessExecutor(command: try TargetCommand("\(binary) @@"), limits: .init(timeoutMilliseconds: 5000))
        func signature(_ text: String) throws -> String? {
            let execution = try executor.execute(TestInput(bytes: Array(text.utf8), seedName: "s"), slot: 0)
            return Judge().judge(TestInput(bytes: Array(text.utf8), seedName: "s"), execution: execution, label: nil)?.signature
        }
        let header = try #require(try signature("AAAA"))
        let body = try #require(try signature("HXAA"))
        #expect(header != body)
        #expect(!header.contains("die") && !body.contains("die"), "\(header) / \(body)")
        if flags.contains("-g") {
            #expect(header == "SIGABRT at loader.c:4", "\(header)")
            #expect(body == "SIGABRT at loader.c:5", "\(body)")
        } else {
            #expect(header.hasPrefix("SIGABRT at parse_header [c-loader+0x") && header.hasSuffix("] ← main"), "\(header)")
            #expect(body.hasPrefix("SIGABRT at parse_body [c-loader+0x") && body.hasSuffix("] ← main"), "\(body)")
        }
        #expect(try signature("AAAA") == header)
    }

    /// A C worker (corrupt_fuzz_worker.h) with two failed asserts in two functions: the same
    /// frames of the C library on top of each.
    static let assertingWorkerSource = """
        #include <assert.h>
        #include <stdio.h>
        #include <string.h>
        #include <unistd.h>
        #include "corrupt_fuzz_worker.h"
        __attribute__((noinline)) static void check_header(const uint8_t *d, size_t n) { assert(!(n > 0 && d[0] == 'H')); }
        __attribute__((noinline)) static void check_body(const uint8_t *d, size_t n) { assert(!(n > 0 && d[0] == 'B')); }
        static int load(const uint8_t *data, size_t size, cf_worker_reply *reply) {
            check_header(data, size);
            check_body(data, size);
            char pid[32];
            snprintf(pid, sizeof pid, "%d", (int)getpid());
            cf_worker_accept(reply, pid);
            return 0;
        }
        int main(int argc, char **argv) { return cf_worker_main(argc, argv, load); }
        """

    @Test(
        "a C worker's two failed asserts, hit again and again in fork server children that live through them, stay two crashes, each with its own assertion",
        .enabled(if: isLinux))
    func twoAssertsInAWorker() throws {
        let runtime = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/CCorruptFuzzWorker")
        let flags = ["-I", runtime.appendingPathComponent("include").path, runtime.appendingPathComponent("corrupt_fuzz_worker.c").path]
        let binary = try #require(try Self.buildLoader(Self.assertingWorkerSource, flags: flags), "no C compiler")
        defer { try? FileManager.default.removeItem(atPath: (binary as NSString).deletingLastPathComponent) }
        let executor = try WorkerExecutor(path: binary, arguments: [], environment: [:], limits: .init(timeoutMilliseconds: 5000), slots: 1)
        var messages: [Character: Set<String>] = [:]
        var servedBy: [Outcome] = []
        for round in 0..<6 {
            let accepted = try executor.execute(TestInput(bytes: Array("ok \(round)".utf8), seedName: "s"), slot: 0).outcome
            #expect(accepted.word == "accepted", "\(accepted)")
            if round >= 3 { servedBy.append(accepted) }
            for first in ["H", "B"] {
                let execution = try executor.execute(TestInput(bytes: Array("\(first) \(round)".utf8), seedName: "s"), slot: 0)
                guard case .crashed(SIGABRT, _, let message) = execution.outcome else {
                    Issue.record("\(first): \(execution.outcome)")
                    continue
                }
                messages[Character(first), default: []].insert(message ?? "no message")
            }
        }
        #expect(messages["H"]?.count == 1 && messages["H"]?.first?.contains("d[0] == 'H'") == true, "\(messages)")
        #expect(messages["B"]?.count == 1 && messages["B"]?.first?.contains("d[0] == 'B'") == true, "\(messages)")
        // Once both sites are known, one child serves on through both asserts.
        #expect(Set(servedBy).count == 1, "\(servedBy): the children did not live through the asserts")
        // cf_worker_main's loader takes bytes: the inputs went whole, without a file.
        #expect(executor.inputsSentWhole >= 18, "\(executor.inputsSentWhole)")
    }

    /// An ASan loader: a heap overflow, and 4 GB allocated 100 MB at a time.
    static let sanitizedSource = """
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        char *volatile sink;
        int main(int argc, char **argv) {
            FILE *f = fopen(argv[1], "rb");
            if (!f) { fprintf(stderr, "reason: not-found\\n"); return 1; }
            unsigned char buf[64];
            size_t n = fread(buf, 1, sizeof buf, f);
            fclose(f);
            if (n > 3 && buf[0] == 'B') { volatile char *p = malloc(8); p[8 + (buf[1] & 3)] = 1; free((void *)p); }
            if (n > 0 && buf[0] == 'M') {
                for (int i = 0; i < 40; i++) { char *p = malloc(100 << 20); if (!p) return 1; memset(p, 1, 100 << 20); sink = p; }
            }
            return 0;
        }
        """

    @Test(
        "an AddressSanitizer target runs under the default memory limit: its sanitizer gets the limit, not RLIMIT_AS; a heap overflow's signature is the crash's stack alone",
        .enabled(if: isLinux))
    func sanitizedTarget() throws {
        guard let binary = try Self.buildLoader(Self.sanitizedSource, flags: ["-fsanitize=address"]) else {
            Issue.record("the C compiler cannot build with -fsanitize=address here")
            return
        }
        let folder = (binary as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(SanitizedExecutable.runtime(ofExecutableAt: binary).map { SanitizedExecutable.runtimes[$0].name } == "AddressSanitizer")
        let executor = try ProcessExecutor(command: try TargetCommand("\(binary) @@"), limits: .init(timeoutMilliseconds: 20_000, memoryLimit: 512 << 20))
        func run(_ text: String) throws -> Execution {
            try executor.execute(TestInput(bytes: Array(text.utf8), seedName: "s"), slot: 0)
        }
        // Under RLIMIT_AS it would not start at all (exit 1, a rejection of everything).
        #expect(try run("hello").outcome == .accepted(digest: ""))
        let overflow = try run("BAxx")
        guard case .crashed(_, let frames, let message) = overflow.outcome else {
            Issue.record("not a crash: \(overflow.outcome)")
            return
        }
        #expect(message?.contains("heap-buffer-overflow") == true)
        // The allocation's stack ("allocated by thread T0 here: #0 malloc …") is not the crash's.
        #expect(frames.first == "main" && !frames.contains("malloc"), "\(frames)")
        let blowUp = try run("MMMM")
        guard case .outOfMemory(_, let why) = blowUp.outcome else {
            Issue.record("not an oom: \(blowUp.outcome)")
            return
        }
        #expect(why?.contains("rss limit") == true || why?.contains("malloc") == true, "\(why ?? "")")
        // A script that starts the sanitized program cannot be recognized: a clear error, not
        // rejections.
        let script = folder + "/wrapper.sh"
        try Data("#!/bin/sh\nexec \(binary) \"$@\"\n".utf8).write(to: URL(fileURLWithPath: script))
        chmod(script, 0o755)
        let wrapped = try ProcessExecutor(command: try TargetCommand("\(script) @@"), limits: .init(timeoutMilliseconds: 20_000))
        #expect {
            try wrapped.execute(TestInput(bytes: Array("hello".utf8), seedName: "s"), slot: 0)
        } throws: { error in
            (error as? CorruptFuzzError)?.message.contains("--memory-limit 0") == true
        }
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

let isLinux: Bool = {
    #if os(Linux)
        true
    #else
        false
    #endif
}()
