import CorruptFuzzCore
import CorruptFuzzXML
import Foundation
import Testing

let notesXSD = try! [UInt8](
    Data(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Corpus/schemas/notes.xsd")))

/// A richer app document: named and anonymous types, choice, nested sequences, group,
/// complexContent extension, enumerations, numeric and length facets, optional and required
/// attributes, dates, booleans, mixed content, a namespace.
let libraryXSD = Array(
    #"""
    <?xml version="1.0" encoding="UTF-8"?>
    <xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:example:library"
               xmlns:lib="urn:example:library" elementFormDefault="qualified">
      <xs:simpleType name="Rating">
        <xs:restriction base="xs:integer"><xs:minInclusive value="1"/><xs:maxInclusive value="5"/></xs:restriction>
      </xs:simpleType>
      <xs:simpleType name="Code">
        <xs:restriction base="xs:string"><xs:minLength value="2"/><xs:maxLength value="8"/></xs:restriction>
      </xs:simpleType>
      <xs:complexType name="Item">
        <xs:sequence>
          <xs:element name="title" type="xs:string"/>
          <xs:element name="added" type="xs:date"/>
        </xs:sequence>
        <xs:attribute name="id" type="xs:ID" use="required"/>
        <xs:attribute name="rating" type="lib:Rating"/>
      </xs:complexType>
      <xs:complexType name="Book">
        <xs:complexContent>
          <xs:extension base="lib:Item">
            <xs:sequence>
              <xs:element name="isbn" type="lib:Code" minOccurs="0"/>
              <xs:element name="pages" type="xs:positiveInteger"/>
            </xs:sequence>
            <xs:attribute name="lent" type="xs:boolean" use="optional"/>
          </xs:extension>
        </xs:complexContent>
      </xs:complexType>
      <xs:group name="Extras">
        <xs:sequence>
          <xs:element name="note" minOccurs="0" maxOccurs="3">
            <xs:complexType mixed="true">
              <xs:sequence><xs:element name="em" type="xs:token" minOccurs="0" maxOccurs="2"/></xs:sequence>
            </xs:complexType>
          </xs:element>
        </xs:sequence>
      </xs:group>
      <xs:element name="library">
        <xs:complexType>
          <xs:sequence>
            <xs:element name="owner">
              <xs:complexType>
                <xs:simpleContent>
                  <xs:extension base="xs:string">
                    <xs:attribute name="since" type="xs:dateTime" use="required"/>
                  </xs:extension>
                </xs:simpleContent>
              </xs:complexType>
            </xs:element>
            <xs:choice minOccurs="0" maxOccurs="unbounded">
              <xs:element name="book" type="lib:Book"/>
              <xs:element name="disc">
                <xs:complexType>
                  <xs:complexContent>
                    <xs:extension base="lib:Item">
                      <xs:attribute name="format" use="required">
                        <xs:simpleType>
                          <xs:restriction base="xs:string">
                            <xs:enumeration value="CD"/><xs:enumeration value="DVD"/><xs:enumeration value="Blu-ray"/>
                          </xs:restriction>
                        </xs:simpleType>
                      </xs:attribute>
                    </xs:extension>
                  </xs:complexContent>
                </xs:complexType>
              </xs:element>
            </xs:choice>
            <xs:group ref="lib:Extras"/>
            <xs:element name="stats" minOccurs="0">
              <xs:complexType>
                <xs:all>
                  <xs:element name="count" type="xs:unsignedShort"/>
                  <xs:element name="ratio" type="xs:decimal"/>
                  <xs:element name="checked" type="xs:time"/>
                </xs:all>
              </xs:complexType>
            </xs:element>
          </xs:sequence>
          <xs:attribute name="version" use="required">
            <xs:simpleType>
              <xs:restriction base="xs:unsignedByte"><xs:maxExclusive value="3"/></xs:restriction>
            </xs:simpleType>
          </xs:attribute>
        </xs:complexType>
      </xs:element>
    </xs:schema>
    """#.utf8)

@Suite("XSD generation: documents valid against their schema, that round-trip")
struct XSDGeneratorTests {
    @Test(
        "3,000 documents from each schema validate with libxml2 and round-trip through the reader and writer",
        arguments: [
            "notes.xsd", "library (namespaces, choice, group, extension, facets)",
        ])
    func validAndRoundTrip(name: String) throws {
        let xsd = name == "notes.xsd" ? notesXSD : libraryXSD
        let generator = try XSDGenerator(xsd: xsd)
        let validator = try XMLSchemaValidator(xsd: xsd)
        var rng = FuzzRNG(seed: 3)
        var elements = 0
        for round in 0..<3000 {
            let tree = generator.generate(using: &rng)
            let bytes = XMLWriter.write(tree)
            let problems = validator.problems(in: bytes)
            #expect(problems.isEmpty, "\(name) round \(round): \(problems.first.map { "\($0)" } ?? "")\n\(String(decoding: bytes, as: UTF8.self))")
            let reread = try XMLReader.read(bytes)
            #expect(reread == tree, "\(name) round \(round)")
            #expect(XMLWriter.write(reread) == bytes, "\(name) round \(round)")
            elements += bytes.count(where: { $0 == UInt8(ascii: "<") })
            if !problems.isEmpty || reread != tree { break }
        }
        #expect(elements > 3000 * 3, "documents are not trivially small")
    }

    @Test("the generator reaches every option: choices, optional attributes, enumeration values and facet bounds")
    func coverage() throws {
        let generator = try XSDGenerator(xsd: libraryXSD)
        var rng = FuzzRNG(seed: 9)
        var text = ""
        for _ in 0..<300 { text += String(decoding: XMLWriter.write(generator.generate(using: &rng)), as: UTF8.self) }
        for needle in [
            "<book", "<disc", #"format="Blu-ray""#, #"rating="5""#, #"rating="1""#, "lent=", "<isbn>", "<note", "<em>",
            "<stats>", #"version="2""#, #"version="0""#, #"xmlns="urn:example:library""#,
        ] {
            #expect(text.contains(needle), "never generated \(needle)")
        }
    }

    @Test("a fixed seed gives the same documents twice")
    func fixedSeed() throws {
        let generator = try XSDGenerator(xsd: libraryXSD)
        func documents(_ seed: UInt64) -> [[UInt8]] {
            var rng = FuzzRNG(seed: seed)
            return (0..<50).map { _ in XMLWriter.write(generator.generate(using: &rng)) }
        }
        #expect(documents(7) == documents(7))
        #expect(documents(7) != documents(8))
    }

    @Test(
        "a construct outside the subset is refused with its name and path",
        arguments: [
            (#"<xs:simpleType name="Zip"><xs:restriction base="xs:string"><xs:pattern value="[0-9]{5}"/></xs:restriction></xs:simpleType>"#, "xs:pattern"),
            (#"<xs:complexType name="Open"><xs:sequence><xs:any/></xs:sequence></xs:complexType>"#, "xs:any"),
            (#"<xs:import namespace="urn:other" schemaLocation="other.xsd"/>"#, "xs:import"),
        ])
    func refused(fragment: String, construct: String) {
        let xsd = Array(#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">\#(fragment)<xs:element name="r" type="xs:string"/></xs:schema>"#.utf8)
        #expect {
            _ = try XSDGenerator(xsd: xsd)
        } throws: { error in
            "\(error)".contains(construct) && "\(error)".contains("unsupported")
        }
    }

    @Test("XMLFormat(xsd:) generates valid documents and validates with the same schema")
    func format() throws {
        let format = try XMLFormat(xsd: notesXSD)
        var rng = FuzzRNG(seed: 1)
        for _ in 0..<100 { #expect(format.validator.validate(format.xmlMutator.generate(using: &rng)) == .valid) }
    }
}
