import CorruptFuzzCore
import CorruptFuzzSchema
import Testing

@Suite("Binary schemas: types that contain themselves")
struct SchemaRecursionTests {
    static let header = "meta: {id: recursive}\nseq:\n  - id: head\n    type: node\ntypes:\n"

    @Test(
        "a type that contains itself through fields always there is an error at load, naming the cycle",
        arguments: [
            // Directly, with nothing else in it: a parse would never move.
            (
                "  node:\n    seq:\n      - id: child\n        type: node",
                "types.node contains itself with nothing that can end it: node.child (type node) → node"
            ),
            // Directly, behind a byte.
            ("  node:\n    seq:\n      - id: tag\n        type: u1\n      - id: child\n        type: node", "node.child (type node) → node"),
            // Through another type.
            (
                "  node:\n    seq:\n      - id: wrap\n        type: wrapper\n  wrapper:\n    seq:\n      - id: inner\n        type: node",
                "types.node contains itself with nothing that can end it: node.wrap (type wrapper) → wrapper.inner (type node) → node"
            ),
            // A repeat that always reads an element ends nothing.
            ("  node:\n    seq:\n      - id: kids\n        type: node\n        repeat: expr\n        repeat-expr: 2", "node.kids (type node) → node"),
            ("  node:\n    seq:\n      - id: kids\n        type: node\n        repeat: until\n        repeat-until: 1", "node.kids (type node) → node"),
            // A switch-on whose every case and default lead back.
            (
                "  node:\n    seq:\n      - id: k\n        type: u1\n      - id: body\n        type:\n          switch-on: k\n          cases:\n            1: node\n            _: node",
                "node.body (type node) → node"
            ),
        ])
    func unending(types: String, message: String) {
        #expect {
            try KSYLoader.load(yaml: Self.header + types)
        } throws: { error in
            (error as? SchemaError)?.message.contains(message) == true
        }
    }

    @Test(
        "a type that contains itself with something that can end it loads",
        arguments: [
            "  node:\n    seq:\n      - id: more\n        type: u1\n      - id: next\n        type: node\n        if: more != 0",
            "  node:\n    seq:\n      - id: count\n        type: u1\n      - id: kids\n        type: node\n        repeat: expr\n        repeat-expr: count",
            "  node:\n    seq:\n      - id: kids\n        type: node\n        repeat: eos",
            "  node:\n    seq:\n      - id: k\n        type: u1\n      - id: body\n        type:\n          switch-on: k\n          cases:\n            1: node",
            "  node:\n    seq:\n      - id: k\n        type: u1\n      - id: body\n        type:\n          switch-on: k\n          cases:\n            1: node\n            _: leaf\n  leaf:\n    seq:\n      - id: v\n        type: u1",
        ])
    func ending(types: String) throws {
        _ = try KSYLoader.load(yaml: Self.header + types)
    }

    static let tree = try! KSYLoader.load(
        yaml: header
            + "  node:\n    seq:\n      - id: count\n        type: u1\n      - id: kids\n        type: node\n        repeat: expr\n        repeat-expr: count")

    @Test("a file nested deeper than the parser reads is a violation, never a stack overflow")
    func deepFile() throws {
        let parser = SchemaParser(schema: Self.tree)
        // Each node has one child, a million deep: each level a record of its own.
        let deep = [UInt8](repeating: 1, count: 1_000_000) + [0]
        let violation = try #require(parser.firstViolation(deep))
        #expect(violation.message.contains("records nested deeper than \(SchemaParser.maxNesting)"), "\(violation)")
        #expect(parser.parse(deep).violations.last?.message.contains("nested deeper") == true)
        // As deep as allowed, it is valid (the root's node is the second record).
        let allowed = [UInt8](repeating: 1, count: SchemaParser.maxNesting - 2) + [0]
        #expect(parser.firstViolation(allowed) == nil)
        #expect(parser.parse(allowed).violations.isEmpty)
        #expect(parser.firstViolation(allowed.dropLast() + [1, 0]) != nil)
    }

    @Test("generated files of a tree end in leaves and are valid, however deep the generator goes")
    func generatedTrees() {
        let parser = SchemaParser(schema: Self.tree)
        for depth in [1, 2, 3, 8] {
            let generator = SchemaGenerator(schema: Self.tree, limits: .init(maxElements: 3, maxBytes: 8, maxDepth: depth))
            var rng = FuzzRNG(seed: 11)
            for _ in 0..<50 {
                let file = generator.generateFile(using: &rng)
                #expect(parser.firstViolation(file) == nil, "max depth \(depth): \(file)")
            }
        }
    }
}
