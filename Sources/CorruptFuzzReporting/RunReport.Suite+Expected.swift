import CorruptFuzzCore
import CorruptFuzzRunner

/// A finding a team already knows about, and why it is expected.
public struct ExpectedFinding: Sendable, Hashable, Codable {
    public var kind: FindingKind
    public var signature: String
    /// `listed in known-findings.txt:4`, `reproduced by Corpus/regressions/x/crash-1f.habits
    /// from the regression store`.
    public var because: String

    public init(key: FindingKey, because: String) {
        kind = key.kind
        signature = key.signature
        self.because = because
    }

    public var key: FindingKey { FindingKey(kind: kind, signature: signature) }
}

extension RunReport.Suite {
    /// Why the finding `key` is expected, or nil when it is new.
    public func expectation(for key: FindingKey) -> String? {
        expected?.first { $0.key == key }?.because
    }

    /// The findings that are not expected, in the order found.
    public var newFindings: [FindingRecord] {
        result.findings.filter { expectation(for: $0.finding.key) == nil }
    }

    /// Marks as expected every finding that `known` lists for this suite's target, and every
    /// finding first hit by an input of the regression store (inputs whose only mutation is
    /// `regression`: they run first, so a finding they show is theirs). A finding already
    /// marked keeps its first reason.
    public mutating func markExpected(by known: KnownFindings?) {
        var marks = expected ?? []
        func mark(_ key: FindingKey, _ because: String) {
            if !marks.contains(where: { $0.key == key }) { marks.append(ExpectedFinding(key: key, because: because)) }
        }
        for record in result.findings {
            let key = record.finding.key
            if record.finding.input.mutations == [Self.regressionMutation] {
                mark(key, "reproduced by \(record.finding.input.seedName) from the regression store")
            }
            if let entry = known?.entry(for: key, target: result.targetName) {
                mark(key, "listed in \(entry.location)")
            }
        }
        expected = marks
    }

    /// The mutation name of inputs that come from a regression store.
    public static let regressionMutation = "regression"
}
