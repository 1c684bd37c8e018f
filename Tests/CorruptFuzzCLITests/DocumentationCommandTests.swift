import Foundation
import Testing

/// The command blocks of README.md and Docs/*.md that run something are run as written.
///
/// The convention (Scripts/README.md): a ```` ```sh ```` block is run here, from the repository
/// root with the built products first on PATH, each command expected to exit 0 unless its line
/// ends in a comment saying `exit N`; a ```` ```shell ```` block is the set-up, run by
/// Scripts/fresh-machine-check.sh on a fresh machine (it installs packages and builds the
/// package); ```` ```console ````, ```` ```text ```` and ```` ```swift ```` blocks are not run.
@Suite("Documentation: the README's and guides' commands run as written")
struct DocumentationCommandTests {
    /// One command of a runnable block: where it is, what it says, the status it promises.
    struct Command: CustomStringConvertible {
        var file: String
        var line: Int
        var text: String
        var status: Int32
        var description: String { "\(file):\(line): \(text)" }
    }

    static var documents: [URL] {
        let docs = packageRoot.appendingPathComponent("Docs")
        let guides = ((try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []).filter { $0.hasSuffix(".md") }.sorted()
        return [packageRoot.appendingPathComponent("README.md")] + guides.map { docs.appendingPathComponent($0) }
    }

    /// The blocks fenced as `sh` in a Markdown file, each a list of commands.
    static func blocks(in url: URL) throws -> [[Command]] {
        let name = url.path.replacingOccurrences(of: packageRoot.path + "/", with: "")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [[Command]] = []
        var current: [Command]?
        var pending: (line: Int, text: String)?
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if trimmed == "```sh" { current = [] }
                continue
            }
            if trimmed.hasPrefix("```") {
                blocks.append(current ?? [])
                current = nil
                continue
            }
            if trimmed.isEmpty || (trimmed.hasPrefix("#") && pending == nil) { continue }
            var text = (pending?.text ?? "") + trimmed
            if text.hasSuffix("\\") {
                text.removeLast()
                pending = (pending?.line ?? index + 1, text)
                continue
            }
            let start = pending?.line ?? index + 1
            pending = nil
            var status: Int32 = 0
            if let comment = text.range(of: " # ") {
                let remark = text[comment.upperBound...]
                if let match = remark.range(of: #"exits? (with )?\d+"#, options: .regularExpression) {
                    status = Int32(remark[match].filter(\.isNumber)) ?? 0
                }
                text = String(text[..<comment.lowerBound]).trimmingCharacters(in: .whitespaces)
            }
            current?.append(Command(file: name, line: start, text: text, status: status))
        }
        return blocks
    }

    @Test("the README has a runnable block or a set-up block, and every guide exists as linked")
    func documentsExist() throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("```shell"), "the README's set-up commands are a ```shell block")
        // Every relative link to a file of the repository points at a file that exists.
        for document in Self.documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            let folder = document.deletingLastPathComponent()
            var rest = Substring(text)
            while let open = rest.range(of: "](") {
                let target = rest[open.upperBound...].prefix { $0 != ")" && $0 != " " }
                rest = rest[open.upperBound...]
                // An anchor in the same page (`#section`) names no file.
                guard !target.hasPrefix("#") else { continue }
                let path = target.split(separator: "#").first.map(String.init) ?? ""
                guard !path.isEmpty, !path.contains("://"), !path.hasPrefix("mailto:") else { continue }
                #expect(
                    FileManager.default.fileExists(atPath: folder.appendingPathComponent(path).path),
                    "\(document.lastPathComponent) links to \(path), which does not exist")
            }
        }
    }

    @Test("every command of every sh block runs as written and exits as its line says", arguments: documents.map(\.lastPathComponent))
    func runBlocks(document: String) throws {
        let url = Self.documents.first { $0.lastPathComponent == document }!
        for block in try Self.blocks(in: url) {
            // A block runs as one shell session, so a `cd` or a variable carries to the next line.
            var script = "set +e\n"
            for (index, command) in block.enumerated() {
                script += "\(command.text)\nprintf '\\n::status %d %d\\n' \(index) $?\n"
            }
            let result = try shell(script)
            var statuses: [Int: Int32] = [:]
            for line in result.stdout.split(separator: "\n") where line.hasPrefix("::status ") {
                let parts = line.split(separator: " ")
                if parts.count == 3, let index = Int(parts[1]), let status = Int32(parts[2]) { statuses[index] = status }
            }
            for (index, command) in block.enumerated() {
                #expect(
                    statuses[index] == command.status,
                    "\(command) exited \(statuses[index].map(String.init) ?? "never")\n\(result.stdout.suffix(3000))\n\(result.stderr.suffix(2000))")
            }
        }
    }
}
