/// Base64 (RFC 4648, with padding) for bytes in reports, without Foundation.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(index) }
        return table
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// nil when `text` is not padded base64.
    static func decode(_ text: String) -> [UInt8]? {
        let symbols = Array(text.utf8)
        guard symbols.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(symbols.count / 4 * 3)
        var index = 0
        while index < symbols.count {
            let padding = (symbols[index + 2] == UInt8(ascii: "=") ? 1 : 0) + (symbols[index + 3] == UInt8(ascii: "=") ? 1 : 0)
            guard padding == 0 || index + 4 == symbols.count else { return nil }
            var group: UInt32 = 0
            for k in 0..<4 {
                let symbol = symbols[index + k]
                let value = k >= 4 - padding ? 0 : values[Int(symbol)]
                guard value != 0xFF else { return nil }
                group = group << 6 | UInt32(value)
            }
            out.append(UInt8(truncatingIfNeeded: group >> 16))
            if padding < 2 { out.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if padding < 1 { out.append(UInt8(truncatingIfNeeded: group)) }
            index += 4
        }
        return out
    }
}

/// Bytes that a report stores: encoded as one base64 string, not an array of numbers (a
/// report's inputs can be megabytes).
@propertyWrapper
public struct Base64Coded<Value: Base64Representable>: Sendable, Hashable, Codable {
    public var wrappedValue: Value

    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = container.decodeNil() ? nil : try container.decode(String.self)
        guard let value = Value(base64: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not base64")
        }
        wrappedValue = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let text = wrappedValue.base64 { try container.encode(text) } else { try container.encodeNil() }
    }
}

/// What ``Base64Coded`` can hold: bytes, or optional bytes.
public protocol Base64Representable: Sendable, Hashable {
    init?(base64: String?)
    var base64: String? { get }
}

extension Array: Base64Representable where Element == UInt8 {
    public init?(base64: String?) {
        guard let base64, let bytes = Base64.decode(base64) else { return nil }
        self = bytes
    }
    public var base64: String? { Base64.encode(self) }
}

extension Optional: Base64Representable where Wrapped == [UInt8] {
    public init?(base64: String?) {
        guard let base64 else {
            self = .none
            return
        }
        guard let bytes = Base64.decode(base64) else { return nil }
        self = .some(bytes)
    }
    public var base64: String? { self.map(Base64.encode) }
}
