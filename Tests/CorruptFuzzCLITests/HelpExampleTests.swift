import Foundation
import Testing

/// Every example in a subcommand's `--help` is run as printed (from the repository root, as
/// its text says) and must end as the text says: the exit status of each `(exit N)` in order,
/// the finding kinds and the count of findings it names.
@Suite("CLI: the examples in --help do what their text says")
struct HelpExampleTests {
    /// One example: the prose before it and its command, continuation lines joined.
    struct Example: CustomStringConvertible {
        var subcommand: String
        var prose: String
        var commands: [String]
        var description: String { "\(subcommand): \(commands.joined(separator: " ; "))" }
    }

    static let subcommands = ["run", "replay", "skew", "roundtrip", "crashpoints", "generate", "validate", "merge", "import"]

    /// The examples a help text holds: an `Example…:` paragraph, then indented command lines.
    static func examples(of subcommand: String) throws -> [Example] {
        let help = try corruptFuzz(["help", subcommand]).stdout
        var examples: [Example] = []
        var prose: String?
        var commands: [String] = []
        var pending = ""
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("Example") {
                prose = line
                continue
            }
            guard var text = prose else { continue }
            if line.hasPrefix("  ") {
                let part = line.trimmingCharacters(in: .whitespaces)
                if part.hasSuffix("\\") {
                    pending += part.dropLast() + " "
                } else {
                    commands.append(pending + part)
                    pending = ""
                }
            } else if line.isEmpty || line.hasPrefix("USAGE") {
                if !commands.isEmpty { examples.append(Example(subcommand: subcommand, prose: text, commands: commands)) }
                prose = nil
                commands = []
            } else if commands.isEmpty {
                text += " " + line
                prose = text
            }
        }
        return examples
    }

    /// `(exit N)` statuses in the prose, in order.
    static func statuses(in prose: String) -> [Int32] {
        var statuses: [Int32] = []
        var rest = Substring(prose)
        while let range = rest.range(of: "(exit ") {
            let digits = rest[range.upperBound...].prefix { $0.isNumber }
            if let status = Int32(digits) { statuses.append(status) }
            rest = rest[range.upperBound...]
        }
        return statuses
    }

    @Test("the help texts of run, skew, roundtrip and crashpoints have examples")
    func examplesExist() throws {
        for subcommand in ["run", "skew", "roundtrip", "crashpoints"] {
            #expect(try !Self.examples(of: subcommand).isEmpty, "\(subcommand) --help has no example")
        }
    }

    @Test("each example runs as printed, from the repository root, and ends as its text says", arguments: subcommands)
    func runExamples(subcommand: String) throws {
        for example in try Self.examples(of: subcommand) {
            let statuses = Self.statuses(in: example.prose)
            #expect(statuses.count == example.commands.count, "each command of \(example) needs its (exit N) in the text: \(example.prose)")
            for (index, command) in example.commands.enumerated() {
                #expect(command.hasPrefix("corrupt-fuzz "), "\(command)")
                let reports = try temporaryFolder("help-example")
                defer { try? FileManager.default.removeItem(at: reports) }
                let result = try shell("\(command) --reports \(reports.path)")
                if index < statuses.count {
                    #expect(result.status == statuses[index], "\(command)\n\(result.stdout)\n\(result.stderr)")
                }
                // The finding kinds the text names (as words), for an example of one command.
                for kind in ["lost-on-downgrade", "writer-corruption", "torn-state", "crash"]
                where example.commands.count == 1 && example.prose.range(of: "\\b\(kind)\\b", options: .regularExpression) != nil {
                    #expect(result.stdout.contains("\(kind):"), "\(command) reported no \(kind):\n\(result.stdout)")
                }
                if let count = example.prose.range(of: #"\d+ findings"#, options: .regularExpression) {
                    #expect(result.stdout.contains(String(example.prose[count])), "\(command)\n\(result.stdout)")
                }
            }
        }
    }
}
