import CorruptFuzzCore

/// The scalar syntaxes of XML property lists, as Foundation reads them: integers, reals,
/// dates and base64 data.
extension XMLPlistParser {
    /// `[+-]?` then decimal digits or `0x` and hex digits; in -2^63...2^64-1.
    static func integer(_ text: [UInt8]) -> Int128? {
        var k = 0
        var negative = false
        if k < text.count, text[k] == UInt8(ascii: "-") || text[k] == UInt8(ascii: "+") {
            negative = text[k] == UInt8(ascii: "-")
            k += 1
        }
        var radix: UInt64 = 10
        if k + 1 < text.count, text[k] == UInt8(ascii: "0"), text[k + 1] | 0x20 == UInt8(ascii: "x") {
            radix = 16
            k += 2
        }
        guard k < text.count else { return nil }
        var magnitude: UInt64 = 0
        for c in text[k...] {
            let digit: UInt64
            switch c {
            case 0x30...0x39: digit = UInt64(c - 0x30)
            case 0x61...0x66 where radix == 16: digit = UInt64(c - 0x61 + 10)
            case 0x41...0x46 where radix == 16: digit = UInt64(c - 0x41 + 10)
            default: return nil
            }
            let (shifted, o1) = magnitude.multipliedReportingOverflow(by: radix)
            let (sum, o2) = shifted.addingReportingOverflow(digit)
            guard !o1, !o2 else { return nil }
            magnitude = sum
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return -Int128(magnitude)
        }
        return Int128(magnitude)
    }

    /// `nan`, `[+-]inf`, `[+-]infinity` (any case), or `[+-]?(d+(.d*)?|.d+)([eE][+-]?d+)?`.
    static func real(_ text: String) -> Double? {
        switch text.lowercased() {
        case "nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default: break
        }
        let u = Array(text.utf8)
        var k = 0
        func digits() -> Int {
            let start = k
            while k < u.count, u[k] >= 0x30, u[k] <= 0x39 { k += 1 }
            return k - start
        }
        if k < u.count, u[k] == UInt8(ascii: "+") || u[k] == UInt8(ascii: "-") { k += 1 }
        var mantissa = digits()
        if k < u.count, u[k] == UInt8(ascii: ".") {
            k += 1
            mantissa += digits()
        }
        guard mantissa > 0 else { return nil }
        if k < u.count, u[k] | 0x20 == UInt8(ascii: "e") {
            k += 1
            if k < u.count, u[k] == UInt8(ascii: "+") || u[k] == UInt8(ascii: "-") { k += 1 }
            guard digits() > 0 else { return nil }
        }
        guard k == u.count else { return nil }
        return Double(text)
    }

    /// `-?Y+-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC, year 0 exists), as seconds since
    /// 2001-01-01.
    static func date(_ text: [UInt8]) -> Double? {
        var k = 0
        var negative = false
        if k < text.count, text[k] == UInt8(ascii: "-") {
            negative = true
            k += 1
        }
        let yearStart = k
        while k < text.count, text[k] >= 0x30, text[k] <= 0x39 { k += 1 }
        let yearDigits = k - yearStart
        guard (1...9).contains(yearDigits) else { return nil }
        let year = Int64(String(decoding: text[yearStart..<k], as: UTF8.self))! * (negative ? -1 : 1)
        let rest = Array(text[k...])
        guard rest.count == 16 else { return nil }
        func two(_ at: Int) -> Int64? {
            let a = rest[at], b = rest[at + 1]
            guard a >= 0x30, a <= 0x39, b >= 0x30, b <= 0x39 else { return nil }
            return Int64(a - 0x30) * 10 + Int64(b - 0x30)
        }
        let separators: [(Int, UInt8)] = [(0, 0x2D), (3, 0x2D), (6, 0x54), (9, 0x3A), (12, 0x3A), (15, 0x5A)]
        guard separators.allSatisfy({ rest[$0.0] == $0.1 }),
            let month = two(1), let day = two(4), let hour = two(7), let minute = two(10), let second = two(13),
            (1...12).contains(month), day >= 1, day <= PlistCalendar.daysInMonth(year, month),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        let days = PlistCalendar.daysFromCivil(year, month, day) - PlistCalendar.referenceDay
        return Double(days * 86_400 + hour * 3_600 + minute * 60 + second)
    }

    /// Base64 with whitespace anywhere, padded to a multiple of four characters.
    static func base64(_ text: [UInt8]) -> Result<[UInt8], Violation> {
        var sextets: [UInt8] = []
        sextets.reserveCapacity(text.count)
        var padding = 0
        for c in text {
            if isSpace(c) { continue }
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            let value: UInt8
            switch c {
            case 0x41...0x5A: value = c - 0x41
            case 0x61...0x7A: value = c - 0x61 + 26
            case 0x30...0x39: value = c - 0x30 + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            default:
                return .failure(Violation(.corrupt, "character \"\(String(decoding: [c], as: UTF8.self).replacingControls())\" is not base64"))
            }
            guard padding == 0 else { return .failure(Violation(.corrupt, "characters after '=' padding")) }
            sextets.append(value)
        }
        guard padding <= 2, (sextets.count + padding) % 4 == 0 else {
            return .failure(Violation(.corrupt, "\(sextets.count) characters and \(padding) '=' are not whole groups of four"))
        }
        var out: [UInt8] = []
        out.reserveCapacity(sextets.count / 4 * 3 + 2)
        var k = 0
        while k + 4 <= sextets.count {
            let v = UInt32(sextets[k]) << 18 | UInt32(sextets[k + 1]) << 12 | UInt32(sextets[k + 2]) << 6 | UInt32(sextets[k + 3])
            out += [UInt8(v >> 16), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
            k += 4
        }
        let left = sextets.count - k
        if left == 2 {
            out.append(sextets[k] << 2 | sextets[k + 1] >> 4)
        } else if left == 3 {
            out.append(sextets[k] << 2 | sextets[k + 1] >> 4)
            out.append(sextets[k + 1] << 4 | sextets[k + 2] >> 2)
        }
        return .success(out)
    }
}

/// Proleptic Gregorian calendar arithmetic for plist dates (UTC; year 0 exists, as
/// Foundation's CFGregorianDate has it).
enum PlistCalendar {
    static let referenceDay = daysFromCivil(2001, 1, 1)

    static func isLeap(_ y: Int64) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    static func daysInMonth(_ y: Int64, _ m: Int64) -> Int64 {
        switch m {
        case 2: isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01.
    static func daysFromCivil(_ year: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((m + 9) % 12) + 2) / 5 + d - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day since 1970-01-01.
    static func civil(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF".utf8)
    return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
}

extension String {
    /// Control characters shown as escapes, for messages.
    func replacingControls() -> String {
        var out = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
