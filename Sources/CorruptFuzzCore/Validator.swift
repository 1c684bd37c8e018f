/// A validator's judgement of one input.
public enum Verdict: Sendable, Hashable {
    /// The input is valid user data; a loader must accept it.
    case valid
    /// The input is invalid; `reason` is the reason word a loader should give, when known,
    /// and `message` says exactly what is wrong (`habits[2].dates.count: -1 is negative`).
    case invalid(reason: String?, message: String)
    /// The validator could not decide (the input is beyond what it can read safely, or a
    /// resource it needs is unusable); the input gets no label.
    case undecided(String)
    /// The validator itself failed on this input: it crashed, hung, ran out of memory or could
    /// not be started. That is a problem of the validator, not a verdict: the input gets no
    /// label, and the campaign reports a `validator-error` finding with this signature.
    case error(signature: String, detail: String)

    public var isValid: Bool {
        if case .valid = self { return true }
        return false
    }
}

extension Verdict: CustomStringConvertible {
    /// `valid`, `corrupt: habits[2].dates.count: -1 is negative`, `undecided (…)`,
    /// `validator error (…)`.
    public var description: String {
        switch self {
        case .valid: "valid"
        case .invalid(let reason, let message): (reason.map { "\($0): " } ?? "") + message
        case .undecided(let why): "undecided (\(why))"
        case .error(_, let detail): "validator error (\(detail))"
        }
    }
}

/// Decides whether bytes are valid user data, with a descriptive message when they are not.
///
/// The format's strict reference validator, the app's own `validateUserData`-style check, or an
/// external command. Implementations must be safe to call from several threads at once.
public protocol Validator: Sendable {
    /// A short name for reports, e.g. `habit-tracker` or the command line.
    var name: String { get }
    /// Judges `bytes`; `nil` stands for a file that does not exist.
    func validate(_ bytes: [UInt8]?) -> Verdict
}

/// A validator made of a closure, for in-process checks.
public struct ClosureValidator: Validator {
    public let name: String
    private let body: @Sendable ([UInt8]?) -> Verdict

    public init(name: String, _ body: @escaping @Sendable ([UInt8]?) -> Verdict) {
        self.name = name
        self.body = body
    }

    public func validate(_ bytes: [UInt8]?) -> Verdict { body(bytes) }
}
