import CorruptFuzzCore

/// The deterministic stage of one keyed archive, for the rules an app adds to
/// NSKeyedUnarchiver's ("names are not empty", "a birthday is a real date", "a newer version is
/// unsupported"): for every object the archive holds, every key dropped; every string emptied,
/// made huge or replaced by `$null` (decoded as nil); every number set to one more and one less,
/// 0, -1 and the limits of its type (NaN and ±infinity for a real, the far past and future for
/// a date's `NS.time`); every Boolean flipped.
///
/// Each change touches one key of one object: a new value is appended to `$objects` and only
/// that key points at it, so a string or number the archive shares (NSKeyedArchiver writes each
/// distinct value once) changes in one place. A campaign runs it early, interleaved with the
/// layout and graph corruptions: a random graph mutation reaches one of these one time in
/// hundreds.
package struct KeyedArchiveStage {
    let plist: BinaryPlist
    let encoding: PlistEncoding
    /// The plist object holding `$objects`, and its entries (a UID is an index into them).
    let objectsRef: Int
    let table: [Int]

    /// The stage of `bytes`, or nil when they are not a keyed archive.
    package init?(_ bytes: [UInt8]) {
        guard let (plist, encoding) = try? PropertyListFile.read(bytes), KeyedArchiveChecker.problem(in: plist) == nil,
            case .dictionary(let keys, let values, _) = plist.objects[plist.topObject],
            // The last `$objects`, the one the checker read.
            let objectsKey = keys.lastIndex(where: { KeyedArchiveChecker.string(plist.objects[$0]) == "$objects" }),
            case .array(let table, _) = plist.objects[values[objectsKey]]
        else { return nil }
        self.plist = plist
        self.encoding = encoding
        self.objectsRef = values[objectsKey]
        self.table = table
    }

    /// The most entries one archive gives, spread evenly over all of them.
    static let maxEntries = 512
    /// The length of a huge string: past any field a form would let a user type.
    static let hugeLength = 1 << 20
    /// The huge string, one buffer for every entry that uses it.
    static let huge = BinaryPlist.Object.ascii(Array(repeating: 0x41, count: hugeLength), length: .natural(hugeLength))

    /// What one entry does to the archive's graph.
    private typealias Change = @Sendable (inout BinaryPlist, _ table: inout [Int]) -> Void

    /// The entries, each made when due.
    package func entries() -> [CatalogueEntry] {
        var all: [(name: String, minimumLength: Int, change: Change)] = []
        let objects = plist.objects
        for (uid, ref) in table.enumerated() {
            guard case .dictionary(let keys, let values, _) = objects[ref],
                let className = className(of: keys, values)
            else { continue }
            for (position, (keyRef, valueRef)) in zip(keys, values).enumerated() {
                guard let key = KeyedArchiveChecker.string(objects[keyRef]), key != "$class" else { continue }
                let at = "\(className)#\(uid).\(key)"
                all.append(
                    (
                        "drop-key \(at)", 0,
                        { plist, _ in
                            guard case .dictionary(var k, var v, _) = plist.objects[ref] else { return }
                            k.remove(at: position)
                            v.remove(at: position)
                            plist.objects[ref] = .dictionary(keys: k, values: v, length: .natural(k.count))
                        }
                    ))
                /// Points this key at `object`, appended to the plist (inline values) or to
                /// `$objects` behind a new UID (`referenced`).
                func set(_ label: String, _ object: BinaryPlist.Object, referenced: Bool, minimumLength: Int = 0) {
                    all.append(
                        (
                            "\(at)=\(label)", minimumLength,
                            { plist, table in
                                guard case .dictionary(let k, var v, _) = plist.objects[ref] else { return }
                                plist.objects.append(object)
                                var target = plist.objects.count - 1
                                if referenced {
                                    table.append(target)
                                    plist.objects.append(.naturalUID(UInt64(table.count - 1)))
                                    target = plist.objects.count - 1
                                }
                                v[position] = target
                                plist.objects[ref] = .dictionary(keys: k, values: v, length: .natural(k.count))
                            }
                        ))
                }
                switch objects[valueRef] {
                case .uid(let target, _) where target != 0 && Int(target) < table.count:
                    if KeyedArchiveChecker.string(objects[table[Int(target)]]) != nil {
                        set("empty", .ascii([], length: .inline), referenced: true)
                        set("huge", Self.huge, referenced: true, minimumLength: Self.hugeLength)
                    }
                    // UID 0 is `$null`: decodeObject(forKey:) gives nil where the app expects a value.
                    set("$null", .naturalUID(0), referenced: false)
                case .integer(let value, _):
                    var seen: Set<Int128> = [value]
                    // ±1 only where it does not overflow (a 16-byte integer can hold Int128's limits).
                    let neighbours = [value.addingReportingOverflow(1), value.subtractingReportingOverflow(1)].filter { !$0.overflow }.map(\.partialValue)
                    for bound in neighbours + [0, -1, Int128(Int32.max) + 1, Int128(Int64.max), Int128(Int64.min)] where seen.insert(bound).inserted {
                        set("\(bound)", .naturalInteger(bound), referenced: false)
                    }
                case .real(let value, _):
                    // ±6.4e10 seconds from 2001: the years 0 and 4000, for a date's NS.time.
                    for (label, bound) in [
                        ("0", 0.0), ("-1", -1), ("nan", .nan), ("inf", .infinity), ("-inf", -.infinity), ("far-past", -6.4e10), ("far-future", 6.4e10),
                    ] where !(bound == value) {
                        set(label, .real(bound, widthLog2: 3), referenced: false)
                    }
                case .bool(let value):
                    set("\(!value)", .bool(!value), referenced: false)
                default:
                    break
                }
            }
        }
        // An even sample of a large archive's entries, each pick one further into its stretch,
        // so that an object's four string entries are not always the same kind.
        let step = max(1, (all.count + Self.maxEntries - 1) / Self.maxEntries)
        let picks = stride(from: 0, to: all.count, by: step).enumerated().map { k, start in min(all.count - 1, start + k % step) }
        let (plist, encoding, objectsRef, table) = (self.plist, self.encoding, self.objectsRef, self.table)
        return picks.map { index in
            let (name, minimumLength, change) = all[index]
            return CatalogueEntry(name: name, minimumLength: minimumLength) {
                var copy = plist
                var entries = table
                change(&copy, &entries)
                copy.objects[objectsRef] = .array(entries, length: .natural(entries.count))
                copy.fitLayout()
                return (try? PropertyListFile.write(copy, encoding: encoding)) ?? []
            }
        }
    }

    /// The last component of the class name an instance's `$class` names (`Friend` for
    /// `FriendListLoaders.Friend`), or nil when the dictionary is no instance.
    private func className(of keys: [Int], _ values: [Int]) -> String? {
        let objects = plist.objects
        guard let c = keys.firstIndex(where: { KeyedArchiveChecker.string(objects[$0]) == "$class" }),
            case .uid(let uid, _) = objects[values[c]], Int(uid) < table.count,
            case .dictionary(let ck, let cv, _) = objects[table[Int(uid)]],
            let nameRef = zip(ck, cv).first(where: { KeyedArchiveChecker.string(objects[$0.0]) == "$classname" })?.1,
            let name = KeyedArchiveChecker.string(objects[nameRef])
        else { return nil }
        return name.split(separator: ".").last.map(String.init) ?? name
    }
}
