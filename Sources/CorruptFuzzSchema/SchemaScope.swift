/// The part of the input a record reads: `start..<end`, with the read position.
struct Stream {
    var start: Int
    var end: Int
    var pos: Int
    var remaining: Int { end - pos }
}

/// Names and values in scope while evaluating expressions.
struct Scope {
    var definition: TypeDefinition
    var values: [SchemaValue?]
    var streamSize: Int
    var streamPos: Int

    func value(named name: String) -> SchemaValue? {
        guard let index = definition.seq.firstIndex(where: { $0.id == name }), index < values.count else { return nil }
        return values[index]
    }
}

/// Resolves a reference path against a stack of scopes (innermost last).
func resolve(_ path: [String], scopes: [Scope], current: SchemaValue?) -> Int128? {
    guard var scopeIndex = scopes.indices.last else { return nil }
    var rest = path[...]
    while let head = rest.first {
        switch head {
        case "_":
            guard rest.count == 1 || rest.dropFirst().first == "size" else { return nil }
            if rest.count == 2, case .bytes(let b)? = current { return Int128(b.count) }
            return current?.integer
        case "_parent": scopeIndex -= 1
        case "_root": scopeIndex = 0
        case "_io":
            guard scopeIndex >= 0, let what = rest.dropFirst().first else { return nil }
            let scope = scopes[scopeIndex]
            switch what {
            case "size": return Int128(scope.streamSize)
            case "pos": return Int128(scope.streamPos)
            case "eof": return scope.streamPos >= scope.streamSize ? 1 : 0
            default: return nil
            }
        default:
            guard scopeIndex >= 0, let value = scopes[scopeIndex].value(named: head) else { return nil }
            if rest.count == 2, rest.last == "size" {
                switch value {
                case .array(let a): return Int128(a.count)
                case .bytes(let b): return Int128(b.count)
                default: return nil
                }
            }
            return rest.count == 1 ? value.integer : nil
        }
        if scopeIndex < 0 { return nil }
        rest = rest.dropFirst()
    }
    return nil
}
