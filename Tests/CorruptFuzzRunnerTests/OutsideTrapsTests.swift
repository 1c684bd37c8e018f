#if canImport(Glibc)
    import Glibc
#endif
import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation
import Testing

@Suite("Outside traps: the canary file and the loopback listener")
struct OutsideTrapsTests {
    /// Sends `GET path` to 127.0.0.1:port and waits for the answer, as a loader fetching a DTD would.
    func get(port: UInt16, path: String) -> String {
        let fd = connected(port: port)
        defer { close(fd) }
        guard fd >= 0 else { return "no connection" }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = read(fd, &buffer, buffer.count)
        return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
    }

    /// A socket connected to 127.0.0.1:port, or -1.
    func connected(port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    @Test("a client that connects and never sends its request delays no other: the next is answered while it is still waited for")
    func stalledClient() throws {
        // The listener waits a minute for a request line: one that served its clients in turn
        // would answer the next only after giving up on the silent one.
        let host = try OutsideTrapsHost(requestWaitSeconds: 60)
        let dtdURL = try #require(host.traps.dtdURL)
        let dtd = try #require(URL(string: dtdURL))
        let port = UInt16(try #require(dtd.port))
        // Connected, silent (a worker's process that lived through a crash mid-fetch): ahead of
        // the next client in the listener's queue.
        let silent = connected(port: port)
        defer { close(silent) }
        try #require(silent >= 0)
        let answer = get(port: port, path: dtd.path)
        #expect(answer.hasPrefix("HTTP/1.0 404"), "\(answer)")
        // The silent client has had no answer, nor been let go: it is still waited for.
        var byte: UInt8 = 0
        let peeked = recv(silent, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        #expect(peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "the listener was done with the silent client first")
    }

    @Test("the canary holds its token; a request to the listener is answered 404 and credited to the run whose stamp it names; stop removes the canary")
    func listener() throws {
        let host = try OutsideTrapsHost()
        let traps = host.traps
        #expect(try String(contentsOfFile: traps.canaryPath, encoding: .utf8) == traps.canaryToken)
        let dtdURL = try #require(traps.dtdURL)
        let document = Array(#"<!DOCTYPE notes SYSTEM "\#(dtdURL)"><notes/>"#.utf8)
        let first = try #require(host.stamp(document))
        let second = try #require(host.stamp(document))
        #expect(first.bytes.count == document.count && second.bytes.count == document.count)
        #expect(first.bytes != document && first.bytes != second.bytes)
        #expect(host.stamp(Array("<notes/>".utf8)) == nil)
        // The second run fetches its DTD; the first run asked nothing.
        let stampedText = String(decoding: second.bytes, as: UTF8.self)
        let stamped = try #require(stampedText.split(separator: "\"").dropFirst().first.flatMap { URL(string: String($0)) })
        let answer = get(port: UInt16(try #require(stamped.port)), path: stamped.path)
        #expect(answer.hasPrefix("HTTP/1.0 404"), "\(answer)")
        #expect(host.requests(of: first).isEmpty)
        #expect(host.requests(of: second) == [dtdURL])
        #expect(host.requests(of: second).isEmpty, "a request is credited once")
        // A bare origin gets the run's folder put in, and the URL is reported as the document has it.
        let origin = "http://127.0.0.1:\(try #require(URL(string: dtdURL)?.port))"
        let bare = try #require(host.stamp(Array(#"<!DOCTYPE n SYSTEM "\#(origin)/x.dtd">"#.utf8)))
        let bareURL = try #require(String(decoding: bare.bytes, as: UTF8.self).split(separator: "\"").dropFirst().first.flatMap { URL(string: String($0)) })
        #expect(bareURL.path.hasSuffix("/x.dtd") && bareURL.path.count > "/x.dtd".count)
        _ = get(port: UInt16(try #require(bareURL.port)), path: bareURL.path)
        #expect(host.requests(of: bare) == [origin + "/x.dtd"])
        // A request naming the listener's own folder is no run's.
        let dtd = try #require(URL(string: dtdURL))
        _ = get(port: UInt16(try #require(dtd.port)), path: dtd.path)
        #expect(host.unstampedRequests() == [dtdURL])
        host.stop()
        #expect(!FileManager.default.fileExists(atPath: traps.canaryPath))
    }
}
