import CorruptFuzzCore
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
        #expect(CrashSignature.make(signal: 4, frames: ["parseHabit(_:at:)"], message: "Index out of range")
            == "SIGILL: Index out of range at parseHabit(_:at:)")
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
}
