// plist-harness MODE PATH: drives Foundation's own property-list code as a corrupt-fuzz target.
//   serialization  PropertyListSerialization.propertyList(from:format:)
//   unarchive      NSKeyedUnarchiver.unarchiveTopLevelObjectWithData (any class, no secure coding)
//   secure         NSKeyedUnarchiver(forReadingFrom:) with secure coding and .setErrorAndReturn
//   digest         PropertyListSerialization's reading as canonical text, the same text
//                  Examples/RealTargets/plistlib-roundtrip.py prints for Python's plistlib
//   resave PATH OUT  read, then write OUT in the format read (binary stays binary)
//   archive SEED COUNT FOLDER  NSKeyedArchiver's archives of COUNT random graphs of NSArray,
//                  NSDictionary, NSString, NSNumber, NSDate and NSData, each binary and XML
//                  (FOLDER/N.binary.plist, FOLDER/N.xml.plist); the same files for a seed only
//                  with SWIFT_DETERMINISTIC_HASHING=1 (dictionaries are written in hash order)
// Exit 0 and a description of the result when Foundation accepts the file; exit 1 with
// `reason: corrupt` and Foundation's error when it rejects it. Crashes are Foundation's.
import Foundation

let arguments = CommandLine.arguments
if arguments.count == 5, arguments[1] == "archive", let seed = UInt64(arguments[2]), let count = Int(arguments[3]) {
    archiveRandomGraphs(seed: seed, count: count, folder: arguments[4])
    exit(0)
}
guard arguments.count == 3 || arguments.count == 4 && arguments[1] == "resave",
    let data = FileManager.default.contents(atPath: arguments[2])
else {
    FileHandle.standardError.write(
        Data("reason: not-found\nusage: plist-harness serialization|unarchive|secure|digest PATH | resave PATH OUT | archive SEED COUNT FOLDER\n".utf8))
    exit(1)
}
func reject(_ error: any Error) -> Never {
    FileHandle.standardError.write(Data("reason: corrupt\n\(error)\n".utf8))
    exit(1)
}
switch arguments[1] {
case "serialization":
    do {
        let value = try PropertyListSerialization.propertyList(from: data, format: nil)
        print(type(of: value))
    } catch { reject(error) }
case "unarchive":
    do {
        let value = try NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(data)
        print(value.map { "\(type(of: $0))" } ?? "nil")
    } catch { reject(error) }
case "secure":
    do {
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        let value = unarchiver.decodeObject(
            of: [NSArray.self, NSDictionary.self, NSString.self, NSNumber.self, NSDate.self, NSData.self], forKey: NSKeyedArchiveRootObjectKey)
        if let error = unarchiver.error { reject(error) }
        print(value.map { "\(type(of: $0))" } ?? "nil")
    } catch { reject(error) }
case "digest":
    do {
        var lines: [String] = []
        describe(try PropertyListSerialization.propertyList(from: data, format: nil), at: "$", into: &lines)
        print(lines.joined(separator: "\n"))
    } catch { reject(error) }
case "resave":
    do {
        var format = PropertyListSerialization.PropertyListFormat.binary
        let value = try PropertyListSerialization.propertyList(from: data, format: &format)
        let written = try PropertyListSerialization.data(fromPropertyList: value, format: format, options: 0)
        try written.write(to: URL(fileURLWithPath: arguments[3]), options: .atomic)
    } catch { reject(error) }
default:
    FileHandle.standardError.write(Data("reason: usage\nunknown mode \(arguments[1])\n".utf8))
    exit(2)
}

// MARK: - Archives of random Foundation graphs (archive)

