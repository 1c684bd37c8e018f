import CorruptFuzzCore
import Foundation

/// A validator that is a command: exit 0 means valid, another exit invalid, with the reason
/// taken from the first stderr line `reason: WORD` and the message from the line after it.
///
/// A validator that crashes, hangs (twice: a run that misses its deadline runs again with the
/// confirmation deadline, as a loader's does) or cannot run decides nothing: the verdict is
/// ``Verdict/error(signature:detail:)``, the input gets no label, and the campaign reports a
/// `validator-error` finding.
public final class ExternalValidator: Validator, @unchecked Sendable {
    public let name: String
    private let executor: ProcessExecutor
    private let freeSlots: SlotPool

    /// Creates a validator running `command`, with up to `slots` runs at once.
    public init(command: TargetCommand, limits: ProcessExecutor.Limits, slots: Int, fileExtension: String) throws(CorruptFuzzError) {
        name = command.line
        executor = try ProcessExecutor(command: command, limits: limits, slots: slots, fileExtension: fileExtension)
        freeSlots = SlotPool(count: executor.slots)
    }

    public func validate(_ bytes: [UInt8]?) -> Verdict {
        let slot = freeSlots.take()
        defer { freeSlots.give(slot) }
        let execution: Execution
        do {
            execution = try executor.executeConfirmingHang(TestInput(bytes: bytes, seedName: "validator"), slot: slot)
        } catch {
            return .error(signature: "could not run", detail: "validator could not run: \(error)")
        }
        switch execution.outcome {
        case .accepted, .acceptedInvalid:
            return .valid
        case .rejected(let reason, let code, let message):
            return .invalid(Violation(reason, message ?? "rejected by the validator (exit \(code))"))
        case .crashed(let signal, let frames, let message):
            return .error(signature: "crash: " + CrashSignature.make(signal: signal, frames: frames, message: message), detail: execution.outcome.summary)
        case .hung:
            if execution.starved { return .undecided(Judge.starvedReason) }
            return .error(signature: "hang: no exit within the timeout", detail: execution.outcome.summary)
        case .outOfMemory:
            return .error(signature: "oom: over the memory limit", detail: execution.outcome.summary)
        }
    }
}

/// A thread-safe pool of slot numbers.
final class SlotPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var free: [Int]

    init(count: Int) { free = Array((0..<count).reversed()) }

    func take() -> Int {
        condition.lock()
        defer { condition.unlock() }
        while free.isEmpty { condition.wait() }
        return free.removeLast()
    }

    func give(_ slot: Int) {
        condition.lock()
        free.append(slot)
        condition.signal()
        condition.unlock()
    }
}
