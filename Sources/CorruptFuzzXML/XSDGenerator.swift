import CorruptFuzzCore

/// Generates documents that are valid against an XML Schema (XSD), for the subset app
/// documents use: global and local elements, `ref`, named and anonymous complex and simple
/// types, `sequence`, `choice`, `all` and `group` with `minOccurs`/`maxOccurs`, attributes
/// (`use`, `fixed`, `default`), `simpleContent` and `complexContent` extensions, `mixed`
/// content, the built-in simple types apps use, and restrictions by `enumeration`, numeric
/// bounds and length facets. A schema with anything else (`pattern`, `union`, `any`, imports…)
/// is refused with an ``XMLProblem`` that names the construct, rather than generating documents
/// that might not be valid.
///
/// The schema is read with the safe ``XMLReader`` and interpreted as it is; values lean to the
/// boundaries (each facet's minimum and maximum, empty and long strings, text beyond ASCII and
/// characters that need escaping) as a fuzzer's seeds should.
public struct XSDGenerator: Sendable {
    /// How big generated documents get.
    public struct Limits: Sendable {
        /// The most occurrences drawn above `minOccurs` for a repeated particle.
        public var extraOccurrences = 3
        /// Deeper than this, particles occur `minOccurs` times (recursive schemas end).
        public var maxDepth = 8
        /// The longest string drawn when no facet bounds it.
        public var maxStringLength = 12
        public init() {}
    }

    let root: XMLTree.Element
    let rootElement: XMLTree.Element
    let elements: [String: XMLTree.Element]
    let complexTypes: [String: XMLTree.Element]
    let simpleTypes: [String: XMLTree.Element]
    let groups: [String: XMLTree.Element]
    let attributeGroups: [String: XMLTree.Element]
    let targetNamespace: String?
    let qualifiedLocals: Bool
    public let limits: Limits

    static let supported: Set<String> = [
        "schema", "element", "complexType", "simpleType", "sequence", "choice", "all", "group", "attribute",
        "attributeGroup", "simpleContent", "complexContent", "extension", "restriction", "enumeration",
        "minInclusive", "maxInclusive", "minExclusive", "maxExclusive", "minLength", "maxLength", "length",
        "whiteSpace", "annotation", "documentation", "appinfo", "anyAttribute",
    ]

    /// Compiles the schema in `xsd`; `root` names the document element (default: the first
    /// global element).
    /// - Throws: ``XMLProblem`` when the schema is not well-formed or uses a construct outside
    ///   the subset.
    public init(xsd: [UInt8], root rootName: String? = nil, limits: Limits = .init()) throws(XMLProblem) {
        let schema = try XMLReader.read(xsd).root
        guard Self.local(schema.name) == "schema" else {
            throw XMLProblem(line: 0, path: "/\(schema.name)", message: "not an XML Schema: the root is <\(schema.name)>")
        }
        try Self.checkSubset(schema, path: "/\(schema.name)")
        func named(_ kind: String) -> [String: XMLTree.Element] {
            var out: [String: XMLTree.Element] = [:]
            for child in Self.children(schema) where Self.local(child.name) == kind {
                if let name = child.attribute("name") { out[name] = child }
            }
            return out
        }
        self.root = schema
        elements = named("element")
        complexTypes = named("complexType")
        simpleTypes = named("simpleType")
        groups = named("group")
        attributeGroups = named("attributeGroup")
        targetNamespace = schema.attribute("targetNamespace")
        qualifiedLocals = schema.attribute("elementFormDefault") == "qualified"
        self.limits = limits
        let globals = Self.children(schema).filter { Self.local($0.name) == "element" }
        let byName = elements
        guard let chosen = rootName.map({ byName[$0] }) ?? globals.first else {
            throw XMLProblem(line: 0, path: nil, message: rootName.map { "no global element named \($0)" } ?? "the schema declares no global element")
        }
        rootElement = chosen
    }

    /// One valid document.
    public func generate(using rng: inout FuzzRNG) -> XMLTree {
        var state = State(rng: rng)
        var element = makeElement(rootElement, global: true, depth: 0, state: &state)
        if let targetNamespace {
            // After the attributes, where the reader puts namespace declarations.
            element.attributes.append((qualifiedLocals ? "xmlns" : "xmlns:t", targetNamespace))
        }
        rng = state.rng
        return XMLTree(root: element)
    }

