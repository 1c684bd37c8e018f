import CorruptFuzzCore
import CorruptFuzzWorker
import Foundation

/// The worker side of process isolation: when this test process was started as a worker for
/// check `id`, it serves inputs from stdin until stdin closes, then exits.
enum WorkerMode {
    static let variable = "CORRUPT_FUZZ_WORKER"

    /// The check this process serves, if it is a worker.
    static var servedCheck: String? { ProcessInfo.processInfo.environment[variable] }

    /// Serves inputs forever (until stdin closes), then exits the process: the worker loop of
    /// ``CorruptFuzzWorker``, around the check's loader.
    static func serve<Value>(_ load: ([UInt8]) throws -> Value, validate: ((Value) -> String?)?, digest: Bool) -> Never {
        CorruptFuzzWorker.serveInputs(resultDescriptor: 3) { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                return .rejected(reason: Reason.notFound.rawValue, message: Violation.notFound.message)
            }
            switch runLoader(load, validate: validate, bytes: [UInt8](data), digest: digest) {
            case .accepted(let text): return .accepted(digest: text)
            case .acceptedInvalid(let message): return .acceptedInvalid(message: message)
            case .rejected(let reason, _, let message): return .rejected(reason: reason?.rawValue, message: message ?? "")
            default: return .rejected(reason: nil, message: "unexpected")
            }
        }
    }
}
