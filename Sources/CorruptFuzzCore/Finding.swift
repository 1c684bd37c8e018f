/// The kinds of bug the oracle reports; each is one check (one JUnit test case) per target.
public enum FindingKind: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// The loader died by a signal.
    case crash
    /// The loader did not exit before the deadline.
    case hang
    /// The loader went over the memory limit.
    case oom
    /// The loader accepted input the validator (or the mutation's expectation) says is invalid.
    case silentAcceptance = "silent-acceptance"
    /// The loader rejected input the validator says is valid, such as an unmodified seed.
    case falseRejection = "false-rejection"
    /// The loader rejected invalid input but gave the wrong reason, e.g. `corrupt` for a file
    /// from a newer version, which the app would then delete.
    case wrongReason = "wrong-reason"
    /// The loader let a document reach outside itself: the content of a local canary file named
    /// by an external entity showed up in its output, or it fetched a URL the document named
    /// (an external DTD or entity, seen by a listener on 127.0.0.1).
    case xxe
    /// The validator (not the loader) crashed, hung or could not run on an input: the input
    /// stayed unlabeled, so the campaign could not judge the loader on it.
    case validatorError = "validator-error"
    /// A file written by a newer version of the app was accepted by an older one that lost
    /// part of it: the older loader's digest differs from the newer one's, so the older app
    /// shows less than the file holds and would save it back without the rest.
    case lostOnDowngrade = "lost-on-downgrade"
    /// The app's own writer corrupted a document: what it saved fails the validator, does not
    /// load again, or loads as other data than was saved (load, save, load again).
    case writerCorruption = "writer-corruption"
    /// After a crash or a power cut at some operation of a save or migration, the data does not
    /// load, is a mix of the old and the new version, or the program run again fails.
    case tornState = "torn-state"
    /// After a crash point (or the re-run that should finish the job), records are missing.
    case lostData = "lost-data"
    /// After a crash point and a re-run, records are there twice: the program is not
    /// repeatable.
    case duplicateData = "duplicate-data"
    /// After a crash point and a re-run, a file is left that a clean run does not leave (a
    /// temporary file, a backup, a lock file).
    case strayFile = "stray-file"
    /// The program still holds a lock (or an open file) in the data folder when it is done: an
    /// app suspended with a file lock held is killed by the system (0xdead10cc).
    case heldLock = "held-lock"
    /// A save that said it succeeded (exit 0) when a call it made failed (a full disk, an I/O
    /// error, a short write) and what it was asked to save is not on disk: the save path's
    /// silent acceptance.
    case unreportedIOError = "unreported-io-error"

    /// The checks a fuzz campaign makes, one JUnit test case each.
    public static let campaignChecks: [FindingKind] = [
        .crash, .hang, .oom, .silentAcceptance, .falseRejection, .wrongReason, .xxe, .validatorError,
    ]

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// One distinct bug: a kind and a signature, plus what it takes to reproduce it.
public struct Finding: Sendable, Hashable, Codable {
    public var kind: FindingKind
    /// What makes two hits the same bug: the signal and top frames of a crash, or the reasons.
    public var signature: String
    /// A human explanation, e.g. the validator's message for a silent acceptance.
    public var detail: String
    /// The input that first hit it, before minimization.
    public var input: TestInput
    /// The execution that showed it.
    public var execution: Execution
    /// The validator's verdict on the input, when one ran.
    public var verdict: Verdict?
    /// Further files that show the bug beside the input: what a writer saved from it, in
    /// order (`saved-1.plist`, `saved-2.plist`). Reports save them next to the reproducer.
    public var attachments: [Attachment]?
    /// The last words of this finding's replay command when a file does not replay it (a crash
    /// point: `--at 12`); nil: the reproducer's path.
    public var replayArguments: [String]?

    public init(
        kind: FindingKind, signature: String, detail: String, input: TestInput, execution: Execution, verdict: Verdict?,
        attachments: [Attachment]? = nil
    ) {
        self.kind = kind
        self.signature = signature
        self.detail = detail
        self.input = input
        self.execution = execution
        self.verdict = verdict
        self.attachments = attachments
    }

    /// The deduplication key.
    public var key: FindingKey { FindingKey(kind: kind, signature: signature) }
}

/// Kind plus signature: two hits with the same key are the same bug.
public struct FindingKey: Sendable, Hashable, Codable {
    public var kind: FindingKind
    public var signature: String

    public init(kind: FindingKind, signature: String) {
        self.kind = kind
        self.signature = signature
    }
}

/// A file that belongs to a finding beside its input, such as what the app's writer saved.
public struct Attachment: Sendable, Hashable, Codable {
    /// The file's name in the finding's folder, e.g. `saved-1.plist`.
    public var name: String
    @Base64Coded public var bytes: [UInt8]

    public init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
}
