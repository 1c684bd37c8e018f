/// Makes captured bytes and strings safe inside XML 1.0 text and attributes.
public enum XMLText {
    /// Escapes markup characters and replaces what XML 1.0 cannot hold: control characters
    /// become `\u{7}`-style escapes; `]]>` cannot survive because `>` is escaped.
    public static func escape(_ text: String, attribute: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where attribute: out += "&quot;"
            case "\n" where attribute: out += "&#10;"
            case "\t" where attribute: out += "&#9;"
            case "\r": out += "&#13;"
            case "\n", "\t": out.unicodeScalars.append(scalar)
            default:
                let v = scalar.value
                if v < 0x20 || (0x7F...0x9F).contains(v) || v == 0xFFFE || v == 0xFFFF {
                    out += "\\u{\(String(v, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// Decodes captured output: valid UTF-8 is kept, each invalid byte becomes `\xNN`.
    public static func decode(_ bytes: some Collection<UInt8>) -> String {
        let b = Array(bytes)
        var out = ""
        out.reserveCapacity(b.count)
        var i = 0
        while i < b.count {
            if let (scalar, length) = scalarAt(b, i) {
                out.unicodeScalars.append(scalar)
                i += length
            } else {
                out += "\\x" + (b[i] < 16 ? "0" : "") + String(b[i], radix: 16)
                i += 1
            }
        }
        return out
    }

    /// The well-formed UTF-8 scalar starting at `i`, with its length in bytes.
    private static func scalarAt(_ b: [UInt8], _ i: Int) -> (Unicode.Scalar, Int)? {
        let lead = b[i]
        if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
        let (length, minimum): (Int, UInt32) =
            switch lead {
            case 0xC2...0xDF: (2, 0x80)
            case 0xE0...0xEF: (3, 0x800)
            case 0xF0...0xF4: (4, 0x10000)
            default: (0, 0)
            }
        guard length > 0, i + length <= b.count else { return nil }
        var value = UInt32(lead) & (0xFF >> (length + 1))
        for k in 1..<length {
            let c = b[i + k]
            guard c & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(c & 0x3F)
        }
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }
}
