/// Checks that a binary property list is a well-formed NSKeyedArchiver archive: the top
/// dictionary's `$archiver`, `$version`, `$top` and `$objects`, every UID in range, every
/// `$class` a class description with a `$classname`.
public enum KeyedArchiveChecker {
    /// The archiver version NSKeyedArchiver writes.
    public static let archiverVersion: Int128 = 100_000

    /// The first problem with `plist` as a keyed archive, or nil.
    public static func problem(in plist: BinaryPlist) -> String? {
        let objects = plist.objects
        guard case .dictionary(let keys, let values, _) = objects[plist.topObject] else { return "top: not a dictionary" }
        func key(_ ref: Int) -> String? { string(objects[ref]) }
        var top: [String: Int] = [:]
        for (k, v) in zip(keys, values) {
            guard let name = key(k) else { return "top: a key is not a string" }
            top[name] = v
        }
        guard let archiver = top["$archiver"] else { return "$archiver: missing" }
        guard string(objects[archiver]) == "NSKeyedArchiver" else { return "$archiver: not NSKeyedArchiver" }
        guard let version = top["$version"] else { return "$version: missing" }
        guard case .integer(let v, _) = objects[version] else { return "$version: not an integer" }
        guard v == archiverVersion else { return "$version: \(v) is not \(archiverVersion)" }
        guard let objectsRef = top["$objects"], case .array(let table, _) = objects[objectsRef] else { return "$objects: missing or not an array" }
        guard let first = table.first, string(objects[first]) == "$null" else { return "$objects[0]: not $null" }
        guard let topRef = top["$top"], case .dictionary(_, let topValues, _) = objects[topRef] else { return "$top: missing or not a dictionary" }
        for value in topValues {
            guard case .uid(let uid, _) = objects[value] else { return "$top: a value is not a UID" }
            guard uid < UInt64(table.count) else { return "$top: UID \(uid) is not below \(table.count) objects" }
        }
        // Every UID anywhere must name an $objects entry; every $class a class description.
        for (index, ref) in table.enumerated() {
            for child in uidsBelow(ref, objects) {
                guard child < UInt64(table.count) else { return "$objects[\(index)]: UID \(child) is not below \(table.count)" }
            }
            guard case .dictionary(let k, let vals, _) = objects[ref] else { continue }
            for (kk, vv) in zip(k, vals) where string(objects[kk]) == "$class" {
                guard case .uid(let uid, _) = objects[vv], uid < UInt64(table.count) else { return "$objects[\(index)].$class: not a UID in range" }
                guard case .dictionary(let ck, let cv, _) = objects[table[Int(uid)]],
                    let nameRef = zip(ck, cv).first(where: { string(objects[$0.0]) == "$classname" })?.1,
                    string(objects[nameRef]) != nil
                else {
                    return "$objects[\(index)].$class: $objects[\(uid)] is not a class description"
                }
            }
        }
        return nil
    }

    /// The text of a string object (ASCII or UTF-16), or nil for any other object.
    public static func string(_ object: BinaryPlist.Object) -> String? {
        switch object {
        case .ascii(let b, _): String(decoding: b, as: UTF8.self)
        case .utf16(let u, _): String(decoding: u, as: UTF16.self)
        default: nil
        }
    }

    /// UIDs held by the object at `ref` or its plain (non-UID) containers.
    static func uidsBelow(_ ref: Int, _ objects: [BinaryPlist.Object]) -> [UInt64] {
        var out: [UInt64] = []
        var stack = [ref]
        var seen: Set<Int> = []
        while let r = stack.popLast() {
            guard seen.insert(r).inserted else { continue }
            switch objects[r] {
            case .uid(let v, _): out.append(v)
            default: stack += objects[r].references
            }
        }
        return out
    }
}

extension KeyedArchiveChecker {
    /// Every `$classname` of the archive's class descriptions, the entries of `$objects`: what
    /// an unarchiver would be asked to instantiate. (A dictionary under a top-level key the
    /// unarchiver does not know is never read, whatever class it names.)
    public static func classNames(in plist: BinaryPlist) -> Set<String> {
        let objects = plist.objects
        guard case .dictionary(let topKeys, let topValues, _) = objects[plist.topObject],
            let tableRef = zip(topKeys, topValues).first(where: { string(objects[$0.0]) == "$objects" })?.1,
            case .array(let table, _) = objects[tableRef]
        else { return [] }
        var names: Set<String> = []
        for object in table.map({ objects[$0] }) {
            guard case .dictionary(let keys, let values, _) = object else { continue }
            for (k, v) in zip(keys, values) {
                switch string(objects[k]) {
                case "$classname":
                    if let name = string(objects[v]) { names.insert(name) }
                default:
                    break
                }
            }
        }
        return names
    }
}

