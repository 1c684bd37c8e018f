/// The word a loader gives for why it refused a file: `not-found`, `empty`, `corrupt`,
/// `unsupported-version`, or a word of the app's own.
///
/// The oracle compares reasons: a file from a newer app version reported as `corrupt` is a
/// wrong reason (the app would delete it), where `unsupported-version` keeps it.
public struct Reason: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ word: String) { rawValue = word }
    public init(stringLiteral word: String) { rawValue = word }

    public var description: String { rawValue }

    /// There is no file.
    public static let notFound: Reason = "not-found"
    /// The file has no bytes.
    public static let empty: Reason = "empty"
    /// The bytes are not valid user data.
    public static let corrupt: Reason = "corrupt"
    /// The file comes from a newer version of the app: keep it, do not repair or delete it.
    public static let unsupportedVersion: Reason = "unsupported-version"
    /// The file could not be read (an I/O error): it may be fine, so do not delete or repair it;
    /// try again later.
    public static let ioError: Reason = "io-error"
}

/// One thing wrong with a file: the reason a loader should give (when known), what is wrong,
/// and where.
///
/// Every validator and format says what is wrong with this one type: the reference validators,
/// the schema parser (which collects all of them), the XML and property-list readers.
public struct Violation: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The reason word a loader should give; nil when the validator does not know it.
    public var reason: Reason?
    /// `4294967295 exceeds max 100000`.
    public var message: String {
        get { text.message }
        set { text = .written(message: newValue, path: path) }
    }
    /// Where: `habits[2].num_dates`, `/notes/note[2]`, `$objects[3]`; empty for the whole file.
    public var path: String {
        get { text.path }
        set { text = .written(message: message, path: newValue) }
    }
    /// Which rule was broken where, as a number, for validators that know it: violations of
    /// one rule at one field share it whatever the input's numbers (`habits[2].num_dates:
    /// 100001 exceeds max 100000` and `habits[0].num_dates: 7000000 exceeds max 100000`). A
    /// campaign tells behaviours apart by it; without it, by the path and message with their
    /// numbers left out, which costs more. Not part of equality, hashing or encoding.
    public var site: Int?
    private var text: Text

    /// The message and path, written or to be written.
    private enum Text: Sendable {
        case written(message: String, path: String)
        case deferred(@Sendable () -> (message: String, path: String))
        /// To be written by finding the violation again in the input it was found in.
        case foundIn([UInt8], by: any ViolationWriter)

        var both: (message: String, path: String) {
            switch self {
            case .written(let message, let path): (message, path)
            case .deferred(let write): write()
            case .foundIn(let bytes, let writer): writer.write(bytes)
            }
        }

        var message: String { both.message }
        var path: String { both.path }
    }

    public init(_ reason: Reason?, _ message: String, at path: String = "", site: Int? = nil) {
        self.reason = reason
        self.text = .written(message: message, path: path)
        self.site = site
    }

    /// A violation whose message and path are written only when they are read.
    ///
    /// A validator that a campaign asks about every input finds a violation in most of them,
    /// and the campaign reads the message of only the few that become findings (it tells
    /// behaviours apart by `site`): writing each message costs more than finding it. `write`
    /// runs each time they are read and must give the same text every time.
    public init(_ reason: Reason?, site: Int?, write: @escaping @Sendable () -> (message: String, path: String)) {
        self.reason = reason
        self.text = .deferred(write)
        self.site = site
    }

    /// A violation whose message and path are written by `writer`, from the input it was found
    /// in, when they are read. It allocates nothing: the validator's pass that finds it needs
    /// to write neither (see ``ViolationWriter``).
    package init(_ reason: Reason?, site: Int?, foundIn bytes: [UInt8], by writer: any ViolationWriter) {
        self.reason = reason
        self.text = .foundIn(bytes, by: writer)
        self.site = site
    }

    public static func == (a: Violation, b: Violation) -> Bool {
        a.reason == b.reason && a.text.both == b.text.both
    }

    public func hash(into hasher: inout Hasher) {
        let (message, path) = text.both
        hasher.combine(reason)
        hasher.combine(message)
        hasher.combine(path)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reason = try container.decodeIfPresent(Reason.self, forKey: .reason)
        text = .written(
            message: try container.decode(String.self, forKey: .message), path: try container.decode(String.self, forKey: .path))
        site = nil
    }

    public func encode(to encoder: any Encoder) throws {
        let (message, path) = text.both
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encode(message, forKey: .message)
        try container.encode(path, forKey: .path)
    }

    private enum CodingKeys: String, CodingKey {
        case reason, message, path
    }

    /// `habits[2].num_dates: 4294967295 exceeds max 100000`.
    public var description: String {
        let (message, path) = text.both
        return path.isEmpty ? message : "\(path): \(message)"
    }

    public static let notFound = Violation(.notFound, "the file does not exist")
    public static let empty = Violation(.empty, "the file is empty")

    /// What is wrong with these bytes whatever the format: a missing file is `not-found`, an
    /// empty one `empty`; nil when there are bytes to read.
    public static func intrinsic(for bytes: [UInt8]?) -> Violation? {
        guard let bytes else { return .notFound }
        return bytes.isEmpty ? .empty : nil
    }
}