    struct State {
        var rng: FuzzRNG
        var nextID = 0
    }

    // MARK: - Elements and particles

    func makeElement(_ declaration: XMLTree.Element, global: Bool, depth: Int, state: inout State) -> XMLTree.Element {
        if let ref = declaration.attribute("ref"), let target = elements[Self.local(ref)] {
            return makeElement(target, global: true, depth: depth, state: &state)
        }
        let name = declaration.attribute("name") ?? "element"
        let qualified: String
        if targetNamespace == nil || qualifiedLocals {
            qualified = name
        } else {
            qualified = global ? "t:" + name : name
        }
        var element = XMLTree.Element(name: qualified)
        if let fixed = declaration.attribute("fixed") {
            element.children = fixed.isEmpty ? [] : [.text(fixed)]
            return element
        }
        if let type = declaration.attribute("type") {
            if let complex = complexTypes[Self.local(type)] {
                fill(&element, complexType: complex, depth: depth, state: &state)
            } else {
                let text = value(ofType: type, state: &state)
                element.children = text.isEmpty ? [] : [.text(text)]
            }
        } else if let complex = Self.child(declaration, "complexType") {
            fill(&element, complexType: complex, depth: depth, state: &state)
        } else if let simple = Self.child(declaration, "simpleType") {
            let text = value(of: simple, state: &state)
            element.children = text.isEmpty ? [] : [.text(text)]
        }
        return element
    }

    func fill(_ element: inout XMLTree.Element, complexType: XMLTree.Element, depth: Int, state: inout State) {
        if let simpleContent = Self.child(complexType, "simpleContent"), let ext = Self.child(simpleContent, "extension") {
            let text = value(ofType: ext.attribute("base") ?? "xs:string", state: &state)
            element.children = text.isEmpty ? [] : [.text(text)]
            addAttributes(of: ext, to: &element, state: &state)
            return
        }
        var body = complexType
        if let complexContent = Self.child(complexType, "complexContent"), let ext = Self.child(complexContent, "extension") {
            if let base = ext.attribute("base").flatMap({ complexTypes[Self.local($0)] }) {
                fill(&element, complexType: base, depth: depth, state: &state)
            }
            body = ext
        }
        addAttributes(of: body, to: &element, state: &state)
        let mixed = complexType.attribute("mixed") == "true"
        if mixed, state.rng.oneIn(2) { element.children.append(.text(string(length: 1 + state.rng.below(6), state: &state))) }
        for particle in Self.children(body) where ["sequence", "choice", "all", "group"].contains(Self.local(particle.name)) {
            appendParticle(particle, to: &element, depth: depth, state: &state)
        }
    }

    func occurrences(_ particle: XMLTree.Element, depth: Int, state: inout State) -> Int {
        let minimum = particle.attribute("minOccurs").flatMap(Int.init) ?? 1
        let maxText = particle.attribute("maxOccurs") ?? "1"
        let maximum = maxText == "unbounded" ? Int.max : Int(maxText) ?? 1
        guard depth < limits.maxDepth, maximum > minimum else { return minimum }
        let cap = min(maximum, minimum + limits.extraOccurrences)
        return minimum + state.rng.below(cap - minimum + 1)
    }

    func appendParticle(_ particle: XMLTree.Element, to element: inout XMLTree.Element, depth: Int, state: inout State) {
        let count = occurrences(particle, depth: depth, state: &state)
        for _ in 0..<count {
            switch Self.local(particle.name) {
            case "element":
                element.children.append(.element(makeElement(particle, global: false, depth: depth + 1, state: &state)))
            case "sequence":
                for child in Self.children(particle) { appendParticle(child, to: &element, depth: depth, state: &state) }
            case "all":
                var members = Self.children(particle)
                members.shuffle(using: &state.rng)
                for child in members { appendParticle(child, to: &element, depth: depth, state: &state) }
            case "choice":
                let options = Self.children(particle).filter { Self.local($0.name) != "annotation" }
                guard !options.isEmpty else { continue }
                // Deep down, prefer an option that can be empty, so recursion ends.
                let pick =
                    depth >= limits.maxDepth
                    ? options.first { ($0.attribute("minOccurs") ?? "1") == "0" } ?? options[0]
                    : options[state.rng.below(options.count)]
                appendParticle(pick, to: &element, depth: depth, state: &state)
            case "group":
                if let ref = particle.attribute("ref"), let group = groups[Self.local(ref)] {
                    for child in Self.children(group) { appendParticle(child, to: &element, depth: depth, state: &state) }
                }
            default:
                break
            }
        }
    }