extension KeyedArchiveChecker {
    /// The first place where the archive breaks what NSKeyedArchiver always writes and what
    /// Foundation's decoders assume without checking (on Linux, some of them trap): an
    /// archived object's inline values are UIDs, numbers, booleans, data or arrays of UIDs;
    /// `NSArray`/`NSMutableArray` hold `NS.objects` as an array of UIDs; `NSDate` holds
    /// `NS.time` as a real; `$objects` entries are never UIDs; a `$class` description holds
    /// `$classname` and `$classes`; collections (arrays, sets, a dictionary's keys and values)
    /// never hold `$null`. Call it after ``problem(in:)`` found nothing (the keyed-archive
    /// validator asks both).
    public static func foundationProblem(in plist: BinaryPlist) -> String? {
        let objects = plist.objects
        // Foundation on Linux crashes (SIGSEGV in an AnyHashable cast) bridging a set read from
        // an archive, wherever it is; no keyed archive holds one.
        if let index = objects.firstIndex(where: { if case .set = $0 { true } else { false } }) {
            return "objects[\(index)]: a set, which no keyed archive holds (Foundation crashes bridging it)"
        }
        // An integer of 16 bytes: NSKeyedArchiver never writes one, and Foundation would hand a
        // decoder its low 64 bits (a 4-minute campaign found one as the friend list's version,
        // which the validator called unsupported-version and the loader, rightly, corrupt).
        if let index = objects.firstIndex(where: { if case .integer(_, let widthLog2) = $0 { widthLog2 > 3 } else { false } }) {
            return "objects[\(index)]: an integer of 16 bytes, which NSKeyedArchiver never writes"
        }
        // A fill byte (0x0F) where an object is named: Foundation refuses the whole file (one
        // that nothing names is never read).
        func isFill(_ ref: Int) -> Bool { if case .fill = objects[ref] { true } else { false } }
        if isFill(plist.topObject) { return "objects[\(plist.topObject)]: a fill byte (0x0F) as the top object" }
        for (index, object) in objects.enumerated() {
            if let fill = object.references.first(where: isFill) {
                return "objects[\(index)]: names objects[\(fill)], a fill byte (0x0F) where an object belongs"
            }
        }
        // A dictionary anywhere (the top one, a class description, an archived object's
        // fields) with a key written twice: Foundation keeps one of the values without a word.
        for (index, object) in objects.enumerated() {
            guard case .dictionary(let keys, _, _) = object, keys.count > 1 else { continue }
            var names = Set<String>()
            for key in keys {
                guard let name = string(objects[key]) else { continue }
                if !names.insert(name).inserted { return "objects[\(index)]: the key \"\(name.prefix(40))\" is there twice" }
            }
        }
        guard case .dictionary(let keys, let values, _) = objects[plist.topObject],
            let objectsRef = zip(keys, values).first(where: { string(objects[$0.0]) == "$objects" })?.1,
            case .array(let table, _) = objects[objectsRef]
        else { return "$objects: missing" }
        func className(_ classRef: Int) -> String? {
            guard case .uid(let uid, _) = objects[classRef], uid < UInt64(table.count),
                case .dictionary(let ck, let cv, _) = objects[table[Int(uid)]]
            else { return nil }
            return zip(ck, cv).first(where: { string(objects[$0.0]) == "$classname" }).flatMap { string(objects[$0.1]) }
        }
        for (index, ref) in table.enumerated() {
            let here = "$objects[\(index)]"
            switch objects[ref] {
            case .uid: return "\(here): a UID where an object belongs"
            case .dictionary(let k, let v, _):
                // (Keys written twice were refused above: this counts keys that are not strings.)
                let fields = Dictionary(zip(k.compactMap { string(objects[$0]) }, v), uniquingKeysWith: { a, _ in a })
                guard fields.count == k.count else { return "\(here): a key is not a string" }
                if let classRef = fields["$class"] {
                    let name = className(classRef) ?? "?"
                    for (key, value) in fields.sorted(by: { $0.key < $1.key }) where key != "$class" {
                        switch objects[value] {
                        case .uid, .integer, .real, .bool, .data: continue
                        case .array(let refs, _):
                            guard refs.allSatisfy({ if case .uid = objects[$0] { true } else { false } }) else {
                                return "\(here).\(key): an inline array of something else than UIDs"
                            }
                        default: return "\(here).\(key): an inline value NSKeyedArchiver never writes"
                        }
                    }
                    switch name {
                    case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet":
                        guard let list = fields["NS.objects"], case .array(let elements, _) = objects[list] else {
                            return "\(here).NS.objects: missing or not an array"
                        }
                        // A collection cannot hold nil: Foundation would drop the element.
                        let holdsNull = elements.contains { if case .uid(0, _) = objects[$0] { true } else { false } }
                        guard !holdsNull else {
                            return "\(here).NS.objects: an element is $null"
                        }
                    case "NSDictionary", "NSMutableDictionary":
                        guard let ks = fields["NS.keys"], let vs = fields["NS.objects"],
                            case .array(let kr, _) = objects[ks], case .array(let vr, _) = objects[vs], kr.count == vr.count
                        else {
                            return "\(here): NS.keys and NS.objects missing, not arrays or of different lengths"
                        }
                        // Nor a nil key or value: Foundation decodes the two lists and drops the
                        // nils; with a key dropped, the keys after it get the wrong values, and
                        // with a value dropped, Foundation on Linux crashes (SIGSEGV) building the
                        // dictionary from lists of unequal lengths.
                        func isNull(_ ref: Int) -> Bool { if case .uid(0, _) = objects[ref] { true } else { false } }
                        if vr.contains(where: isNull) { return "\(here).NS.objects: a value is $null" }
                        if kr.contains(where: isNull) { return "\(here).NS.keys: a key is $null" }
                    case "NSDate":
                        guard let time = fields["NS.time"], case .real(let t, _) = objects[time], t.isFinite else {
                            return "\(here).NS.time: missing or not a finite real"
                        }
                    default: break
                    }
                } else if fields["$classname"] != nil {
                    guard let name = fields["$classname"], string(objects[name]) != nil else { return "\(here).$classname: not a string" }
                    guard let classes = fields["$classes"], case .array(let list, _) = objects[classes],
                        list.allSatisfy({ string(objects[$0]) != nil })
                    else { return "\(here).$classes: missing or not an array of strings" }
                }
            default: continue
            }
        }
        return nil
    }
}
