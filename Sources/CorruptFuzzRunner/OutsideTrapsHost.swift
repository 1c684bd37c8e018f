#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CorruptFuzzCore
import Foundation

/// Sets up a campaign's ``OutsideTraps``: writes the canary file and runs an HTTP listener on
/// 127.0.0.1 that records every request and answers 404. A loader that fetches a URL the
/// document names shows up here, however it fetches it (libxml2's nanohttp, curl, Foundation).
public final class OutsideTrapsHost: @unchecked Sendable {
    public let traps: OutsideTraps
    private let folder: URL
    private let listener: Int32
    /// `http://127.0.0.1:PORT`, when listening.
    private let origin: String?
    private let lock = NSLock()
    private var requests: [String: Int] = [:]
    private var stopped = false

    /// Writes the canary and starts the listener (the traps have no URLs if it cannot start).
    /// - Throws: ``CorruptFuzzError`` when the canary cannot be written.
    public init() throws(CorruptFuzzError) {
        let token = "corrupt-fuzz-canary-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        // The folder's name and the URLs must not hold the token: documents name them, and a
        // token the input holds does not count as a leak.
        let id = "corrupt-fuzz-traps-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(id)
        let canary = folder.appendingPathComponent("secret.txt")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(token.utf8).write(to: canary)
        } catch {
            throw CorruptFuzzError(.reportWriteFailed, "cannot write the XXE canary file \(canary.path): \(error.localizedDescription)")
        }
        listener = Self.listen()
        var dtd: String?, entity: String?
        if listener >= 0, let port = Self.port(of: listener) {
            origin = "http://127.0.0.1:\(port)"
            dtd = "http://127.0.0.1:\(port)/\(id)/external.dtd"
            entity = "http://127.0.0.1:\(port)/\(id)/entity.txt"
        } else {
            origin = nil
        }
        traps = OutsideTraps(canaryPath: canary.path, canaryToken: token, dtdURL: dtd, entityURL: entity)
        if listener >= 0 {
            let thread = Thread { [self] in serve() }
            thread.name = "corrupt-fuzz loopback listener"
            thread.start()
        }
    }

    deinit { stop() }

    /// Stops the listener and removes the canary.
    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        if listener >= 0 {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// What every trap folder's name starts with.
    static let marker = Array("corrupt-fuzz-traps-".utf8)

    /// Whether `bytes` name a trap of some run (a saved reproducer of an `xxe` finding does):
    /// a trap folder, or a URL on the loopback interface.
    public static func mentionsTraps(_ bytes: [UInt8]) -> Bool { Oracle.occurs(marker, in: bytes) || Oracle.occurs(loopback, in: bytes) }

    static let loopback = Array("http://127.0.0.1:".utf8)

    /// `bytes` with every trap reference of another run pointed at `traps`: a URL on the
    /// loopback interface gets this listener's origin (and its folder's name, where it named the
    /// other run's), and a path into another run's canary folder gets this canary folder (as
    /// many leading slashes kept as the reference had, so `file:///tmp/…` stays a file URL).
    public static func rebind(_ bytes: [UInt8], to traps: OutsideTraps) -> [UInt8] {
        let folder = (traps.canaryPath as NSString).deletingLastPathComponent
        let id = (folder as NSString).lastPathComponent
        // `http://127.0.0.1:PORT` and `http://127.0.0.1:PORT/corrupt-fuzz-traps-ID`.
        let folderURL = traps.dtdURL.flatMap { url in url.range(of: id).map { Array(url[..<$0.upperBound].utf8) } }
        let origin = folderURL.map { Array($0.dropLast(id.utf8.count + 1)) }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func isIDByte(_ b: UInt8) -> Bool { isDigit(b) || (b >= 0x61 && b <= 0x7A) }
        func isPathByte(_ b: UInt8) -> Bool {
            isIDByte(b) || (b >= 0x41 && b <= 0x5A) || b == UInt8(ascii: "/") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_")
                || b == UInt8(ascii: "-") || b == UInt8(ascii: "~")
        }
        func starts(_ prefix: [UInt8], at index: Int) -> Bool {
            index + prefix.count <= bytes.count && bytes[index..<(index + prefix.count)].elementsEqual(prefix)
        }
        func idEnd(after index: Int) -> Int {
            var end = index + marker.count
            while end < bytes.count, isIDByte(bytes[end]) { end += 1 }
            return end
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var copied = 0
        var i = 0
        while i < bytes.count {
            if let origin, let folderURL, starts(loopback, at: i) {
                var end = i + loopback.count
                while end < bytes.count, isDigit(bytes[end]) { end += 1 }
                out += bytes[copied..<i]
                if end < bytes.count, bytes[end] == UInt8(ascii: "/"), starts(marker, at: end + 1) {
                    out += folderURL
                    end = idEnd(after: end + 1)
                } else {
                    out += origin
                }
                copied = end
                i = end
            } else if starts(marker, at: i) {
                let end = idEnd(after: i)
                var start = i
                while start > copied, isPathByte(bytes[start - 1]) { start -= 1 }
                let slashes = bytes[start..<i].prefix { $0 == UInt8(ascii: "/") }.count
                if slashes > 0 {
                    out += bytes[copied..<start]
                    out += Array(String(repeating: "/", count: slashes - 1).utf8) + Array(folder.utf8)
                    copied = end
                }
                i = end
            } else {
                i += 1
            }
        }
        out += bytes[copied...]
        return out
    }

    /// How many times each trap URL has been requested so far.
    public func requestCounts() -> [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        return requests
    }

    /// The trap URLs requested between two ``requestCounts()`` snapshots.
    public static func fetched(before: [String: Int], after: [String: Int]) -> [String] {
        after.filter { $0.value > before[$0.key, default: 0] }.map(\.key).sorted()
    }

    private static func listen() -> Int32 {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listenOn(fd) == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    private static func listenOn(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
            Glibc.listen(fd, 64)
        #else
            Darwin.listen(fd, 64)
        #endif
    }

    private static func port(of fd: Int32) -> UInt16? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return ok == 0 ? UInt16(bigEndian: address.sin_port) : nil
    }

    /// Accepts connections until stopped: reads the request line, records the URL, answers 404.
    private func serve() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 2048)
            while request.count < 8192, !request.contains(0x0A) {
                let n = read(client, &buffer, buffer.count)
                if n <= 0 { break }
                request += buffer[0..<n]
            }
            let line = String(decoding: request.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
            let parts = line.split(separator: " ")
            if parts.count >= 2, let origin {
                let url = origin + parts[1]
                lock.lock()
                requests[url, default: 0] += 1
                lock.unlock()
            }
            let answer = Array("HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            _ = answer.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            close(client)
        }
    }
}
