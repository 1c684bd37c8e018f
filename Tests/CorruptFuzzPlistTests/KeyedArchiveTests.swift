import CorruptFuzzCore
import CorruptFuzzPlist
import Foundation
import Testing

@Suite("Keyed archives: checker and mutations")
struct KeyedArchiveTests {
    @Test("real archives made by NSKeyedArchiver pass the checker")
    func realArchives() throws {
        for (name, bytes) in try binaryFiles("keyed-archives") {
            #expect(KeyedArchiveChecker.problem(in: try BinaryPlistReader.read(bytes)) == nil, "\(name)")
        }
    }

    @Test(
        "broken archives are caught with the rule they break",
        arguments: [
            ("bpylist2-invalid_uid_archive.plist", "UID"), ("bpylist2-no_objects_archive.plist", "$objects"),
            ("bpylist2-no_top_archive.plist", "$top"), ("bpylist2-no_class_name_archive.plist", "class description"),
        ])
    func brokenArchives(file: String, mentions: String) throws {
        let bytes = [UInt8](try Data(contentsOf: corpus.appendingPathComponent("plists-malformed/\(file)")))
        let problem = KeyedArchiveChecker.problem(in: try BinaryPlistReader.read(bytes))
        #expect(problem?.contains(mentions) == true, "\(problem ?? "no problem found")")
    }

    @Test("the catalogue lies in every trailer field and in the graph, and the validator sees it")
    func catalogue() throws {
        let format = PlistFormat(.keyedArchive)
        var rng = FuzzRNG(seed: 1)
        let seed = format.plistMutator.generate(using: &rng)
        #expect(format.validator.validate(seed) == .valid)
        #expect(try PropertyListSerialization.propertyList(from: Data(seed), format: nil) is [String: Any])
        let mutations = format.plistMutator.catalogue(of: seed)
        let names = Set(mutations.map(\.name))
        for expected in [
            "trailer.offsetIntSize=0", "trailer.numObjects=+1", "trailer.topObject=max", "trailer.offsetTableOffset=max", "offsets[0]+1",
            "uid[10]=out-of-range", "objects[1].length+1",
        ] {
            #expect(names.contains(expected), "\(expected) missing from \(names.sorted())")
        }
        let invalid = mutations.filter { !format.validator.validate($0.bytes).isValid }
        #expect(invalid.count * 10 >= mutations.count * 8, "\(invalid.count) of \(mutations.count) invalid")
        for _ in 0..<300 { _ = format.plistMutator.mutate(seed, using: &rng) }
    }

    @Test("type confusion reaches every object type, sets included, and nesting climbs a ladder of depths")
    func typeConfusionAndNesting() throws {
        let format = PlistFormat(.propertyList)
        var rng = FuzzRNG(seed: 3)
        let seed = format.plistMutator.generate(using: &rng)
        let names = format.plistMutator.catalogue(of: seed).map(\.name)
        let confused = Set(names.compactMap { $0.split(separator: ">").last.map(String.init) })
        for type in ["string", "integer", "real", "data", "date", "array", "dictionary", "null", "uid", "bool", "set", "utf16", "fill"] {
            #expect(confused.contains(type), "no type confusion into \(type): \(names)")
        }
        for depth in PlistMutator.nestingLadder {
            #expect(names.contains("nesting-\(depth)"), "no nesting-\(depth)")
        }
        // The documents are what they say: a chain of that many arrays, read by Foundation.
        let nested = try #require(format.plistMutator.catalogue(of: seed).first { $0.name == "nesting-257" })
        var depth = 0
        var value: Any? = try PropertyListSerialization.propertyList(from: Data(nested.bytes), format: nil)
        while let array = value as? [Any] { depth += 1; value = array.first }
        #expect(depth == 257)
    }
}

@Suite("The plist layer survives its own fuzzing")
struct PlistSelfFuzzTests {
    @Test("5,000 corrupt inputs: the reader, the checker and the mutator never trap")
    func selfFuzz() throws {
        let format = PlistFormat(.keyedArchive)
        var rng = FuzzRNG(seed: 99)
        let seeds = try binaryFiles("keyed-archives").map(\.1) + binaryFiles("plists").map(\.1).filter { $0.count < 4096 }
        for i in 0..<5_000 {
            var bytes = seeds[i % seeds.count]
            if rng.oneIn(2), let m = format.plistMutator.mutate(bytes, using: &rng) { bytes = m.bytes }
            for _ in 0..<(1 + rng.below(4)) {
                Mutator.byteLevel[rng.below(Mutator.byteLevel.count)].mutate(
                    &bytes, using: &rng, context: MutationContext(partner: seeds[rng.below(seeds.count)]))
            }
            _ = format.validator.validate(bytes)
            if i % 10 == 0 { _ = format.plistMutator.catalogue(of: bytes) }
        }
    }
}
