@testable import CorruptFuzzCore
import Testing

@Suite("Crash signatures")
struct CrashSignatureTests {
    @Test("reads Swift backtracer frames, skipping runtime frames")
    func swiftBacktracer() {
        let report = """
            Swift/ContiguousArrayBuffer.swift:692: Fatal error: Index out of range

            *** Program crashed: Illegal instruction at 0x00007fddc816df7f ***

            Thread 0 "fd" crashed:

              0      0x00007fddc816df7f closure #1 in closure #1 in _assertionFailure(_:_:file:line:flags:) + 623 in libswiftCore.so
              1 [ra] 0x00007fddc82f961f _assertionFailure(_:_:file:line:flags:) + 302 in libswiftCore.so
              2 [ra] 0x00007fddc888ef65 specialized Array.subscript.getter + 84 in libswiftSwiftOnoneSupport.so
              3 [ra] 0x000055707349f014 parseHabit(_:at:) + 179 in fd at /tmp/exp/f.swift:3:8
              4 [ra] [inlined] 0x000055707349f014 loadDocument() in fd at /tmp/exp/f.swift:9:8
              5 [ra] 0x000055707349f014 main + 179 in fd at /tmp/exp/f.swift:12:8

            Thread 1 "other":
              0      0x00007fddc816df7f somethingElse + 1 in fd
            """
        #expect(CrashSignature.frames(in: report) == ["parseHabit(_:at:)", "loadDocument()", "main"])
        #expect(CrashSignature.message(in: report) == "Index out of range")
        #expect(
            CrashSignature.make(signal: 4, frames: ["parseHabit(_:at:)"], message: "Index out of range")
                == "SIGILL: Index out of range at parseHabit(_:at:)")
    }

    @Test("a top frame with a source line names the crash by the line after its last \" at \"")
    func sourceLineSite() {
        #expect(CrashSignature.make(signal: 4, frames: ["loadHabits(_:) at main.swift:9"], message: nil) == "SIGILL at main.swift:9")
        #expect(
            CrashSignature.make(signal: 4, frames: ["look at this(_:) at /src/A at B.swift:12", "main"], message: "Fatal")
                == "SIGILL: Fatal at B.swift:12")
        // No line after the last " at ": the frames name it.
        #expect(CrashSignature.make(signal: 6, frames: ["parse at once", "main"], message: nil) == "SIGABRT at parse at once ← main")
        #expect(CrashSignature.lastAt(in: "x at y at z").map { "x at y at z"[$0...] } == "z")
        #expect(CrashSignature.lastAt(in: " at") == nil)
        #expect(CrashSignature.lastAt(in: "é at ü").map { "é at ü"[$0...] } == "ü")
    }

    @Test("a stack overflow is named by the function that recursed, not by where the stack ran out")
    func recursion() {
        var report = """
            *** Program crashed: Bad pointer dereference at 0x00007ffdabab6fb8 ***

            Thread 0 "notes-loader-na" crashed:

                0      0x00007fa669ca1ab7 specialized static String._fromUTF8Repairing(_:) + 23 in libswiftCore.so
                1 [ra] 0x000056501e2c2dfd static NaiveNotesLoader.collect(_:into:) + 220 in notes-loader-naive at /src/NaiveNotesLoader.swift:31:20

            """
        for i in 2..<40 {
            report +=
                "   \(i) [ra] 0x000056501e2c2dd7 static NaiveNotesLoader.collect(_:into:) + 182 in notes-loader-naive at /src/NaiveNotesLoader.swift:34:17\n"
        }
        #expect(CrashSignature.recursion(in: report) == "static NaiveNotesLoader.collect(_:into:)")
        #expect(CrashSignature.recursion(in: Self.optimizedTrap(offset: 59, line: nil, check: nil)) == nil)
    }

    /// A stack overflow in a cycle of four frames (Foundation's keyed unarchiver decoding an
    /// array that holds an array), the stack running out `skip` frames into the cycle.
    static func decoderOverflow(skip: Int) -> String {
        let cycle = [
            "NSKeyedUnarchiver._decodeObject(_:) + 3080 in libFoundation.so",
            "NSKeyedUnarchiver._decodeArrayOfObjectsForKey(_:) + 326 in libFoundation.so",
            "NSArray.__allocating_init(coder:) + 127 in libFoundation.so",
            "protocol witness for NSCoding.init(coder:) in conformance NSArray + 15 in libFoundation.so",
        ]
        var report = """
            *** Program crashed: Bad pointer dereference at 0x00007ffeb6c95ff8 ***

            Thread 0 "friend-list-nai" crashed:

                0                         0x00007f59ee2c3df8 swift_getTupleTypeMetadata + 137 in libswiftCore.so

            """
        // The backtracer's top 48 frames: the cycle from the 12th on.
        for i in 0..<36 { report += "   \(i + 12) [ra] 0x00007f3d0e0c8c49 \(cycle[(i + skip) % cycle.count])\n" }
        return report
    }

    @Test("a stack overflow through a cycle of functions is named by the cycle, the same wherever in it the stack ran out")
    func recursionThroughACycle() {
        let names = (0..<4).map { CrashSignature.recursion(in: Self.decoderOverflow(skip: $0)) }
        #expect(
            names[0]
                == "NSArray.__allocating_init(coder:) ← protocol witness for NSCoding.init(coder:) in conformance NSArray ← NSKeyedUnarchiver._decodeObject(_:) ← NSKeyedUnarchiver._decodeArrayOfObjectsForKey(_:)",
            "\(String(describing: names[0]))")
        #expect(Set(names).count == 1, "\(names)")
        // Five repetitions of the cycle are not an overflow's.
        let short = Self.decoderOverflow(skip: 0).split(separator: "\n").prefix(4 + 20).joined(separator: "\n")
        #expect(CrashSignature.recursion(in: short) == nil)
    }

    @Test(
        "a stack overflow through a long cycle in which a function comes back (an object decoding a list of objects that decode lists) is named the same wherever the stack ran out"
    )
    func recursionThroughALongCycle() {
        // The naive friend-list loader's overflow (16 frames a cycle; NSKeyedUnarchiver's
        // _decodeObject three times in it), as Swift's backtracer prints its top 124 frames.
        let cycle = [
            "NSKeyedUnarchiver._decodeObject(_:) + 3080 in libFoundation.so",
            "NSKeyedUnarchiver._decodeArrayOfObjectsForKey(_:) + 326 in libFoundation.so",
            "NSArray.__allocating_init(coder:) + 127 in libFoundation.so",
            "protocol witness for NSCoding.init(coder:) in conformance NSArray + 15 in libFoundation.so",
            "NSKeyedUnarchiver._decodeObject(_:) + 3080 in libFoundation.so",
            "NSKeyedUnarchiver._decodeObject(forKey:) + 380 in libFoundation.so",
            "NSKeyedUnarchiver.decodeObject(forKey:) + 21 in libFoundation.so",
            "NaiveFriendList.init(coder:) + 83 in friend-list-naive at /src/NaiveFriendListLoader.swift:60:25",
            "NaiveFriendList.__allocating_init(coder:) in friend-list-naive at //<compiler-generated>",
            "protocol witness for NSCoding.init(coder:) in conformance NaiveFriendList + 44 in friend-list-naive",
            "NSKeyedUnarchiver._decodeObject(_:) + 3080 in libFoundation.so",
            "NSKeyedUnarchiver._decodeObject(forKey:) + 380 in libFoundation.so",
            "NSKeyedUnarchiver.decodeObject(forKey:) + 21 in libFoundation.so",
            "NaiveFriend.init(coder:) + 147 in friend-list-naive at /src/NaiveFriendListLoader.swift:44:26",
            "NaiveFriend.__allocating_init(coder:) in friend-list-naive at //<compiler-generated>",
            "protocol witness for NSCoding.init(coder:) in conformance NaiveFriend + 44 in friend-list-naive",
        ]
        // Where the stack ran out: in the runtime's metadata cache (a few frames) or its hashing
        // (more), at any frame of the cycle.
        func overflow(runtimeFrames: Int, skip: Int) -> String {
            var report = "*** Program crashed: Bad pointer dereference at 0x00007ffdddeaeff8 ***\n\nThread 0 \"friend-list-nai\" crashed:\n\n"
            for i in 0..<runtimeFrames { report += "   \(i) [ra] 0x00007fd5282c3df4 swift_runtime_frame_\(i) + 4 in libswiftCore.so\n" }
            for i in runtimeFrames..<124 { report += "   \(i) [ra] 0x00007f3d0e0c8c49 \(cycle[(i + skip) % cycle.count])\n" }
            return report
        }
        let names = [(5, 0), (12, 3), (14, 9), (7, 15)].map { CrashSignature.recursion(in: overflow(runtimeFrames: $0.0, skip: $0.1)) }
        #expect(Set(names).count == 1, "\(names)")
        let name = names[0] ?? ""
        #expect(name.contains("NaiveFriend.init(coder:)") && name.contains("NaiveFriendList.init(coder:)"), "\(name)")
        #expect(name.components(separatedBy: " ← ").count == 16, "\(name)")
    }

    @Test("a shallow loader's crash has the same frames in a persistent worker as in the replay: the worker loop's frames are not the loader's")
    func workerLoopFramesLeftOut() {
        func report(_ callers: [String]) -> String {
            let frames = ["closure #1 in  + 77 in habit-loader-naive at /src/main.swift:12:9", "@objc closure #1 in  + 22 in habit-loader-naive"] + callers
            return "*** Program crashed: System trap at 0x000055e2c3e1b4a4 ***\n\nThread 0 crashed:\n\n"
                + frames.enumerated().map { "    \($0.offset) [ra] 0x000055e2c3e1b4a4 \($0.element)" }.joined(separator: "\n")
        }
        let worker = report([
            "cf_worker_run_input + 40 in habit-loader-naive", "cf_worker_guarded + 88 in habit-loader-naive", "cf_worker_serve + 412 in habit-loader-naive",
        ])
        let replay = report(["cf_worker_run_input + 40 in habit-loader-naive", "cf_worker_serve + 601 in habit-loader-naive"])
        let swiftWorker = report([
            "static CorruptFuzzWorker.reply<A, B>(_:load:validate:digest:) + 71 in habit-loader-naive", "GuardedRun.start() + 30 in habit-loader-naive",
        ])
        #expect(CrashSignature.frames(in: worker) == ["closure #1 in", "@objc closure #1 in"])
        #expect(CrashSignature.frames(in: replay) == CrashSignature.frames(in: worker))
        #expect(CrashSignature.frames(in: swiftWorker) == CrashSignature.frames(in: worker))
    }

    @Test("reads AddressSanitizer frames")
    func sanitizer() {
        let report = """
            ==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011
            READ of size 1 at 0x602000000011 thread T0
                #0 0x4f1b2c in parse_header /src/loader.c:12:3
                #1 0x4f1c00 in load /src/loader.c:40:9
                #2 0x4f1d00 in main /src/loader.c:60:5
            """
        #expect(CrashSignature.frames(in: report) == ["parse_header", "load", "main"])
        #expect(CrashSignature.message(in: report) == "heap-buffer-overflow")
    }

    @Test("numbers in messages do not split signatures")
    func normalize() {
        #expect(Normalize.message("crc32: stored 0x1234abcd != computed 0x00ff00ff") == "crc#: stored # != computed #")
        #expect(Normalize.message("habits[12].name: length 300") == "habits[#].name: length #")
    }

    @Test("hex numbers without 0x and UUIDs do not split signatures either")
    func normalizeHex() {
        let messages = [
            "checksum mismatch: stored 1f0eea31, computed e5d3d09a",
            "checksum mismatch: stored 00000000, computed 9abc1234",
            "checksum mismatch: stored DEADBEE5, computed 0badf00d",
            // A checksum without a digit (a campaign met `efaadfce`: one 32-bit value in 2,500).
            "checksum mismatch: stored efaadfce, computed ABCDEFab",
        ]
        #expect(Set(messages.map(Normalize.message)) == ["checksum mismatch: stored #, computed #"])
        #expect(
            Normalize.message("record 123e4567-e89b-12d3-a456-426614174000 appears twice")
                == Normalize.message("record 9c5b94b1-35ad-49bb-b118-8e8fc24abf80 appears twice"))
        // Words stay words: a hex-looking word without a digit, and names with digits in them.
        #expect(Normalize.message("dead cafe: face added, a deface") == "dead cafe: face added, a deface")
        // What a mixed word keeps normalizes to itself (found by the self-fuzz test).
        #expect(Normalize.message("deadbeef0X") == "##X")
        #expect(Normalize.message("##X") == "##X")
        #expect(Normalize.message("sha256 of utf8 text in v2") == "sha# of utf# text in v#")
    }

    /// What an optimized Swift loader prints when it traps: no runtime message, the frame's
    /// offset only (built with `swiftc -O`), or the source line and the inlined check (`-O -g`).
    static func optimizedTrap(offset: Int, line: Int?, check: String?) -> String {
        var text = """
            *** Program crashed: Illegal instruction at 0x00005573ab50a1eb ***

            Thread 0 "loader" crashed:


            """
        if let check {
            text += "  0 [inlined] [system] 0x00005640ef03d1ed Swift runtime failure: \(check) in loader at //<compiler-generated>\n"
        }
        let location = line.map { " at /src/Loader/main.swift:\($0):25" } ?? ""
        text += "  1                    0x00005573ab50a1eb loadHabits(_:) + \(offset) in loader\(location)\n"
        text += "  2 [ra]               0x00005573ab50a2ff main + 120 in loader\n"
        return text
    }

    @Test("without a runtime message, the trap site is part of the signature: two traps in one function stay two bugs")
    func trapSites() {
        func signature(_ stderr: String) -> String {
            let message = CrashSignature.message(in: stderr)
            return CrashSignature.make(signal: 4, frames: CrashSignature.frames(in: stderr, site: message == nil), message: message)
        }
        let first = signature(Self.optimizedTrap(offset: 59, line: nil, check: nil))
        let second = signature(Self.optimizedTrap(offset: 61, line: nil, check: nil))
        #expect(first == "SIGILL at loadHabits(_:) + 59 ← main")
        #expect(second == "SIGILL at loadHabits(_:) + 61 ← main")
        // With debug info, the source line names the site, and an inlined check its kind.
        #expect(signature(Self.optimizedTrap(offset: 59, line: 9, check: nil)) == "SIGILL at main.swift:9")
        #expect(
            signature(Self.optimizedTrap(offset: 61, line: 12, check: "arithmetic overflow"))
                == "SIGILL: arithmetic overflow at loadHabits(_:) ← main")
        // An inlined top frame without a line: the instruction's function and offset.
        let inlined = """
            Thread 0 "habit-loader-na" crashed:

              0 [inlined] [system] 0x0000563e01bdc2f3 NaiveHabitLoader.Parser.u32() in habit-loader-naive at //<compiler-generated>
              1 [inlined]          0x0000563e01bdc2f3 specialized Array.subscript.getter in habit-loader-naive at /src/NaiveHabitLoader.swift:94:89
              2                    0x0000563e01bdc2f3 static NaiveHabitLoader.load(_:) + 1187 in habit-loader-naive at /src/NaiveHabitLoader.swift:51:55
            """
        #expect(signature(inlined) == "SIGILL at NaiveHabitLoader.swift:51")
        // The same line as an outlined function, and attributed to its caller: one signature.
        let outlined = """
            Thread 0 "habit-loader-na" crashed:

              0                    0x0000563e01bdc100 NaiveHabitLoader.Parser.u32() + 40 in habit-loader-naive at /src/NaiveHabitLoader.swift:51:20
              1 [ra]               0x0000563e01bdc2f3 static NaiveHabitLoader.load(_:) + 1187 in habit-loader-naive at /src/NaiveHabitLoader.swift:60:9
            """
        let caller = """
            Thread 0 "habit-loader-na" crashed:

              0                    0x0000563e01bdc2f3 static NaiveHabitLoader.load(_:) + 1187 in habit-loader-naive at /src/NaiveHabitLoader.swift:51:55
              1 [ra]               0x0000563e01bdc400 main + 12 in habit-loader-naive at /src/main.swift:3:1
            """
        #expect(signature(outlined) == signature(inlined))
        #expect(signature(caller) == signature(inlined))
        // Another line is another bug.
        #expect(signature(caller.replacingOccurrences(of: ".swift:51:55", with: ".swift:52:55")) == "SIGILL at NaiveHabitLoader.swift:52")
        // The backtracer's header names the check too, between stars.
        let header =
            "*** Swift runtime failure: Unexpectedly found nil while unwrapping an Optional value ***\n"
            + Self.optimizedTrap(offset: 59, line: nil, check: "Unexpectedly found nil while unwrapping an Optional value")
        #expect(signature(header) == "SIGILL: Unexpectedly found nil while unwrapping an Optional value at loadHabits(_:) ← main")
        // A runtime message names the bug: frames stay function names, stable across builds.
        let withMessage = "Fatal error: Index out of range\n" + Self.optimizedTrap(offset: 59, line: nil, check: nil)
        #expect(signature(withMessage) == "SIGILL: Index out of range at loadHabits(_:) ← main")
    }

    @Test(
        "a crash site's key: the signal and every frame by module file name and offset, the same wherever the binary lives, past the C library's frames on top"
    )
    func siteKey() {
        func key(_ report: String, signal: Int32 = 4) -> UInt64? { CrashSignature.siteKey(signal: signal, in: Array(report.utf8)) }
        let report = """
            corrupt-fuzz: crashed with signal 4 at 0x55da48401443
                #0 0x55da48401443 in (/work/a/WorkerFixture+0x1443)
                #1 0x55da4840255b in parse+0x1b (/work/a/WorkerFixture+0x255b)
                #2 0x7f9d5ae6c249 in (/lib/x86_64-linux-gnu/libc.so.6+0x27249)
                #3 0x7f9d5ae6c304 in __libc_start_main+0x84 (/lib/x86_64-linux-gnu/libc.so.6+0x27304)
                #4 0x55da48401140 in (/work/a/WorkerFixture+0x1140)
            """
        #expect(key(report) != nil)
        // Another run: other addresses (ASLR), another folder, CRLF line ends: the same site.
        let again = report.replacingOccurrences(of: "0x55da", with: "0x5611").replacingOccurrences(of: "/work/a/", with: "/tmp/b/")
            .replacingOccurrences(of: "\n", with: "\r\n")
        #expect(key(again) == key(report))
        // A frame further down differs: another key (which frames a signature keeps depends on
        // their names, which a key does not know: a `die()` helper's caller may be far down).
        #expect(key(report.replacingOccurrences(of: "0x1140", with: "0x1150")) != key(report))
        // Another instruction, another caller's offset, or another signal: another site.
        #expect(key(report.replacingOccurrences(of: "+0x1443)", with: "+0x1447)")) != key(report))
        #expect(key(report.replacingOccurrences(of: "+0x255b)", with: "+0x2570)")) != key(report))
        #expect(key(report, signal: 11) != key(report))
        // The message printed before the report is the key's too, its numbers aside.
        #expect(key("Fatal error: bad count 12\n" + report) == key("Fatal error: bad count 7031\n" + report))
        #expect(key("Fatal error: bad count 12\n" + report) != key("Fatal error: bad magic 12\n" + report))
        #expect(key("Fatal error: bad count 12\n" + report) != key(report))
        let trace = "Fatal error: bad\nCurrent stack trace:\n0    libswiftCore.so    0x00007f3c55f5f130 swift_reportError + 33\n"
        #expect(key(trace + report) == key(trace.replacingOccurrences(of: "0x00007f3c55f5f130", with: "0x00007fab12e0c130") + report))
        // Two failed asserts: the C library's frames on top are the same; their callers tell
        // them apart. A crash all in the C library keeps its frames.
        func assertion(caller: String) -> String {
            """
            corrupt-fuzz: crashed with signal 6 at 0x3e800001a2b
                #0 0x7f9d5ae6c249 in (/lib/x86_64-linux-gnu/libc.so.6+0x8aebc)
                #1 0x7f9d5ae6c249 in raise+0x12 (/lib/x86_64-linux-gnu/libc.so.6+0x3cfb2)
                #2 0x7f9d5ae6c249 in abort+0xd3 (/lib/x86_64-linux-gnu/libc.so.6+0x27472)
                #3 0x7f9d5ae6c249 in (/lib/x86_64-linux-gnu/libc.so.6+0x27395)
                #4 0x7f9d5ae6c249 in __assert_fail+0x42 (/lib/x86_64-linux-gnu/libc.so.6+0x35eb2)
                #5 0x55da4840255b in load+0x1b (/work/a/loader+\(caller))
                #6 0x55da48401140 in main+0x20 (/work/a/loader+0x1140)
            """
        }
        #expect(key(assertion(caller: "0x255b"), signal: 6) != key(assertion(caller: "0x2570"), signal: 6))
        #expect(key(assertion(caller: "0x255b"), signal: 6) == key(assertion(caller: "0x255b"), signal: 6))
        let inLibc = "    #0 0x1 in (/lib/x86_64-linux-gnu/libc.so.6+0x8aebc)\n    #1 0x2 in (/lib/x86_64-linux-gnu/libc.so.6+0x27472)\n"
        #expect(key(inLibc, signal: 11) != nil)
        #expect(key(inLibc, signal: 11) != key(inLibc.replacingOccurrences(of: "0x27472", with: "0x27480"), signal: 11))
        // Reports without frames by module and offset have no key.
        #expect(key("Fatal error: Index out of range\n") == nil)
        #expect(key(Self.optimizedTrap(offset: 59, line: nil, check: nil)) == nil)
        #expect(key("") == nil)
    }

    // MARK: - Frames by module and offset, named

    private static func frame(
        _ function: String?, module: String = "/work/parser", offset: UInt64 = 0x1000, file: String? = nil, line: Int? = nil, inlined: Bool = false
    )
        -> CrashSignature.SymbolicFrame
    {
        CrashSignature.SymbolicFrame(module: module, offset: offset, function: function, file: file, line: line, inlined: inlined)
    }

    @Test("the crash reporter's and an unsymbolized sanitizer's frames are read as module and offset; a named report has none")
    func rawFrames() {
        let reporter = """
            fatal: bad header
            [crash reporter in the target] signal 6 at 0x323e
                #0 0x7fcb0a944eec in (/lib/x86_64-linux-gnu/libc.so.6+0x8aeec)
                #1 0x562bbe4abf5f in (/tmp/exp/a+0xf5f)
            """
        #expect(
            CrashSignature.rawFrames(in: reporter) == [
                .init(module: "/lib/x86_64-linux-gnu/libc.so.6", offset: 0x8aeec), .init(module: "/tmp/exp/a", offset: 0xf5f),
            ])
        let asan = """
            ==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602
                #0 0x4f1b2c  (/src/loader+0x4f1b2c)
                #1 0x4f1c00  (/src/loader+0x4f1c00)

            0x602 is located 0 bytes after 4-byte region
            allocated by thread T0 here:
                #0 0x4a0000  (/src/loader+0x4a0000)
            """
        #expect(CrashSignature.rawFrames(in: asan).map(\.offset) == [0x4f1b2c, 0x4f1c00])
        #expect(CrashSignature.rawFrames(in: "    #0 0x4f1b2c in parse_header /src/loader.c:12:3\n").isEmpty)
        #expect(CrashSignature.rawFrames(in: Self.optimizedTrap(offset: 59, line: nil, check: nil)).isEmpty)
    }

    @Test(
        "a signature passes over the frames that only raise the signal: libc, the Swift runtime, and the program's own die() helper, so each caller is its own finding"
    )
    func signatureFramesPassOverRaising() {
        let libc = "/lib/x86_64-linux-gnu/libc.so.6"
        func through(_ caller: String, line: Int?) -> [CrashSignature.SymbolicFrame] {
            [
                Self.frame("__pthread_kill_implementation", module: libc), Self.frame("raise", module: libc), Self.frame("abort", module: libc),
                Self.frame("die", offset: 0x1120), Self.frame(caller, offset: 0x1200, file: line.map { _ in "/src/parser.c" }, line: line),
                Self.frame("main", offset: 0x1300), Self.frame("__libc_start_call_main", module: libc),
            ]
        }
        #expect(CrashSignature.signatureFrames(through("parse_header", line: nil), site: true).frames == ["parse_header [parser+0x1200]", "main"])
        #expect(CrashSignature.signatureFrames(through("parse_body", line: nil), site: false).frames == ["parse_body", "main"])
        #expect(CrashSignature.signatureFrames(through("parse_body", line: 31), site: true).frames == ["parse_body at parser.c:31", "main"])
        // A memory fault inside a function named like a helper is that function's: nothing raised.
        let fault = [Self.frame("report_failure", offset: 0x1400), Self.frame("main", offset: 0x1300)]
        #expect(CrashSignature.signatureFrames(fault, site: false).frames == ["report_failure", "main"])
        // An optimized Swift trap: the runtime's name for the check, the inlined standard library
        // passed over, the line of the loader's code.
        let trap = [
            Self.frame("Swift runtime failure: Index out of range", module: "/work/app", file: "/<compiler-generated>", inlined: true),
            Self.frame("specialized Array.subscript.getter", module: "/work/app", inlined: true),
            Self.frame("idx(_:)", module: "/work/app", file: "/src/a.swift", line: 5),
            Self.frame("main", module: "/work/app", offset: 0x2000),
        ]
        let chosen = CrashSignature.signatureFrames(trap, site: true)
        #expect(chosen.runtimeFailure == "Index out of range")
        #expect(CrashSignature.make(signal: 4, frames: chosen.frames, message: chosen.runtimeFailure) == "SIGILL: Index out of range at a.swift:5")
        // corrupt-fuzz's worker loop and what calls it are cut: a worker and a single run agree.
        let worker = [
            Self.frame("parse(_:)", file: "/src/Lexer.swift", line: 40), Self.frame("closure #1 in main"),
            Self.frame("serve(_:)", offset: 0x3000).with(linkage: "$s17CorruptFuzzWorker5serveyyF"), Self.frame("main", offset: 0x3100),
        ]
        let single = Array(worker.prefix(2)) + [Self.frame("runOnce(_:)", offset: 0x3400).with(linkage: "$s17CorruptFuzzWorker7runOnceyyF")]
        #expect(CrashSignature.signatureFrames(worker, site: true).frames == CrashSignature.signatureFrames(single, site: true).frames)
        // Nothing but the runtime: its top frame, rather than nothing.
        #expect(CrashSignature.signatureFrames([Self.frame("abort", module: libc)], site: false).frames == ["abort"])
    }

    @Test(
        "helpers that exist to end the program are told by their words",
        arguments: [
            ("die", true), ("fatal_error", true), ("xmlFatalErr", true), ("g_error", true), ("png_error", true), ("panic", true),
            ("my_assert_fail", true), ("reportFatalError(_:)", true), ("bail_out", true), ("parse_header", false), ("parse_error_section", false),
            ("handle_error", false), ("checkSum", false), ("main", false), ("diet", false),
        ])
    func raiseHelpers(name: String, helper: Bool) {
        #expect(CrashSignature.isRaiseHelper(name) == helper, "\(name)")
    }

    @Test("Swift names are demangled by the runtime and shortened as the backtracer shortens them")
    func swiftNames() {
        #expect(SwiftSymbolName.readable("$s1a6parseAyS2iF") == "parseA(_:)")
        #expect(SwiftSymbolName.readable("$s4main3FooV4load4from2atAcA4DataV_SitKcfC").hasSuffix("init(from:at:)"))
        #expect(SwiftSymbolName.readable("$sSayxSicigSi_Tg5") == "specialized Array.subscript.getter")
        #expect(SwiftSymbolName.readable("$s4main6Loader33_ABCDEF0123456789ABCDEF0123456789LLC5parseyySays5UInt8VGKF") == "Loader.parse(_:)")
        #expect(SwiftSymbolName.readable("$s5lexer4mainyyFy10Foundation4DataVKcfU_") == "closure #1 in main()")
        #expect(SwiftSymbolName.readable("parse_header") == "parse_header")
        #expect(SwiftSymbolName.readable("$snot a name") == "$snot a name")
    }
}

extension CrashSignature.SymbolicFrame {
    fileprivate func with(linkage: String) -> Self {
        var copy = self
        copy.linkageName = linkage
        return copy
    }
}