    func addAttributes(of owner: XMLTree.Element, to element: inout XMLTree.Element, state: inout State) {
        for declaration in Self.children(owner) {
            switch Self.local(declaration.name) {
            case "attribute":
                let use = declaration.attribute("use") ?? "optional"
                guard use != "prohibited", use == "required" || state.rng.oneIn(2), let name = declaration.attribute("name") else { continue }
                let text: String
                if let fixed = declaration.attribute("fixed") {
                    text = fixed
                } else if let type = declaration.attribute("type") {
                    text = value(ofType: type, state: &state)
                } else if let simple = Self.child(declaration, "simpleType") {
                    text = value(of: simple, state: &state)
                } else {
                    text = string(length: state.rng.below(limits.maxStringLength + 1), state: &state)
                }
                element.attributes.append((name, text))
            case "attributeGroup":
                if let ref = declaration.attribute("ref"), let group = attributeGroups[Self.local(ref)] {
                    addAttributes(of: group, to: &element, state: &state)
                }
            default:
                break
            }
        }
    }

    // MARK: - Simple values

    /// Facets that restrict a built-in type.
    struct Facets {
        var enumeration: [String] = []
        var lower: Int?
        var upper: Int?
        var minLength: Int?
        var maxLength: Int?
    }

    func value(ofType type: String, state: inout State) -> String {
        if let simple = simpleTypes[Self.local(type)] { return value(of: simple, state: &state) }
        return builtin(Self.local(type), Facets(), state: &state)
    }

    func value(of simpleType: XMLTree.Element, state: inout State) -> String {
        guard let restriction = Self.child(simpleType, "restriction") else { return "" }
        var facets = Facets()
        for facet in Self.children(restriction) {
            guard let text = facet.attribute("value") else { continue }
            switch Self.local(facet.name) {
            case "enumeration": facets.enumeration.append(text)
            case "minInclusive": facets.lower = Int(text).map { max(facets.lower ?? .min, $0) }
            case "minExclusive": facets.lower = Int(text).map { max(facets.lower ?? .min, $0 + 1) }
            case "maxInclusive": facets.upper = Int(text).map { min(facets.upper ?? .max, $0) }
            case "maxExclusive": facets.upper = Int(text).map { min(facets.upper ?? .max, $0 - 1) }
            case "length": facets.minLength = Int(text); facets.maxLength = Int(text)
            case "minLength": facets.minLength = Int(text)
            case "maxLength": facets.maxLength = Int(text)
            default: break
            }
        }
        if !facets.enumeration.isEmpty { return facets.enumeration[state.rng.below(facets.enumeration.count)] }
        let base = restriction.attribute("base") ?? "xs:string"
        if let named = simpleTypes[Self.local(base)] {
            // A restriction of a restriction: draw from the base, keep what fits the facets.
            for _ in 0..<20 {
                let candidate = value(of: named, state: &state)
                if fits(candidate, facets) { return candidate }
            }
        }
        return builtin(Self.local(base), facets, state: &state)
    }

    func fits(_ text: String, _ facets: Facets) -> Bool {
        if let n = Int(text) {
            if let lower = facets.lower, n < lower { return false }
            if let upper = facets.upper, n > upper { return false }
        }
        let count = text.count
        return count >= (facets.minLength ?? 0) && count <= (facets.maxLength ?? .max)
    }

    static let integerRanges: [String: ClosedRange<Int>] = [
        "byte": -128...127, "short": -32768...32767, "int": Int(Int32.min)...Int(Int32.max), "long": Int.min...Int.max,
        "integer": Int.min...Int.max, "unsignedByte": 0...255, "unsignedShort": 0...65535,
        "unsignedInt": 0...Int(UInt32.max), "unsignedLong": 0...Int.max, "positiveInteger": 1...Int.max,
        "nonNegativeInteger": 0...Int.max, "negativeInteger": Int.min...(-1), "nonPositiveInteger": Int.min...0,
    ]

