import Foundation

/// Swift symbol names as a crash report shows them: `parse(from:at:)`, `Loader.load(_:)`,
/// `closure #1 in serve()`, from a mangled name (`$s4main6LoaderC4loadyySSF`) through the Swift
/// runtime's own demangler, shortened as Swift's backtracer shortens them (no module, no
/// parameter types, no return type). Any other name (C, demangled C++) is returned as it is.
public enum SwiftSymbolName {
    /// The readable form of `name`.
    public static func readable(_ name: String) -> String {
        guard name.hasPrefix("$s") || name.hasPrefix("_$s") || name.hasPrefix("$S") || name.hasPrefix("_T0") else { return name }
        guard let full = demangle(name) else { return name }
        return simplified(full)
    }

    /// The Swift runtime's full demangling (`main.Loader.load(Swift.String) -> ()`), nil when
    /// the name is not one it knows.
    public static func demangle(_ name: String) -> String? {
        let utf8 = Array(name.utf8)
        guard
            let text = utf8.withUnsafeBufferPointer({ buffer in
                buffer.withMemoryRebound(to: CChar.self) { _swift_demangle($0.baseAddress, buffer.count, nil, nil, 0) }
            })
        else { return nil }
        defer { free(text) }
        let result = String(cString: text)
        return result == name ? nil : result
    }

    /// `main.Loader.load(from: Swift.String, _: Swift.Int) throws -> ()` as `Loader.load(from:_:)`.
    static func simplified(_ full: String) -> String {
        // "closure #1 (Swift.Int) -> () in main.serve() -> ()": each part on its own.
        let parts = split(full, on: " in ")
        if parts.count > 1 {
            return parts.map { part in
                // "closure #1 (Foundation.Data) throws -> ()": the closure's number is its name.
                for kind in ["implicit closure #", "closure #"] where part.hasPrefix(kind) {
                    return kind + part.dropFirst(kind.count).prefix(while: \.isNumber)
                }
                return simplified(part)
            }.joined(separator: " in ")
        }
        var text = Substring(full)
        var prefix = ""
        // "merged generic specialization <Swift.Int> of Swift.Array.subscript.getter …" →
        // "specialized Array.subscript.getter".
        var changed = true
        while changed {
            changed = false
            for marker in ["generic specialization ", "function signature specialization ", "generic partial specialization "] {
                guard text.hasPrefix(marker), let of = text.firstRange(of: " of ") else { continue }
                text = text[of.upperBound...]
                if !prefix.hasPrefix("specialized") { prefix = "specialized " + prefix }
                changed = true
            }
            for marker in ["merged ", "outlined copy of ", "outlined consume of "] where text.hasPrefix(marker) {
                text = text.dropFirst(marker.count)
                changed = true
            }
            for marker in ["partial apply for ", "partial apply forwarder for ", "reabstraction thunk helper from "] where text.hasPrefix(marker) {
                prefix += marker.replacingOccurrences(of: " forwarder", with: "")
                text = text.dropFirst(marker.count)
                changed = true
            }
        }
        // An accessor's type: "Swift.Array.subscript.getter : (Swift.Int) -> A".
        if let colon = topLevelRange(of: " : ", in: text) { text = text[..<colon.lowerBound] }
        // The return type and effects.
        if let arrow = topLevelRange(of: " -> ", in: text) { text = text[..<arrow.lowerBound] }
        for effect in [" throws", " async", " rethrows"] where text.hasSuffix(effect) { text = text.dropLast(effect.count) }
        // "(Swift.Int, from: main.Data)" → "(_:from:)".
        var result = ""
        var index = text.startIndex
        var parameters = false
        while index < text.endIndex {
            let character = text[index]
            if character == "(", !parameters, let close = matching(in: text, from: index) {
                let inner = text[text.index(after: index)..<close]
                // "(Loader in _ABC123…)", a private declaration's discriminator: the name alone.
                if let privateName = inner.firstRange(of: " in _") {
                    result += inner[..<privateName.lowerBound]
                    index = text.index(after: close)
                    continue
                }
                let labels = split(String(inner), on: ", ").filter { !$0.isEmpty }.map { parameter -> String in
                    let label = parameter.prefix { $0 != ":" && $0 != " " && $0 != "." && $0 != "<" && $0 != "[" && $0 != "(" }
                    return parameter.dropFirst(label.count).hasPrefix(": ") && !label.isEmpty ? "\(label):" : "_:"
                }
                result += "(" + labels.joined() + ")"
                index = text.index(after: close)
                parameters = true
                continue
            }
            result.append(character)
            index = text.index(after: index)
        }
        // The module: the first component of a qualified name ("main.Loader.load(_:)").
        let head = result.prefix { $0 != "(" && $0 != "<" && $0 != " " }
        if head.contains("."), let dot = head.firstIndex(of: ".") {
            result = String(result[result.index(after: dot)...])
        }
        return prefix + result
    }

    /// The ranges between `separator`s of `text` outside brackets of any kind.
    private static func split(_ text: String, on separator: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(text)
        while let range = topLevelRange(of: separator, in: rest) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }

    private static func topLevelRange(of separator: String, in text: Substring) -> Range<Substring.Index>? {
        var depth = 0
        var index = text.startIndex
        while index < text.endIndex {
            switch text[index] {
            case "(", "[", "<": depth += 1
            case ")", "]", ">": depth = max(0, depth - 1)
            default:
                if depth == 0, text[index...].hasPrefix(separator) {
                    return index..<text.index(index, offsetBy: separator.count)
                }
            }
            // "->" is no closing bracket.
            if text[index] == "-", text.index(after: index) < text.endIndex, text[text.index(after: index)] == ">" {
                index = text.index(index, offsetBy: 2)
                continue
            }
            index = text.index(after: index)
        }
        return nil
    }

    private static func matching(in text: Substring, from open: Substring.Index) -> Substring.Index? {
        var depth = 0
        var index = open
        while index < text.endIndex {
            switch text[index] {
            case "(", "[": depth += 1
            case ")", "]":
                depth -= 1
                if depth == 0 { return index }
            case "-":
                // "->" inside: skip the ">".
                let next = text.index(after: index)
                if next < text.endIndex, text[next] == ">" { index = next }
            default: break
            }
            index = text.index(after: index)
        }
        return nil
    }
}

/// The Swift runtime's demangler (exported C API, as used by Swift's own tools): the demangled
/// name in memory from `malloc` when `outputBuffer` is nil; `flags` must be 0.
@_silgen_name("swift_demangle")
private func _swift_demangle(
    _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?
