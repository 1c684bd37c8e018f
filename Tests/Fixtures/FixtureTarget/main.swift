// A test target with one behaviour per mode, so the executor's classification is tested
// against real processes: real signals, real timeouts, real output floods.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n <= 0 { return }
            offset += n
        }
    }
}

/// Writes through a wild pointer: a real segmentation fault, not a raised signal.
func segfault() -> Never {
    let pointer = UnsafeMutablePointer<Int>(bitPattern: 16)!
    pointer.pointee = 42
    exit(0)
}

func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return bytes
}

func fail(_ reason: String, _ message: String = "") -> Never {
    writeAll(2, "reason: \(reason)\n")
    if !message.isEmpty { writeAll(2, message + "\n") }
    exit(1)
}

let args = CommandLine.arguments
guard args.count >= 2 else {
    writeAll(2, "usage: FixtureTarget MODE [ARGS]\n")
    exit(64)
}

switch args[1] {
case "accept":
    print("digest: ok")
case "reject":
    fail(args.count > 2 ? args[2] : "corrupt", "rejected on purpose")
case "exit":
    writeAll(2, "exiting on purpose\n")
    exit(Int32(args.count > 2 ? args[2] : "3") ?? 3)
case "segv":
    segfault()
case "abort":
    abort()
case "fatal":
    fatalError("fixture fatal error")
case "loop":
    var x: UInt64 = 0
    while true { x &+= 1; if x == 0 { print(x) } }
case "ignore-term-child":
    // Ignores SIGTERM and leaves a child behind that keeps stdout open.
    signal(SIGTERM, SIG_IGN)
    if fork() == 0 {
        signal(SIGTERM, SIG_IGN)
        while true { sleep(1) }
    }
    while true { sleep(1) }
case "leave-child":
    // Exits at once but leaves a child holding stdout open.
    if fork() == 0 {
        while true { sleep(1) }
    }
    print("parent done")
    exit(0)
case "flood":
    // 100 MB on stdout, then a normal exit.
    let chunk = String(repeating: "x", count: 1 << 20)
    for _ in 0..<100 { writeAll(1, chunk) }
    exit(0)
case "alloc":
    // Allocates and touches N MB.
    let mb = Int(args.count > 2 ? args[2] : "2048") ?? 2048
    var blocks: [UnsafeMutablePointer<UInt8>] = []
    for _ in 0..<mb {
        guard let p = malloc(1 << 20)?.assumingMemoryBound(to: UInt8.self) else {
            writeAll(2, "out of memory\n")
            abort()
        }
        memset(p, 1, 1 << 20)
        blocks.append(p)
    }
    print("allocated \(blocks.count) MB")
case "stdin":
    // Reads the input from standard input.
    var count = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(0, &buffer, buffer.count)
        if n <= 0 { break }
        count += n
    }
    if count == 0 { fail("empty") }
    print("read \(count) bytes")
case "file":
    // A tiny loader whose behaviour the file decides: for campaign tests.
    //   missing → not-found; empty → empty; starts with "OK" → accepted;
    //   contains "BOOM" → crash; contains "LOOP" → hang; otherwise corrupt.
    guard args.count > 2, let bytes = readFile(args[2]) else { fail("not-found") }
    if bytes.isEmpty { fail("empty") }
    let text = String(decoding: bytes, as: UTF8.self)
    if text.contains("BOOM") { segfault() }
    if text.contains("LOOP") { while true { sleep(1) } }
    if text.hasPrefix("OK") { print("digest: \(bytes.count) bytes"); exit(0) }
    fail("corrupt", "does not start with OK")
case "escape":
    // Leaves a process behind in a session of its own (what `setsid sleep 300 &` does), named
    // by args[2] so a test can look for it, then rejects the input.
    var ready: [Int32] = [0, 0]
    _ = pipe(&ready)
    if fork() == 0 {
        close(ready[0])
        _ = setsid()
        close(ready[1])
        let name = args.count > 2 ? args[2] : "corrupt-fuzz-escapee"
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup(name), strdup("300"), nil]
        execv("/bin/sleep", &argv)
        exit(127)
    }
    close(ready[1])
    var byte: UInt8 = 0
    _ = read(ready[0], &byte, 1)  // EOF once the child is in its own session
    fail("corrupt", "left a process behind")
case "checksum-validator":
    // A validator whose message quotes checksums in hex without 0x, as real ones do: a file
    // that does not start with "OK" is corrupt, with a checksum made from its bytes.
    guard args.count > 2, let bytes = readFile(args[2]) else { fail("not-found") }
    if bytes.isEmpty { fail("empty") }
    if bytes.starts(with: [0x4F, 0x4B]) { exit(0) }
    var hash: UInt32 = 2_166_136_261
    for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
    let hex = String(hash, radix: 16)
    let stored = String(UInt32(bytes.count) &* 2_654_435_761, radix: 16)
    fail("corrupt", "checksum mismatch: stored \(stored), computed \(hex)")
case "crashing-validator":
    // A validator that crashes on inputs holding "BOOM" and judges the rest like `file`.
    guard args.count > 2, let bytes = readFile(args[2]) else { fail("not-found") }
    if bytes.isEmpty { fail("empty") }
    if String(decoding: bytes, as: UTF8.self).contains("BOOM") { segfault() }
    if bytes.starts(with: [0x4F, 0x4B]) { exit(0) }
    fail("corrupt", "does not start with OK")
default:
    writeAll(2, "unknown mode \(args[1])\n")
    exit(64)
}
