/// Writes an ``XMLTree`` as UTF-8 XML with an XML declaration.
public enum XMLWriter {
    public static func write(_ tree: XMLTree) -> [UInt8] {
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        write(tree.root, into: &out)
        out += "\n"
        return Array(out.utf8)
    }

    static func write(_ element: XMLTree.Element, into out: inout String) {
        out += "<" + element.name
        for attribute in element.attributes { out += " \(attribute.name)=\"\(escape(attribute.value, quote: true))\"" }
        if element.children.isEmpty {
            out += "/>"
            return
        }
        out += ">"
        for child in element.children {
            switch child {
            case .element(let e): write(e, into: &out)
            case .text(let t):
                // An unexpanded entity reference stays a reference.
                if t.hasPrefix("&"), t.hasSuffix(";"), !t.dropFirst().dropLast().contains(where: { $0 == "&" || $0 == ";" || $0 == " " }) {
                    out += t
                } else {
                    out += escape(t, quote: false)
                }
            case .cdata(let t): out += "<![CDATA[" + t.replacing("]]>", with: "]]]]><![CDATA[>") + "]]>"
            case .comment(let t): out += "<!--" + t.replacing("--", with: "- -") + "-->"
            case .processingInstruction(let target, let data): out += "<?\(target) \(data)?>"
            }
        }
        out += "</" + element.name + ">"
    }

    static func escape(_ text: String, quote: Bool) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quote: out += "&quot;"
            case "\r": out += "&#13;"
            case "\n" where quote: out += "&#10;"
            case "\t" where quote: out += "&#9;"
            default: out.append(c)
            }
        }
        return out
    }
}