/// Writes the message and path of the violation a validator finds first in an input, by
/// finding it again: a validator asked about every input of a campaign finds a violation in
/// most of them, and the campaign reads the text of the few that become findings. It must
/// write the same text every time for the same bytes.
package protocol ViolationWriter: AnyObject, Sendable {
    func write(_ bytes: [UInt8]) -> (message: String, path: String)
}

/// A validator's judgement of one input.
public enum Verdict: Sendable, Hashable, Codable {
    /// The input is valid user data; a loader must accept it.
    case valid
    /// The input is invalid: what is wrong, where, and the reason a loader should give.
    case invalid(Violation)
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

    /// An invalid verdict's reason and site, read without copying its violation.
    package var violationSite: (reason: Reason?, site: Int?)? {
        if case .invalid(let violation) = self { return (violation.reason, violation.site) }
        return nil
    }
}

extension Verdict: CustomStringConvertible {
    /// `valid`, `corrupt: habits[2].dates.count: -1 is negative`, `undecided (…)`,
    /// `validator error (…)`.
    public var description: String {
        switch self {
        case .valid: "valid"
        case .invalid(let violation): (violation.reason.map { "\($0): " } ?? "") + violation.description
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
    /// Whether a campaign should remember this validator's verdicts on recent small inputs
    /// and ask it once per distinct input. True by default: worth it for a validator that
    /// costs more than hashing, storing and comparing an input (a process, an XML parser); a
    /// validator that reads a small file in less (the schema's) says false.
    var remembersVerdicts: Bool { get }
}

extension Validator {
    public var remembersVerdicts: Bool { true }
}

/// A validator made of a closure, for in-process checks.
public struct ClosureValidator: Validator {
    public let name: String
    public var remembersVerdicts = true
    private let body: @Sendable ([UInt8]?) -> Verdict

    /// A validator that sees every input, a missing file (nil) and an empty one included.
    public init(name: String, _ body: @escaping @Sendable ([UInt8]?) -> Verdict) {
        self.name = name
        self.body = body
    }

    /// A validator of a file's contents: a missing file is `not-found` and an empty one
    /// `empty` before `body` is asked, so `body` sees at least one byte.
    public init(name: String, contents body: @escaping @Sendable ([UInt8]) -> Verdict) {
        self.name = name
        self.body = { bytes in
            if let violation = Violation.intrinsic(for: bytes) { return .invalid(violation) }
            return body(bytes ?? [])
        }
    }

    public func validate(_ bytes: [UInt8]?) -> Verdict { body(bytes) }
}
