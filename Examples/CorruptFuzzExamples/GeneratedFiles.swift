import CorruptFuzzCore
import CorruptFuzzPlist
import CorruptFuzzSchema
import Foundation

/// Valid files a format generates, written into a folder as `PREFIX-NN.EXT`: what
/// `corrupt-fuzz generate` does.
public enum GeneratedFiles {
    /// How many bytes and elements a `.ksy` schema's generator may draw.
    public struct Limits: Sendable {
        public var maxElements: Int
        public var maxBytes: Int

        public init(maxElements: Int = 6, maxBytes: Int = 24) {
            self.maxElements = maxElements
            self.maxBytes = maxBytes
        }
    }

    /// Writes `count` files of the format `format` and `description` select (``FormatRegistry``)
    /// into `folder`, drawn from `seed`; property lists in their XML encoding when `xmlPlist`.
    /// - Returns: The files' name prefix (the format's name, or the description's file name).
    /// - Throws: ``CorruptFuzzError`` for a format without a generator, a description that
    ///   cannot be read, files that came out empty, or a folder that cannot be written.
    @discardableResult
    public static func write(
        count: Int, format: String?, description: String?, registry: FormatRegistry = .bundled, seed: UInt64, into folder: String,
        limits: Limits = Limits(), xmlPlist: Bool = false
    ) throws(CorruptFuzzError) -> String {
        var rng = FuzzRNG(seed: seed)
        let selection = try registry.select(format: format, description: description)
        // A .ksy schema is generated with the size limits given.
        if case .description(let reader, let path, _)? = selection, reader.extensions.contains("ksy") {
            let loaded: BinarySchema
            do {
                loaded = try KSYLoader.load(contentsOf: path)
            } catch {
                throw CorruptFuzzError(.invalidArgument, "broken schema: \(error.message)")
            }
            let generator = SchemaGenerator(schema: loaded, limits: .init(maxElements: limits.maxElements, maxBytes: limits.maxBytes))
            try write(count: count, prefix: loaded.id, fileExtension: loaded.fileExtension, into: folder) { generator.generateFile(using: &rng) }
            return loaded.id
        }
        guard let selection, let resolved = try registry.resolve(format: format, description: description) else {
            throw CorruptFuzzError(.invalidArgument, "give a format or a description to generate from")
        }
        guard let mutator = resolved.format.mutator else {
            throw CorruptFuzzError(
                .invalidArgument,
                resolved.warnings.first ?? "format '\(format ?? "")' has no generator; formats with one: \(registry.generatingNames.joined(separator: ", "))")
        }
        let prefix: String
        switch selection {
        case .entry(let entry): prefix = entry.name
        case .description(_, let path, _): prefix = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        }
        var empty = 0
        try write(count: count, prefix: prefix, fileExtension: resolved.format.fileExtension, into: folder) {
            let bytes = mutator.generate(using: &rng)
            if bytes.isEmpty { empty += 1 }
            guard xmlPlist, let plist = try? PropertyListFile.read(bytes).plist else { return bytes }
            return (try? PropertyListFile.write(plist, encoding: .xml)) ?? bytes
        }
        if empty > 0 { throw CorruptFuzzError(.system, "\(empty) of \(count) files came out empty: the format could not build them") }
        return prefix
    }

    /// Writes `count` files named `PREFIX-NN.EXT` (`bin` without an extension), each from `next`.
    static func write(count: Int, prefix: String, fileExtension: String, into folder: String, _ next: () -> [UInt8]) throws(CorruptFuzzError) {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let width = String(count - 1).count
            let suffix = fileExtension.isEmpty ? "bin" : fileExtension
            for index in 0..<count {
                let number = String(index)
                let name = "\(prefix)-\(String(repeating: "0", count: width - number.count))\(number).\(suffix)"
                try Data(next()).write(to: URL(fileURLWithPath: folder).appendingPathComponent(name))
            }
        } catch {
            throw CorruptFuzzError(.reportWriteFailed, "cannot write to \(folder): \(error.localizedDescription)")
        }
    }
}

/// Files judged by a format's reference validator: what `corrupt-fuzz validate` prints.
public enum ValidatedFiles {
    /// Each file's verdicts: one for most formats; every violation for a `.ksy` schema (its
    /// parser goes on after the first); `invalid(not-found)` for a file that cannot be read.
    /// - Throws: ``CorruptFuzzError`` for a format that cannot be selected or read.
    public static func verdicts(
        of files: [String], format: String?, description: String?, registry: FormatRegistry = .bundled
    ) throws(CorruptFuzzError) -> [(file: String, verdicts: [Verdict])] {
        if case .description(let reader, let path, _)? = try registry.select(format: format, description: description), reader.extensions.contains("ksy") {
            let parser: SchemaParser
            do {
                parser = SchemaParser(schema: try KSYLoader.load(contentsOf: path))
            } catch {
                throw CorruptFuzzError(.invalidArgument, "broken schema: \(error.message)")
            }
            return files.map { file in
                guard let data = FileManager.default.contents(atPath: file) else {
                    return (file, [.invalid(Violation(.notFound, "cannot read the file"))])
                }
                let violations = parser.parse([UInt8](data)).violations
                return (file, violations.isEmpty ? [.valid] : violations.map { .invalid($0) })
            }
        }
        guard let validator = try registry.resolve(format: format, description: description)?.format.validator else {
            throw CorruptFuzzError(.invalidArgument, "give a format or a description to validate with")
        }
        return files.map { file in (file, [validator.validate(FileManager.default.contents(atPath: file).map { [UInt8]($0) })]) }
    }
}
