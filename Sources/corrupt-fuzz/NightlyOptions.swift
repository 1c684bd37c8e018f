import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzReporting

/// Options for runs that a CI job repeats every night: which findings are already known, the
/// regression store, and where the corpus grows to.
struct NightlyOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "A known-findings file (one 'KIND: SIGNATURE' per line, * matches any text, [TARGET] sections): findings it lists are reported as expected and do not make the exit status 1.",
            valueName: "file"))
    var knownFindings: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A regression store (e.g. Corpus/regressions): the files in its folder named after the target run first, and the findings they reproduce are expected.",
            valueName: "dir"))
    var regressions: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Save the inputs that showed new behaviour and that the validator calls valid into DIR/<target>/, to grow the corpus of the next run (merge it with merge --corpus-output).",
            valueName: "dir"))
    var corpusOutput: String?

    /// The known-findings file, read and checked.
    func readKnownFindings() throws(CorruptFuzzError) -> KnownFindings? {
        try knownFindings.map { path throws(CorruptFuzzError) in try KnownFindings(contentsOf: path) }
    }
}
