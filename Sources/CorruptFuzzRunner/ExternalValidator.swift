import CorruptFuzzCore
import Foundation

/// A validator that is a command: exit 0 means valid, another exit invalid, with the reason
/// taken from the first stderr line `reason: WORD` and the message from the line after it.
///
/// A validator that crashes or hangs decides nothing; the input then gets no label.
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
            execution = try executor.execute(TestInput(bytes: bytes, seedName: "validator"), slot: slot)
        } catch {
            return .undecided("validator could not run: \(error)")
        }
        switch execution.outcome {
        case .accepted, .acceptedInvalid:
            return .valid
        case .rejected(let reason, let code, let message):
            return .invalid(reason: reason, message: message ?? "rejected by the validator (exit \(code))")
        case .crashed, .hung, .outOfMemory:
            return .undecided("validator \(execution.outcome.summary)")
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
