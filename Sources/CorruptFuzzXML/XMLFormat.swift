import CorruptFuzzCore

/// XML user data as a fuzzing format.
///
/// The validator is the XSD's when one is given, else well-formedness through the safe reader;
/// the mutator is an ``XMLMutator``, generating from the XSD when the generator reads it.
public struct XMLFormat: FuzzFormat {
    public let fileExtension = "xml"
    private let schema: XMLSchemaValidator?
    public let xmlMutator: XMLMutator

    public init(schema: XMLSchemaValidator? = nil) {
        self.schema = schema
        xmlMutator = XMLMutator()
    }

    /// The format of documents valid against `xsd`: libxml2 validates inputs against it, and
    /// ``XSDGenerator`` generates valid documents from it.
    /// - Throws: ``XMLProblem`` when the schema does not compile, or uses constructs the
    ///   generator does not know.
    public init(xsd: [UInt8], name: String = "xsd", root: String? = nil) throws(XMLProblem) {
        schema = try XMLSchemaValidator(xsd: xsd, name: name)
        xmlMutator = XMLMutator(generator: try XSDGenerator(xsd: xsd, root: root))
    }

    public var mutator: (any StructureAwareMutator)? { xmlMutator }

    public var validator: any Validator {
        if let schema { return schema }
        return ClosureValidator(name: "well-formed XML") { (bytes: [UInt8]) -> Verdict in
            do throws(XMLProblem) {
                try XMLReader.checkWellFormed(bytes)
                return .valid
            } catch  where error.limitExceeded {
                // Well-formed as far as we know, but beyond what the safe reader reads.
                return .undecided("beyond the safe reader's limits: \(error.description)")
            } catch {
                return .invalid(error.violation)
            }
        }
    }
}