/// SplitMix64: the same graphs for a seed on every platform.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// A random graph of the classes Foundation decodes without app code; a string is sometimes
/// used twice (NSKeyedArchiver archives it once and names it twice).
func randomObject(_ rng: inout SplitMix, depth: Int, shared: inout [NSString]) -> NSObject {
    let pool = Array("abcxyz é✓水🧘 <&>")
    switch rng.below(depth > 3 ? 7 : 9) {
    case 0: return NSNumber(value: Int64(bitPattern: rng.next()) >> rng.below(64))
    case 1: return NSNumber(value: Double(rng.below(1_000_000)) / 7 - 70_000)
    case 2: return NSNumber(value: rng.below(2) == 0)
    case 3:
        if !shared.isEmpty, rng.below(4) == 0 { return shared[rng.below(shared.count)] }
        let string = NSString(string: String((0..<rng.below(20)).map { _ in pool[rng.below(pool.count)] }))
        shared.append(string)
        return string
    case 4: return NSData(data: Data((0..<rng.below(40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
    case 5: return NSDate(timeIntervalSinceReferenceDate: Double(rng.below(2_000_000_000)) - 1e9)
    case 6: return NSNumber(value: Int32(truncatingIfNeeded: rng.next()))
    default: return randomContainer(&rng, depth: depth, shared: &shared)
    }
}

/// An array or a dictionary (string keys) of random objects.
func randomContainer(_ rng: inout SplitMix, depth: Int, shared: inout [NSString]) -> NSObject {
    let count = rng.below(6)
    let values = (0..<count).map { _ in randomObject(&rng, depth: depth + 1, shared: &shared) }
    guard rng.below(2) == 0 else { return NSArray(array: values) }
    return NSDictionary(objects: values, forKeys: (0..<count).map { NSString(string: "k\($0)-\(rng.below(100))") })
}

func archiveRandomGraphs(seed: UInt64, count: Int, folder: String) {
    var rng = SplitMix(state: seed)
    for index in 0..<count {
        var shared: [NSString] = []
        // Mostly a container at the top, as an app's document is.
        let root = rng.below(4) == 0 ? randomObject(&rng, depth: 0, shared: &shared) : randomContainer(&rng, depth: 0, shared: &shared)
        for (name, format) in [("binary", PropertyListSerialization.PropertyListFormat.binary), ("xml", .xml)] {
            let archiver = NSKeyedArchiver(requiringSecureCoding: false)
            archiver.outputFormat = format
            archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
            archiver.finishEncoding()
            do {
                try archiver.encodedData.write(to: URL(fileURLWithPath: folder).appendingPathComponent("\(index).\(name).plist"))
            } catch {
                FileHandle.standardError.write(Data("reason: io\n\(error)\n".utf8))
                exit(1)
            }
        }
    }
}

// MARK: - The canonical text of a property list (as plistlib-roundtrip.py prints it)

/// A string with backslash, control characters and DEL escaped.
func text(_ string: String) -> String {
    var out = ""
    for scalar in string.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// Python's repr of a float: `0.5`, `1e+100`, `inf`, `nan`.
func realText(_ value: Double) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value > 0 ? "inf" : "-inf" }
    return "\(value)"
}

func describe(_ value: Any, at path: String, into lines: inout [String]) {
    switch value {
    case let dictionary as [String: Any]:
        lines.append("\(path) = dict \(dictionary.count)")
        // Code-point order, as Python sorts strings.
        for key in dictionary.keys.sorted(by: { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }) {
            describe(dictionary[key]!, at: "\(path).\(text(key))", into: &lines)
        }
    case let array as [Any]:
        lines.append("\(path) = array \(array.count)")
        for (index, element) in array.enumerated() { describe(element, at: "\(path)[\(index)]", into: &lines) }
    case let bool as Bool where type(of: value) == Bool.self:
        lines.append("\(path) = bool \(bool)")
    case let number as NSNumber:
        switch String(cString: number.objCType) {
        case "d", "f": lines.append("\(path) = real \(realText(number.doubleValue))")
        case "Q": lines.append("\(path) = integer \(number.uint64Value)")
        default: lines.append("\(path) = integer \(number.int64Value)")
        }
    case let string as String:
        lines.append("\(path) = string \(text(string))")
    case let data as Data:
        lines.append("\(path) = data \(data.map { String(format: "%02x", $0) }.joined())")
    case let date as Date:
        lines.append("\(path) = date \(realText(date.timeIntervalSinceReferenceDate))")
    default:
        // NSKeyedArchiver's UIDs: Foundation keeps the number in a stored property `value`.
        if String(describing: type(of: value)).contains("KeyedArchiverUID"),
            let number = Mirror(reflecting: value).children.first(where: { $0.label == "value" })?.value
        {
            lines.append("\(path) = uid \(number)")
        } else {
            lines.append("\(path) = \(type(of: value)) \(value)")
        }
    }
}
