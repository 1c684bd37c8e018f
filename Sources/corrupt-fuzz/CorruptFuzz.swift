import ArgumentParser
import Foundation

/// The `corrupt-fuzz` command: proves that user-data loaders survive corrupt files.
@main
struct CorruptFuzz: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "corrupt-fuzz",
        abstract: "Feeds corrupt user-data files to a loader and reports crashes, hangs, memory blow-ups, silent acceptance and wrong reasons.",
        discussion: """
            Exit status: 0 no findings, 1 findings, 2 usage or configuration error.
            Run `corrupt-fuzz run` with no arguments for the bundled demo.
            """,
        version: "0.1.0",
        subcommands: [
            RunCommand.self, ReplayCommand.self, SkewCommand.self, RoundTripCommand.self, CrashPointsCommand.self, GenerateCommand.self, ValidateCommand.self,
            MergeCommand.self, ImportCommand.self,
        ],
        defaultSubcommand: RunCommand.self
    )

    /// Runs the command, mapping usage errors to exit status 2 as grep and diff do.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
