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

/// An NSKeyedArchiver archive of one NSDictionary whose NS.keys and NS.objects name the given
/// `$objects` entries: 1 the dictionary, 2 and 3 the keys "ka" and "kb", 4 and 5 the values
/// "va" and "vb", 6 its class; 0 is `$null`.
func dictionaryArchive(keys: [UInt64] = [2, 3], values: [UInt64] = [4, 5], fields: [String] = ["NS.keys", "NS.objects"]) -> [UInt8] {
    var objects: [BinaryPlist.Object] = [.null]
    func add(_ object: BinaryPlist.Object) -> Int {
        objects.append(object)
        return objects.count - 1
    }
    func string(_ text: String) -> Int { add(.naturalString(text)) }
    func uids(_ values: [UInt64]) -> Int { add(.array(values.map { add(.naturalUID($0)) }, length: .natural(values.count))) }
    let fieldValues = ["$class": add(.naturalUID(6)), "NS.keys": uids(keys), "NS.objects": uids(values)]
    let dictionary = add(.dictionary(keys: (["$class"] + fields).map(string), values: (["$class"] + fields).map { fieldValues[$0]! }, length: .inline))
    let classDescription = add(
        .dictionary(
            keys: [string("$classname"), string("$classes")],
            values: [string("NSDictionary"), add(.array([string("NSDictionary"), string("NSObject")], length: .inline))], length: .inline))
    let table = [string("$null"), dictionary, string("ka"), string("kb"), string("va"), string("vb"), classDescription]
    let top = add(.dictionary(keys: [string("root")], values: [add(.naturalUID(1))], length: .inline))
    objects[0] = .dictionary(
        keys: [string("$archiver"), string("$version"), string("$top"), string("$objects")],
        values: [string("NSKeyedArchiver"), add(.naturalInteger(100_000)), top, add(.array(table, length: .natural(table.count)))], length: .inline)
    var plist = BinaryPlist(objects: objects, topObject: 0)
    plist.fitLayout()
    return BinaryPlistWriter.write(plist)
}

@Suite("Keyed archives: what the sweep against NSKeyedUnarchiver fixed")
struct KeyedArchiveSweepFixTests {
    let validator = PlistFormat(.keyedArchive).validator

    func refusal(_ bytes: [UInt8]) -> String? {
        guard case .invalid(let violation) = validator.validate(bytes) else { return nil }
        return violation.message
    }

    @Test("the validator asks foundationProblem too: an NSDictionary without NS.objects, which Foundation reads as empty, is refused")
    func foundationRulesApply() throws {
        let intact = dictionaryArchive()
        #expect(validator.validate(intact) == .valid)
        let decoded = try NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(Data(intact)) as? NSDictionary
        #expect(decoded == ["ka": "va", "kb": "vb"] as NSDictionary)

        let noValues = dictionaryArchive(fields: ["NS.keys"])
        #expect(KeyedArchiveChecker.problem(in: try BinaryPlistReader.read(noValues)) == nil)
        #expect(refusal(noValues)?.contains("NS.keys and NS.objects missing") == true, "\(refusal(noValues) ?? "valid")")
    }

    @Test("a $null value of an NSDictionary is refused: Foundation on Linux crashes building the dictionary (not run here: it would take the test down)")
    func nullValue() {
        for values: [UInt64] in [[0, 5], [4, 0]] {
            #expect(refusal(dictionaryArchive(values: values)) == "$objects[1].NS.objects: a value is $null", "\(values)")
        }
    }

    @Test("a $null key of an NSDictionary is refused: Foundation drops it and pairs the keys after it with the wrong values")
    func nullKey() throws {
        let bytes = dictionaryArchive(keys: [0, 3])
        #expect(refusal(bytes) == "$objects[1].NS.keys: a key is $null")
        let decoded = try NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(Data(bytes)) as? NSDictionary
        #expect(decoded == ["kb": "va"] as NSDictionary, "\(String(describing: decoded))")
    }

    @Test("the corpus's archives, written by NSKeyedArchiver, pass the validator with its Foundation rules")
    func realArchivesPass() throws {
        let dir = corpus.appendingPathComponent("keyed-archives")
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() {
            let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
            #expect(validator.validate(bytes) == .valid, "\(name): \(refusal(bytes) ?? "")")
        }
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
