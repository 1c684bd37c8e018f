import CorruptFuzzCore

/// A binary schema as the campaign uses it: the reference validator, structure-aware
/// mutations and a generator of valid seed files.
///
/// ```swift
/// let format = try SchemaFormat(ksyPath: "Corpus/schemas/habit-tracker.ksy")
/// format.validator.validate(bytes)   // .invalid(reason: "corrupt", message: "habits[0].num_dates: 200000 exceeds max 100000")
/// ```
public struct SchemaFormat: FuzzFormat {
    public let schema: BinarySchema
    public let mutator: SchemaMutator
    public let generator: SchemaGenerator
    public let parser: SchemaParser

    public init(schema: BinarySchema, limits: SchemaGenerator.Limits = .init()) {
        self.schema = schema
        mutator = SchemaMutator(schema: schema, limits: limits)
        generator = SchemaGenerator(schema: schema, limits: limits)
        parser = SchemaParser(schema: schema)
    }

    public var fileExtension: String { schema.fileExtension }

    /// Loads a `.ksy` file.
    public init(ksyPath: String) throws(SchemaError) {
        self.init(schema: try KSYLoader.load(contentsOf: ksyPath))
    }

    /// The schema's reference validator: the first violation, with its path and reason.
    public var validator: any Validator {
        let parser = self.parser
        return ClosureValidator(name: "schema \(schema.id)") { bytes in
            guard let bytes else { return .invalid(reason: "not-found", message: "the file does not exist") }
            guard let first = parser.firstViolation(bytes) else { return .valid }
            return .invalid(reason: first.reason, message: first.description)
        }
    }

    public func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [StructuredMutation] { mutator.catalogue(of: bytes) }

    public func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> StructuredMutation? { mutator.mutate(bytes, using: &rng) }

    public func generate(using rng: inout FuzzRNG) -> [UInt8] { generator.generateFile(using: &rng) }

    public func shrinkCandidates(of bytes: [UInt8]) -> [[UInt8]] { mutator.shrinkCandidates(of: bytes) }
}
