/// An error of the tool itself: bad arguments, an unusable corpus or target, a failing disk.
///
/// Findings are never errors; they are values (``Finding``). This type follows swift-nio's
/// `FileSystemError`: a code to switch on, a message for people, and the underlying cause.
public struct CorruptFuzzError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in a form to switch on.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The user asked for something that cannot work (a usage or configuration error).
        public static let invalidArgument = Code("invalid argument")
        /// The corpus is missing, empty or unreadable.
        public static let unusableCorpus = Code("unusable corpus")
        /// The target or validator cannot be run.
        public static let unusableTarget = Code("unusable target")
        /// Reports could not be written.
        public static let reportWriteFailed = Code("report write failed")
        /// A system call failed for a reason outside the user's control.
        public static let system = Code("system")
    }

    public var code: Code
    public var message: String
    public var cause: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        guard let cause else { return message }
        return "\(message) (\(cause))"
    }
}
