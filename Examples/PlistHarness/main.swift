// plist-harness MODE PATH: drives Foundation's own property-list code as a corrupt-fuzz target.
//   serialization  PropertyListSerialization.propertyList(from:format:)
//   unarchive      NSKeyedUnarchiver.unarchiveTopLevelObjectWithData (any class, no secure coding)
//   secure         NSKeyedUnarchiver(forReadingFrom:) with secure coding and .setErrorAndReturn
//   digest         PropertyListSerialization's reading as canonical text, the same text
//                  Examples/RealTargets/plistlib-roundtrip.py prints for Python's plistlib
//   resave PATH OUT  read, then write OUT in the format read (binary stays binary)
// Exit 0 and a description of the result when Foundation accepts the file; exit 1 with
// `reason: corrupt` and Foundation's error when it rejects it. Crashes are Foundation's.
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4 && arguments[1] == "resave",
    let data = FileManager.default.contents(atPath: arguments[2])
else {
    FileHandle.standardError.write(Data("reason: not-found\nusage: plist-harness serialization|unarchive|secure|digest PATH | resave PATH OUT\n".utf8))
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
