import CorruptFuzzCore
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a ``BinaryPlist`` object graph as an XML property list in Foundation's style, so a file
/// Foundation wrote reads and writes back byte for byte:
///
/// - the header `<?xml version="1.0" encoding="UTF-8"?>`, the Apple DOCTYPE and
///   `<plist version="1.0">` on three lines, `</plist>` and a newline at the end;
/// - one element a line, indented with one tab a level, the top value at column 0;
/// - `<array/>` and `<dict/>` when empty, `<true/>` and `<false/>`;
/// - dictionary entries in table order (Foundation sorts keys when it writes; reading keeps
///   the order of the file, so this writer reproduces either);
/// - strings with only `&`, `<` and `>` escaped, everything else (quotes, carriage returns,
///   control characters) as it is;
/// - integers in decimal, UIDs as `<dict><key>CF$UID</key><integer>N</integer></dict>`;
/// - reals as C's `%.17g`, except `0.0` for either zero, `nan`, `+infinity`, `-infinity`;
/// - dates as `yyyy-MM-ddTHH:mm:ssZ` in UTC, seconds rounded down;
/// - data as base64 on lines of 76 characters less 8 per level of indentation, indented like
///   `<data>`, both capped at 8 levels, with `</data>` on its own line.
///
/// A property list is a tree in XML: an object referenced twice is written twice. A graph with
/// a cycle, a set, a null or fill object, or a non-string key has no XML form and throws, as does
/// one whose XML would exceed `maxBytes` (shared objects can make it exponentially larger than
/// the binary file).
public enum XMLPlistWriter {
    /// The three lines before the top value.
    public static let header =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n"

    /// Writes `plist` from its top object.
    /// - Throws: ``Violation`` when the graph has no XML form or its XML is larger than `maxBytes`.
    public static func write(_ plist: BinaryPlist, maxBytes: Int = 256 << 20) throws(Violation) -> [UInt8] {
        var writer = Writer(objects: plist.objects, maxBytes: maxBytes)
        return try writer.write(top: plist.topObject)
    }

    struct Writer {
        let objects: [BinaryPlist.Object]
        let maxBytes: Int
        var out: [UInt8] = Array(XMLPlistWriter.header.utf8)
        var onPath: [Bool]

        init(objects: [BinaryPlist.Object], maxBytes: Int) {
            self.objects = objects
            self.maxBytes = maxBytes
            onPath = [Bool](repeating: false, count: objects.count)
        }

        enum Work {
            case value(Int, depth: Int)
            case key(Int, depth: Int)
            case close(Int, tag: StaticString, depth: Int)
        }

        mutating func write(top: Int) throws(Violation) -> [UInt8] {
            var stack: [Work] = [.value(top, depth: 0)]
            while let work = stack.popLast() {
                switch work {
                case .close(let ref, let tag, let depth):
                    onPath[ref] = false
                    indent(depth)
                    append("</")
                    append(tag)
                    append(">\n")
                case .key(let ref, let depth):
                    guard objects.indices.contains(ref) else {
                        throw Violation(.corrupt, "xml writer: key reference \(ref) is not below \(objects.count) objects")
                    }
                    guard let text = Self.stringBytes(objects[ref]) else {
                        throw Violation(.corrupt, "xml writer: objects[\(ref)] is a dictionary key but not a string")
                    }
                    indent(depth)
                    append("<key>")
                    appendEscaped(text)
                    append("</key>\n")
                case .value(let ref, let depth):
                    guard objects.indices.contains(ref) else { throw Violation(.corrupt, "xml writer: reference \(ref) is not below \(objects.count) objects") }
                    try value(ref, depth: depth, stack: &stack)
                }
                if out.count > maxBytes {
                    throw Violation(
                        .corrupt, "xml writer: the XML form is larger than \(maxBytes) bytes (each reference to a shared object is written out in full)")
                }
            }
            append("</plist>\n")
            return out
        }

        mutating func value(_ ref: Int, depth: Int, stack: inout [Work]) throws(Violation) {
            let object = objects[ref]
            indent(depth)
            switch object {
            case .array(let refs, _):
                if refs.isEmpty {
                    append("<array/>\n")
                    return
                }
                guard !onPath[ref] else { throw Violation(.corrupt, "xml writer: objects[\(ref)] contains itself, a cycle XML cannot express") }
                onPath[ref] = true
                append("<array>\n")
                stack.append(.close(ref, tag: "array", depth: depth))
                for child in refs.reversed() { stack.append(.value(child, depth: depth + 1)) }
            case .dictionary(let keys, let values, _):
                if keys.isEmpty {
                    append("<dict/>\n")
                    return
                }
                guard keys.count == values.count else {
                    throw Violation(.corrupt, "xml writer: objects[\(ref)] has \(keys.count) keys and \(values.count) values")
                }
                guard !onPath[ref] else { throw Violation(.corrupt, "xml writer: objects[\(ref)] contains itself, a cycle XML cannot express") }
                onPath[ref] = true
                append("<dict>\n")
                stack.append(.close(ref, tag: "dict", depth: depth))
                for (key, child) in zip(keys, values).reversed() {
                    stack.append(.value(child, depth: depth + 1))
                    stack.append(.key(key, depth: depth + 1))
                }
            case .uid(let v, _):
                append("<dict>\n")
                indent(depth + 1)
                append("<key>CF$UID</key>\n")
                indent(depth + 1)
                // Foundation prints the UID as a signed 64-bit number.
                append("<integer>\(Int64(bitPattern: v))</integer>\n")
                indent(depth)
                append("</dict>\n")
            case .ascii, .utf16:
                append("<string>")
                appendEscaped(Self.stringBytes(object)!)
                append("</string>\n")
            case .integer(let v, _):
                append("<integer>\(v)</integer>\n")
            case .real(let d, _):
                append("<real>\(Self.realText(d))</real>\n")
            case .bool(let flag):
                append(flag ? "<true/>\n" : "<false/>\n")
            case .date(let t):
                guard let text = Self.dateText(t) else {
                    throw Violation(.corrupt, "xml writer: objects[\(ref)]: date \(t) is outside the years XML dates are written for")
                }
                append("<date>\(text)</date>\n")
            case .data(let bytes, _):
                append("<data>\n")
                appendBase64(bytes, depth: depth)
                indent(depth)
                append("</data>\n")
            case .set:
                throw Violation(.corrupt, "xml writer: objects[\(ref)] is a set, which XML property lists cannot hold")
            case .null:
                throw Violation(.corrupt, "xml writer: objects[\(ref)] is a null object, which XML property lists cannot hold")
            case .fill:
                throw Violation(.corrupt, "xml writer: objects[\(ref)] is a fill object, which XML property lists cannot hold")
            }
        }

