/// One note of the notes document: `<note id="…" created="…">text</note>`.
public struct Note: Sendable, Hashable {
    /// Missing in a document the naive loader accepted.
    public var id: String?
    public var created: String?
    public var text: String

    public init(id: String?, created: String?, text: String) {
        self.id = id
        self.created = created
        self.text = text
    }

    /// A line of the loaders' digest.
    public var digest: String { "\(id ?? "-")\t\(created ?? "-")\t\(text)" }
}

/// Why a notes document could not be loaded: the reason word of the target protocol and what
/// is wrong.
public struct NotesLoadError: Error, Sendable, Hashable {
    /// `not-found`, `empty`, `corrupt`, `unsupported-version`.
    public var reason: String
    public var message: String

    public init(_ reason: String, _ message: String) {
        self.reason = reason
        self.message = message
    }
}

/// The notes document's XML Schema (the same as `Corpus/schemas/notes.xsd`).
public let notesSchema = #"""
    <?xml version="1.0" encoding="UTF-8"?>
    <!-- The notes document of the XML example: <notes version="1"><note id="…" created="…">text</note>…</notes> -->
    <xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
      <xs:element name="notes">
        <xs:complexType>
          <xs:sequence>
            <xs:element name="note" minOccurs="0" maxOccurs="unbounded">
              <xs:complexType>
                <xs:simpleContent>
                  <xs:extension base="xs:string">
                    <xs:attribute name="id" type="xs:positiveInteger" use="required"/>
                    <xs:attribute name="created" type="xs:dateTime" use="required"/>
                  </xs:extension>
                </xs:simpleContent>
              </xs:complexType>
            </xs:element>
          </xs:sequence>
          <xs:attribute name="version">
            <xs:simpleType>
              <xs:restriction base="xs:positiveInteger">
                <xs:maxInclusive value="1"/>
              </xs:restriction>
            </xs:simpleType>
          </xs:attribute>
        </xs:complexType>
      </xs:element>
    </xs:schema>

    """#
