/// A value of a ``BinarySchema``: what the parser reads, the generator draws and the encoder
/// writes. Records hold their fields' values in schema order.
public indirect enum SchemaValue: Sendable, Hashable {
    case integer(Int128)
    case float(Double)
    /// Raw bytes, string bytes (strings keep their bytes so invalid UTF-8 survives), contents.
    case bytes([UInt8])
    case array([SchemaValue])
    case record(Record)
    /// A field whose `if` did not hold.
    case absent

    /// A record's values, aligned with its type's `seq`.
    public struct Record: Sendable, Hashable {
        public var values: [SchemaValue]
        /// Fields the encoder must write as they are, without recomputing them from the data
        /// (lengths, counts and checksums that lie on purpose).
        public var pinned: Set<Int>
        /// For a `switch-on` field, the type that was chosen.
        public var typeName: String
        /// The values of the type's instances (read at offsets), in schema order.
        public var instances: [SchemaValue]
        /// The bytes after the `seq` fields that instances cover, kept as read so the encoder
        /// writes them back unchanged (it does not move data when the header changes size).
        public var tail: [UInt8]

        public init(typeName: String, values: [SchemaValue], pinned: Set<Int> = [], instances: [SchemaValue] = [], tail: [UInt8] = []) {
            self.typeName = typeName
            self.values = values
            self.pinned = pinned
            self.instances = instances
            self.tail = tail
        }
    }

    public var integer: Int128? {
        if case .integer(let v) = self { return v }
        return nil
    }
}

/// Where a field's bytes are in an encoded file.
public struct FieldSpan: Sendable, Hashable {
    /// `habits[2].name_len`.
    public var path: String
    public var start: Int
    public var end: Int
    /// The path of indices into the value tree, for mutations.
    public var location: [Int]
    /// The field's definition.
    public var isCount: Bool
    public var isLength: Bool
    public var isVersion: Bool
    public var isChecksum: Bool
    public var isString: Bool
    public var isEnum: Bool
    /// An instance's `pos` names this field.
    public var isOffset: Bool
    /// Integer fields: width, signedness and byte order.
    public var integerWidth: Int?
    public var signed: Bool
    public var bigEndian: Bool
}
