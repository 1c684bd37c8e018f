// xml-harness MODE PATH: drives Foundation's XMLParser (FoundationXML, on libxml2) as a
// corrupt-fuzz target.
//   default    XMLParser as an app creates it (external entities not resolved)
//   resolving  with shouldResolveExternalEntities = true
// Exit 0 with a digest (element names and text) when the parser accepts the file; exit 1 with
// `reason: corrupt` and the parser's error when it rejects it. Crashes are Foundation's.
import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif

final class Digest: NSObject, XMLParserDelegate {
    var lines: [String] = []
    var text = ""

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        flush()
        lines.append("<\(name)" + attributes.keys.sorted().map { " \($0)=\(attributes[$0]!)" }.joined() + ">")
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) { flush() }

    func flush() {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if !trimmed.isEmpty { lines.append(trimmed) }
        text = ""
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, ["default", "resolving"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("reason: usage\nusage: xml-harness default|resolving PATH\n".utf8))
    exit(2)
}
guard let data = FileManager.default.contents(atPath: arguments[2]) else {
    FileHandle.standardError.write(Data("reason: not-found\ncannot read \(arguments[2])\n".utf8))
    exit(1)
}
let parser = XMLParser(data: data)
parser.shouldResolveExternalEntities = arguments[1] == "resolving"
let digest = Digest()
parser.delegate = digest
if parser.parse() {
    print(digest.lines.joined(separator: "\n"))
} else {
    let error = parser.parserError.map { "\($0)" } ?? "unknown error"
    FileHandle.standardError.write(Data("reason: corrupt\nline \(parser.lineNumber): \(error)\n".utf8))
    exit(1)
}
