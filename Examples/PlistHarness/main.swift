// plist-harness MODE PATH: drives Foundation's own property-list code as a corrupt-fuzz target.
//   serialization  PropertyListSerialization.propertyList(from:format:)
//   unarchive      NSKeyedUnarchiver.unarchiveTopLevelObjectWithData (any class, no secure coding)
//   secure         NSKeyedUnarchiver(forReadingFrom:) with secure coding and .setErrorAndReturn
// Exit 0 and a description of the result when Foundation accepts the file; exit 1 with
// `reason: corrupt` and Foundation's error when it rejects it. Crashes are Foundation's.
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3, let data = FileManager.default.contents(atPath: arguments[2]) else {
    FileHandle.standardError.write(Data("reason: not-found\nusage: plist-harness serialization|unarchive|secure PATH\n".utf8))
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
default:
    FileHandle.standardError.write(Data("reason: usage\nunknown mode \(arguments[1])\n".utf8))
    exit(2)
}