        mutating func append(_ text: StaticString) {
            text.withUTF8Buffer { out.append(contentsOf: $0) }
        }

        mutating func append(_ text: String) { out.append(contentsOf: text.utf8) }

        mutating func indent(_ depth: Int) {
            out.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: depth))
        }

        mutating func appendEscaped(_ text: [UInt8]) {
            for c in text {
                switch c {
                case UInt8(ascii: "<"): append("&lt;")
                case UInt8(ascii: ">"): append("&gt;")
                case UInt8(ascii: "&"): append("&amp;")
                default: out.append(c)
                }
            }
        }

        /// Base64 lines of 76 - 8 × indentation characters, indentation capped at 8 (as
        /// CoreFoundation's writer does), each ending in a newline.
        mutating func appendBase64(_ bytes: [UInt8], depth: Int) {
            let lineIndent = min(depth, 8)
            let lineLength = 76 - 8 * lineIndent
            let encoded = Self.base64(bytes)
            var start = 0
            while start < encoded.count {
                let end = min(encoded.count, start + lineLength)
                indent(lineIndent)
                out.append(contentsOf: encoded[start..<end])
                out.append(0x0A)
                start = end
            }
        }

        static func stringBytes(_ object: BinaryPlist.Object) -> [UInt8]? {
            switch object {
            case .ascii(let bytes, _): bytes
            case .utf16(let units, _): Array(String(decoding: units, as: UTF16.self).utf8)
            default: nil
            }
        }

        static func base64(_ bytes: [UInt8]) -> [UInt8] {
            let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
            var out: [UInt8] = []
            out.reserveCapacity((bytes.count + 2) / 3 * 4)
            var k = 0
            while k + 3 <= bytes.count {
                let v = UInt32(bytes[k]) << 16 | UInt32(bytes[k + 1]) << 8 | UInt32(bytes[k + 2])
                out += [table[Int(v >> 18)], table[Int(v >> 12 & 0x3F)], table[Int(v >> 6 & 0x3F)], table[Int(v & 0x3F)]]
                k += 3
            }
            let left = bytes.count - k
            if left == 1 {
                let v = UInt32(bytes[k]) << 16
                out += [table[Int(v >> 18)], table[Int(v >> 12 & 0x3F)], UInt8(ascii: "="), UInt8(ascii: "=")]
            } else if left == 2 {
                let v = UInt32(bytes[k]) << 16 | UInt32(bytes[k + 1]) << 8
                out += [table[Int(v >> 18)], table[Int(v >> 12 & 0x3F)], table[Int(v >> 6 & 0x3F)], UInt8(ascii: "=")]
            }
            return out
        }

        /// Foundation's real text: `%.17g`, with its spellings of zero, NaN and the infinities.
        static func realText(_ d: Double) -> String {
            if d.isNaN { return "nan" }
            if d.isInfinite { return d < 0 ? "-infinity" : "+infinity" }
            if d == 0 { return "0.0" }
            var buffer = [CChar](repeating: 0, count: 48)
            let count = buffer.withUnsafeMutableBufferPointer { pointer in
                withVaList([d]) { vsnprintf(pointer.baseAddress, 48, "%.17g", $0) }
            }
            return String(decoding: buffer[0..<Int(max(0, min(count, 47)))].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// `yyyy-MM-ddTHH:mm:ssZ` of seconds since 2001-01-01 rounded down; years below 0 as
        /// `-yyy` (C's `%04d`). Nil past ±10^14 seconds (about three million years).
        static func dateText(_ t: Double) -> String? {
            guard t.isFinite, abs(t) <= 1e14 else { return nil }
            let seconds = Int64(t.rounded(.down))
            let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
            let inDay = seconds - days * 86_400
            let (year, month, day) = PlistCalendar.civil(days + PlistCalendar.referenceDay)
            func padded(_ v: Int64, _ width: Int) -> String {
                let digits = String(v.magnitude)
                let sign = v < 0 ? "-" : ""
                return sign + String(repeating: "0", count: max(0, width - sign.count - digits.count)) + digits
            }
            return
                "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(inDay / 3_600, 2)):\(padded(inDay / 60 % 60, 2)):\(padded(inDay % 60, 2))Z"
        }
    }
}