    func builtin(_ type: String, _ facets: Facets, state: inout State) -> String {
        if let range = Self.integerRanges[type] {
            let lower = max(range.lowerBound, facets.lower ?? range.lowerBound)
            let upper = min(range.upperBound, facets.upper ?? range.upperBound)
            guard lower <= upper else { return String(lower) }
            let picks = [lower, upper, lower == .max ? lower : lower + 1, upper == .min ? upper : upper - 1]
            if state.rng.oneIn(2) { return String(min(max(picks[state.rng.below(picks.count)], lower), upper)) }
            // Mostly small, readable numbers inside the range.
            let low = max(lower, -1000), high = min(upper, max(low, 1000))
            return String(low <= high ? low + state.rng.below(high - low + 1) : lower)
        }
        switch type {
        case "boolean": return ["true", "false", "1", "0"][state.rng.below(4)]
        case "decimal", "double", "float":
            let lower = facets.lower ?? -1_000_000, upper = facets.upper ?? 1_000_000
            let whole = lower + state.rng.below(max(1, upper - lower))
            return whole < upper && type != "float" ? "\(whole).\(state.rng.below(100))" : String(whole)
        case "date": return date(state: &state)
        case "dateTime": return date(state: &state) + "T" + time(state: &state) + ["Z", "+01:00", "-08:00", ""][state.rng.below(4)]
        case "time": return time(state: &state)
        case "anyURI": return "https://example.com/" + String(state.rng.below(1000))
        case "ID", "NCName", "Name", "NMTOKEN":
            state.nextID += 1
            return "id\(state.nextID)"
        case "token", "normalizedString":
            let length = length(facets, state: &state)
            return String(string(length: length, state: &state).map { $0 == " " ? "_" : $0 })
        default:
            return string(length: length(facets, state: &state), state: &state)
        }
    }

    func length(_ facets: Facets, state: inout State) -> Int {
        let lower = facets.minLength ?? 0
        let upper = max(lower, facets.maxLength ?? max(lower, limits.maxStringLength))
        return [lower, upper, lower + state.rng.below(upper - lower + 1)][state.rng.below(3)]
    }

    static let characters = Array("abcXYZ019 é✓水🧘&<>\"'")

    func string(length: Int, state: inout State) -> String {
        var text = String((0..<length).map { _ in Self.characters[state.rng.below(Self.characters.count)] })
        // Surrounding spaces would not survive reading as the same text in every reader.
        if text.first == " " { text = "a" + text.dropFirst() }
        if text.last == " " { text = text.dropLast() + "z" }
        return text
    }

    func date(state: inout State) -> String {
        let year = 1900 + state.rng.below(201), month = 1 + state.rng.below(12), day = 1 + state.rng.below(28)
        return "\(year)-\(Self.pad(month))-\(Self.pad(day))"
    }

    func time(state: inout State) -> String {
        "\(Self.pad(state.rng.below(24))):\(Self.pad(state.rng.below(60))):\(Self.pad(state.rng.below(60)))"
    }

    static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : String(n) }

    // MARK: - Reading the schema

    static func local(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }

    static func children(_ element: XMLTree.Element) -> [XMLTree.Element] {
        element.children.compactMap { if case .element(let e) = $0 { e } else { nil } }
    }

    static func child(_ element: XMLTree.Element, _ name: String) -> XMLTree.Element? {
        children(element).first { local($0.name) == name }
    }

    static func checkSubset(_ element: XMLTree.Element, path: String) throws(XMLProblem) {
        for (index, child) in children(element).enumerated() {
            let name = local(child.name)
            let here = "\(path)/\(child.name)[\(index + 1)]"
            if ["documentation", "appinfo"].contains(name) { continue }
            guard supported.contains(name) else {
                throw XMLProblem(
                    line: 0, path: here,
                    message:
                        "unsupported XSD construct <\(child.name)>: corrupt-fuzz generates from sequences, choices, occurrence bounds, attributes and simple types with enumeration, bound and length facets"
                )
            }
            if name == "restriction", local(element.name) == "simpleContent" || local(element.name) == "complexContent" {
                throw XMLProblem(line: 0, path: here, message: "unsupported XSD construct: a restriction of a complex type")
            }
            if name == "attribute", child.attribute("ref") != nil {
                throw XMLProblem(line: 0, path: here, message: "unsupported XSD construct: an attribute by ref")
            }
            try checkSubset(child, path: here)
        }
    }
}

extension XMLTree.Element {
    /// The value of the attribute `name`, if present.
    func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }
}
