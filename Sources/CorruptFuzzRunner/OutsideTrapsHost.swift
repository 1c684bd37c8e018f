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
    /// The trap folder's name, `corrupt-fuzz-traps-` and 13 letters or digits: the URLs name it,
    /// and each run's stamp puts a name of the same length in its place.
    private let id: String
    private let lock = NSLock()
    /// The URLs requested, by the run folder they name ("" for none).
    private var requests: [String: [String]] = [:]
    private var runs: UInt64 = 0
    private var stopped = false
    /// How long a client's request line is waited for.
    private let requestWaitSeconds: Int

    /// Writes the canary and starts the listener (the traps have no URLs if it cannot start).
    /// - Parameter requestWaitSeconds: How long the listener waits for a client's request line
    ///   (a test of a silent client waits as long as it likes).
    /// - Throws: ``CorruptFuzzError`` when the canary cannot be written.
    public init(requestWaitSeconds: Int = 1) throws(CorruptFuzzError) {
        self.requestWaitSeconds = requestWaitSeconds
        let token = "corrupt-fuzz-canary-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        // The folder's name and the URLs must not hold the token: documents name them, and a
        // token the input holds does not count as a leak.
        let id = String(decoding: Self.marker, as: UTF8.self) + Self.padded(UInt64.random(in: 0...UInt64.max))
        self.id = id
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

    /// `number` in base 36, 13 digits (a UInt64 never needs more).
    private static func padded(_ number: UInt64) -> String {
        let digits = String(number, radix: 36)
        return String(repeating: "0", count: 13 - digits.count) + digits
    }

    /// One run's view of the listener: the bytes to run, in which every URL of this listener
    /// names a folder of this run's own. A request is this run's only if it names that folder:
    /// one that arrives late from a process that was killed, or from another slot, is not.
    public struct Stamp: Sendable {
        /// The bytes to run.
        public let bytes: [UInt8]
        /// The run's folder name.
        let name: String
        /// Whether the bytes named the listener's folder (else the run's folder was put after
        /// the bare origin).
        let namedFolder: Bool
    }

    /// `bytes` stamped for one run, or nil when they name no URL of this listener.
    ///
    /// A URL of the listener's folder gets the run's folder name in its place, of the same
    /// length, so the document parses as the saved one does; a URL of the bare origin
    /// (`http://127.0.0.1:PORT/x`, which a minimizer may leave) gets the run's folder put in.
    public func stamp(_ bytes: [UInt8]) -> Stamp? {
        guard let origin else { return nil }
        let originBytes = Array(origin.utf8)
        guard Oracle.occurs(originBytes, in: bytes) else { return nil }
        lock.lock()
        runs += 1
        let run = runs
        lock.unlock()
        // `r` then 12 digits: never the listener's folder, which has 13 random digits.
        let name = String(decoding: Self.marker, as: UTF8.self) + "r" + String(Self.padded(run).suffix(12))
        let folder = Array(("/" + id).utf8)
        let stamped = Array(("/" + name).utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + stamped.count)
        var namedFolder = false
        var i = 0
        while i < bytes.count {
            let end = i + originBytes.count
            guard bytes[i] == originBytes[0], end <= bytes.count, bytes[i..<end].elementsEqual(originBytes),
                end == bytes.count || !(0x30...0x39).contains(bytes[end])
            else {
                out.append(bytes[i])
                i += 1
                continue
            }
            out += originBytes
            out += stamped
            i = end
            if end + folder.count <= bytes.count, bytes[end..<(end + folder.count)].elementsEqual(folder) {
                i += folder.count
                namedFolder = true
            }
        }
        return Stamp(bytes: out, name: name, namedFolder: namedFolder)
    }

    /// The URLs requested by the run `stamp` was made for, as the document named them: each is
    /// reported once.
    public func requests(of stamp: Stamp) -> [String] {
        lock.lock()
        let urls = requests.removeValue(forKey: stamp.name) ?? []
        lock.unlock()
        return urls.map { $0.replacingOccurrences(of: "/" + stamp.name, with: stamp.namedFolder ? "/" + id : "") }
    }

    /// The run folder a request's path names (``Stamp``), or "" when it names none.
    static func runName(in path: Substring) -> String {
        let prefix = String(decoding: marker, as: UTF8.self) + "r"
        guard let range = path.range(of: prefix) else { return "" }
        let name = path[range.lowerBound...].prefix(prefix.count + 12)
        return name.count == prefix.count + 12 ? String(name) : ""
    }

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

    /// The URLs requested that name no run's folder (``Stamp``), in order; read once.
    public func unstampedRequests() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return requests.removeValue(forKey: "") ?? []
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

    /// Accepts connections until stopped; each is answered on a thread of its own (``answer(_:)``),
    /// so a client that connects and never sends its request (a persistent worker's process
    /// that lived through a crash mid-fetch keeps its socket open) delays no other.
    private func serve() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                lock.lock()
                let over = stopped
                lock.unlock()
                if over || errno == EBADF || errno == EINVAL || errno == ENOTSOCK { return }
                // A client gone before it was accepted, or no descriptor free for a moment.
                if errno != EINTR, errno != ECONNABORTED { usleep(10_000) }
                continue
            }
            // A thread of its own: the global queue on Linux runs only as many blocked reads at once as there are cores.
            Thread.detachNewThread { [self] in answer(client) }
        }
    }

    /// Reads one client's request line (for at most ``requestWaitSeconds``), records the URL,
    /// answers 404.
    private func answer(_ client: Int32) {
        var timeout = timeval(tv_sec: requestWaitSeconds, tv_usec: 0)
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
            let path = parts[1]
            let run = Self.runName(in: path)
            lock.lock()
            // Bounded: the requests of runs nobody asks about (killed ones) are dropped.
            if requests.count > 4096 { requests.removeAll() }
            requests[run, default: []].append(origin + path)
            lock.unlock()
        }
        let answer = Array("HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        _ = answer.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
        close(client)
    }
}
