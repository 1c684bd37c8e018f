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
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return "no connection" }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = read(fd, &buffer, buffer.count)
        return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
    }

    @Test("the canary holds its token; a request to the listener is counted by URL and answered 404; stop removes the canary")
    func listener() throws {
        let host = try OutsideTrapsHost()
        let traps = host.traps
        #expect(try String(contentsOfFile: traps.canaryPath, encoding: .utf8) == traps.canaryToken)
        let dtd = try #require(traps.dtdURL.flatMap(URL.init(string:)))
        let before = host.requestCounts()
        let answer = get(port: UInt16(try #require(dtd.port)), path: dtd.path)
        #expect(answer.hasPrefix("HTTP/1.0 404"), "\(answer)")
        #expect(OutsideTrapsHost.fetched(before: before, after: host.requestCounts()) == [dtd.absoluteString])
        host.stop()
        #expect(!FileManager.default.fileExists(atPath: traps.canaryPath))
    }
}
