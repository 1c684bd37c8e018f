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
                      string(objects[nameRef]) != nil else {
                    return "$objects[\(index)].$class: $objects[\(uid)] is not a class description"
                }
            }
        }
        return nil
    }

    static func string(_ object: BinaryPlist.Object) -> String? {
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
