import CorruptFuzzCore

/// A binary schema as the campaign uses it: the schema's parser as reference validator, and
/// its mutator (structure-aware mutations and a generator of valid seed files).
///
/// ```swift
/// let format = try SchemaFormat(ksyPath: "Corpus/schemas/habit-tracker.ksy")
/// format.validator.validate(bytes)   // corrupt: habits[0].num_dates: 200000 exceeds max 100000
/// ```
public struct SchemaFormat: FuzzFormat {
    public let schema: BinarySchema
    public let parser: SchemaParser
    public let schemaMutator: SchemaMutator

    public init(schema: BinarySchema, limits: SchemaGenerator.Limits = .init()) {
        self.schema = schema
        schemaMutator = SchemaMutator(schema: schema, limits: limits)
        parser = SchemaParser(schema: schema)
    }

    /// Loads a `.ksy` file.
    public init(ksyPath: String) throws(SchemaError) {
        self.init(schema: try KSYLoader.load(contentsOf: ksyPath))
    }

    public var fileExtension: String { schema.fileExtension }

    public var mutator: (any StructureAwareMutator)? { schemaMutator }

    /// The schema's reference validator: the first violation, with its path and reason. It
    /// reads a small file in less time than a campaign would take to remember its verdict.
    public var validator: any Validator {
        let parser = self.parser
        var validator = ClosureValidator(name: "schema \(schema.id)", contents: { bytes in parser.firstViolation(bytes).map(Verdict.invalid) ?? .valid })
        validator.remembersVerdicts = false
        return validator
    }
}
