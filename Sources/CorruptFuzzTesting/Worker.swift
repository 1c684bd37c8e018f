import Foundation

/// The worker side of process isolation: when this test process was started as a worker for
/// check `id`, it serves inputs from stdin until stdin closes, then exits.
enum WorkerMode {
    static let variable = "CORRUPT_FUZZ_WORKER"

    /// The check this process serves, if it is a worker.
    static var servedCheck: String? { ProcessInfo.processInfo.environment[variable] }

    /// Serves inputs forever (until stdin closes), then exits the process.
    static func serve<Value>(_ load: (Data) throws -> Value, validate: ((Value) -> String?)?, digest: Bool) -> Never {
        while let line = readLine(strippingNewline: true) {
            let bytes = FileManager.default.contents(atPath: line).map { [UInt8]($0) }
            var reply: String
            if let bytes {
                switch runLoader(load, validate: validate, bytes: bytes, digest: digest) {
                case .accepted(let text): reply = "A " + flatten(text)
                case .acceptedInvalid(let message): reply = "V " + flatten(message)
                case .rejected(let reason, _, let message): reply = "R \(reason ?? "-") " + flatten(message ?? "")
                default: reply = "R - unexpected"
                }
            } else {
                reply = "R not-found cannot read \(line)"
            }
            reply += "\n"
            _ = reply.withCString { write(3, $0, strlen($0)) }
        }
        exit(0)
    }

    private static func flatten(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 }.prefix(2000))
    }
}
