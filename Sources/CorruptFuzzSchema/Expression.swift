/// A Kaitai-style expression: integer literals, field references (`num_dates`,
/// `_parent.len`, `_root.version`), `_` (the current element), `_io.size`, `_io.pos`,
/// arithmetic, comparisons and `and`/`or`/`not`.
public indirect enum Expression: Sendable, Hashable, CustomStringConvertible {
    case literal(Int128)
    /// A dotted path: `["num_dates"]`, `["_parent", "len"]`, `["_"]`, `["_io", "size"]`.
    case reference([String])
    case unary(String, Expression)
    case binary(String, Expression, Expression)

    /// Parses `text`.
    /// - Throws: ``SchemaError`` describing where the expression is malformed.
    public init(parsing text: String) throws(SchemaError) {
        var parser = ExpressionParser(text)
        self = try parser.parseTop()
    }

    public var description: String {
        switch self {
        case .literal(let v): "\(v)"
        case .reference(let path): path.joined(separator: ".")
        case .unary(let op, let e): op == "not" ? "not \(e)" : "\(op)\(e)"
        case .binary(let op, let a, let b): "(\(a) \(op) \(b))"
        }
    }

    /// If this is a plain reference to a sibling field (`num_dates`), its name.
    public var siblingReference: String? {
        if case .reference(let path) = self, path.count == 1, !path[0].hasPrefix("_") { return path[0] }
        return nil
    }

    /// Evaluates the expression; `lookup` resolves references.
    public func evaluate(_ lookup: ([String]) -> Int128?) -> Int128? {
        switch self {
        case .literal(let v):
            return v
        case .reference(let path):
            return lookup(path)
        case .unary(let op, let e):
            guard let v = e.evaluate(lookup) else { return nil }
            switch op {
            case "-": return -v
            case "not": return v == 0 ? 1 : 0
            default: return nil
            }
        case .binary(let op, let a, let b):
            guard let x = a.evaluate(lookup), let y = b.evaluate(lookup) else { return nil }
            switch op {
            case "+": return x.addingReportingOverflow(y).overflow ? nil : x + y
            case "-": return x.subtractingReportingOverflow(y).overflow ? nil : x - y
            case "*": return x.multipliedReportingOverflow(by: y).overflow ? nil : x * y
            case "/": return y == 0 ? nil : x / y
            case "%": return y == 0 ? nil : x % y
            case "==": return x == y ? 1 : 0
            case "!=": return x != y ? 1 : 0
            case "<": return x < y ? 1 : 0
            case "<=": return x <= y ? 1 : 0
            case ">": return x > y ? 1 : 0
            case ">=": return x >= y ? 1 : 0
            case "and": return x != 0 && y != 0 ? 1 : 0
            case "or": return x != 0 || y != 0 ? 1 : 0
            default: return nil
            }
        }
    }
}

/// A precedence-climbing parser for ``Expression``.
struct ExpressionParser {
    private let text: String
    private var tokens: [String] = []
    private var index = 0
    private var tokenizeError: SchemaError?

    init(_ text: String) {
        self.text = text
        do { tokens = try Self.tokenize(text) } catch { tokenizeError = error }
    }

    private static let precedence: [String: Int] = [
        "or": 1, "and": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6,
    ]

    mutating func parseTop() throws(SchemaError) -> Expression {
        if let tokenizeError { throw tokenizeError }
        let e = try parse(minimum: 1)
        guard index == tokens.count else { throw fail("unexpected '\(tokens[index])'") }
        return e
    }

    private mutating func parse(minimum: Int) throws(SchemaError) -> Expression {
        var left = try parseUnary()
        while index < tokens.count, let p = Self.precedence[tokens[index]], p >= minimum {
            let op = tokens[index]
            index += 1
            let right = try parse(minimum: p + 1)
            left = .binary(op, left, right)
        }
        return left
    }

    private mutating func parseUnary() throws(SchemaError) -> Expression {
        guard index < tokens.count else { throw fail("unexpected end") }
        let token = tokens[index]
        index += 1
        if token == "-" { return .unary("-", try parseUnary()) }
        if token == "not" { return .unary("not", try parseUnary()) }
        if token == "(" {
            let e = try parse(minimum: 1)
            guard index < tokens.count, tokens[index] == ")" else { throw fail("missing ')'") }
            index += 1
            return e
        }
        if token == "true" { return .literal(1) }
        if token == "false" { return .literal(0) }
        if let value = Self.integer(token) { return .literal(value) }
        if let first = token.first, first.isLetter || first == "_" {
            return .reference(token.split(separator: ".").map(String.init))
        }
        throw fail("unexpected '\(token)'")
    }

    static func integer(_ token: String) -> Int128? {
        let clean = token.replacing("_", with: "")
        if clean.hasPrefix("0x") || clean.hasPrefix("0X") { return Int128(clean.dropFirst(2), radix: 16) }
        if clean.hasPrefix("0b") { return Int128(clean.dropFirst(2), radix: 2) }
        guard let first = clean.first, first.isNumber else { return nil }
        return Int128(clean)
    }

    private func fail(_ message: String) -> SchemaError {
        SchemaError("expression '\(text)': \(message)")
    }

    private static func tokenize(_ text: String) throws(SchemaError) -> [String] {
        var tokens: [String] = []
        var chars = Array(text)[...]
        while let c = chars.first {
            if c.isWhitespace { chars = chars.dropFirst(); continue }
            if c.isLetter || c.isNumber || c == "_" {
                let word = chars.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
                tokens.append(String(word))
                chars = chars.dropFirst(word.count)
                continue
            }
            let two = String(chars.prefix(2))
            if ["==", "!=", "<=", ">="].contains(two) {
                tokens.append(two)
                chars = chars.dropFirst(2)
                continue
            }
            guard "+-*/%<>()".contains(c) else { throw SchemaError("expression '\(text)': unexpected character '\(c)'") }
            tokens.append(String(c))
            chars = chars.dropFirst()
        }
        return tokens
    }
}

/// A schema that cannot be used: a YAML error, an unknown type, a malformed expression.
public struct SchemaError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
