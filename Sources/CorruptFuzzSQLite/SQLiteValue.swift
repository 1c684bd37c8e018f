/// One value of a SQLite row, in SQLite's five storage classes.
public enum SQLiteValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The storage class as `typeof()` names it: `null`, `integer`, `real`, `text`, `blob`.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }

    /// A short rendering for messages: `42`, `'Groceries'`, `x'00ff'` (long values cut).
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let text):
            let cut = text.count > 40 ? String(text.prefix(40)) + "…" : text
            return "'" + cut.replacing("'", with: "''") + "'"
        case .blob(let bytes):
            let hex = bytes.prefix(16).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
            return "x'" + hex + (bytes.count > 16 ? "…" : "") + "' (\(bytes.count) bytes)"
        }
    }
}
