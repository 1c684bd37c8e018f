/// Types that contain themselves.
///
/// A type may contain itself (a tree whose node holds a count of child nodes) as long as
/// something can end the recursion: a field on the way with an `if:`, a `repeat: expr` whose
/// count can be zero, a `repeat: eos` (no element once the stream ends), or a `switch-on` with a
/// case (or the raw bytes of an unknown value) that leads elsewhere. A type that contains itself
/// through fields that are always there has no finite value: no file can be valid, and a
/// generator or parser following it never ends. ``KSYLoader`` rejects such a schema.
///
/// Recursion that can end may still nest deep in a file (a node with one child, a million
/// times): the parser stops at ``SchemaParser/maxNesting`` records, with a violation.
extension BinarySchema {
    /// The description of a type that contains itself with nothing that can end the recursion
    /// (`types.node contains itself with nothing that can end it: node.child (type node) → node`),
    /// or nil when every type can have a finite value.
    public func unendingRecursion() -> String? {
        // The types that have a finite value, found by growing the set until it stops growing:
        // a type does when each field it always has is a type that does.
        var finite: Set<String> = []
        var grew = true
        while grew {
            grew = false
            for (name, definition) in types where !finite.contains(name) {
                if (definition.seq + definition.instances).allSatisfy({ stuck($0, finite: finite).isEmpty }) {
                    finite.insert(name)
                    grew = true
                }
            }
        }
        let endless = types.keys.filter { !finite.contains($0) }.sorted()
        guard let first = endless.first else { return nil }
        // Each endless type has a field that is always there and whose types are all endless:
        // following those leads back to a type already seen, the cycle to report.
        var path: [(type: String, field: String, next: String)] = []
        var current = first
        while !path.contains(where: { $0.type == current }) {
            guard let definition = types[current] else { return nil }
            guard let field = (definition.seq + definition.instances).first(where: { !stuck($0, finite: finite).isEmpty }),
                let next = stuck(field, finite: finite).first
            else { return nil }
            path.append((current, field.id, next))
            current = next
        }
        let cycle = path.drop { $0.type != current }
        let steps = cycle.map { "\($0.type).\($0.field) (type \($0.next))" }.joined(separator: " → ")
        return
            "types.\(current) contains itself with nothing that can end it: \(steps) → \(current), each always there;"
            + " give a field on the way an if:, a repeat that can be empty (repeat: expr with a count that can be 0, or repeat: eos),"
            + " or a switch-on case of another type"
    }

    /// The types `field` always holds when none of them is in `finite` (sorted), else none: a
    /// field with an `if:`, a repetition that can be empty, or a type with a finite value (a
    /// scalar, or a user type in `finite`) does not keep its record from ending.
    private func stuck(_ field: Field, finite: Set<String>) -> [String] {
        if field.condition != nil { return [] }
        switch field.repetition {
        case nil, .until?: break  // `until` reads at least one element
        case .count(let count)?:
            guard case .literal(let value) = count, value > 0 else { return [] }
        case .untilEnd?: return []
        }
        let options: [String]
        switch field.type {
        case .user(let name): options = [name]
        // An unknown selector value without a default type reads raw bytes.
        case .switchOn(_, let cases, let defaultType?): options = Array(Set(cases.values).union([defaultType]))
        default: return []
        }
        // A type the schema does not define is an error of its own, reported elsewhere.
        if options.contains(where: { finite.contains($0) || types[$0] == nil }) { return [] }
        return options.sorted()
    }
}
