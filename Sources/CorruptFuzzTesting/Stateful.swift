import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation
import Testing
import XCTest

/// One change a user can make to a document, drawn with random parameters.
///
/// ```swift
/// let addDay = DocumentAction<HabitDocument>("addDay") { doc, rng in
///     guard !doc.habits.isEmpty else { return nil }
///     let i = rng.below(doc.habits.count), day = Int32(20_000 + rng.below(60))
///     doc.addDay(day, toHabit: i)
///     return "addDay(\(day), toHabit: \(i))"
/// }
/// ```
public struct DocumentAction<Document>: Sendable {
    public let name: String
    let body: @Sendable (inout Document, inout FuzzRNG) -> String?

    /// Creates an action.
    /// - Parameters:
    ///   - name: The action's name.
    ///   - body: Changes the document and returns a description of the change with its
    ///     parameters, or nil when the action does not apply to this document.
    public init(_ name: String, _ body: @escaping @Sendable (inout Document, inout FuzzRNG) -> String?) {
        self.name = name
        self.body = body
    }
}

/// Saving and loading again after every action, as ``verifyStatefulChanges(initial:actions:runs:maxSteps:seed:saveAndReload:validate:)``
/// does: the app's writer must save a document the format's validator accepts and that loads
/// again to the same digest, twice (a field the writer drops and the reader fills with a
/// default only shows the second time).
public struct SaveAndReload<Document>: Sendable {
    let format: (any FuzzFormat)?
    let save: @Sendable (Document) throws -> Data
    let load: @Sendable (Data) throws -> Document
    let digest: @Sendable (Document) -> String

    /// - Parameters:
    ///   - format: Judges every saved file (nil: only the reload is checked).
    ///   - save: The app's writer: the document's bytes as the app saves them.
    ///   - load: The app's loader of what `save` wrote.
    ///   - digest: What the document holds, as text: equal documents, equal digests.
    public init(
        format: (any FuzzFormat)? = nil, save: @escaping @Sendable (Document) throws -> Data,
        load: @escaping @Sendable (Data) throws -> Document, digest: @escaping @Sendable (Document) -> String
    ) {
        self.format = format
        self.save = save
        self.load = load
        self.digest = digest
    }

    /// What went wrong saving and reloading `document`, or nil.
    func check(_ document: Document) -> String? {
        let expected = digest(document)
        var current = document
        for round in 1...2 {
            let bytes: Data
            do {
                bytes = try save(current)
            } catch {
                return "writer-corruption: save \(round) failed: \(error)"
            }
            if case .invalid(let violation)? = format?.validator.validate([UInt8](bytes)) {
                return "writer-corruption: save \(round) wrote an invalid document: \(violation)"
            }
            do {
                current = try load(bytes)
            } catch {
                return "writer-corruption: what save \(round) wrote does not load: \(error)"
            }
            if let difference = DigestDifference.between(expected, digest(current)) {
                return "writer-corruption: after save \(round), the document loads as other data (\(difference.signature)): \(difference.detail)"
            }
        }
        return nil
    }
}

/// The first sequence of actions that broke the validator, shrunk to the shortest found.
public struct StatefulFailure: Sendable, CustomStringConvertible {
    /// The actions, in order, with their parameters; the last one broke the document.
    public var steps: [String]
    /// The validator's message after the last step.
    public var message: String
    /// How many actions the failing sequence had before shrinking.
    public var originalLength: Int
    public var seed: UInt64

    public var description: String {
        var text = "after \(steps.count) action\(steps.count == 1 ? "" : "s") (shrunk from \(originalLength)), the document is invalid: \(message)\n"
        for (index, step) in steps.enumerated() {
            text += "  \(index + 1). \(step)\(index == steps.count - 1 ? "   <- breaks it" : "")\n"
        }
        return text + "  seed: \(seed)"
    }
}

/// A step of a stateful run: which action, and the seed of its parameters, so a step replays
/// exactly.
struct StatefulStep: Hashable {
    var action: Int
    var seed: UInt64
}

/// Runs random sequences of actions on copies of a document, validating after each one, the
/// way a careful app applies a change to a copy and keeps the old data when validation fails.
///
/// - Returns: The first failing sequence, shrunk, or nil when every sequence kept the document
///   valid.
///
/// With `saveAndReload`, the document is also saved and loaded again after each action: a save
/// that fails, writes an invalid file or loads as other data fails the sequence too.
public func verifyStatefulChanges<Document>(
    initial: @Sendable () -> Document, actions: [DocumentAction<Document>], runs: Int = 200, maxSteps: Int = 20,
    seed: UInt64? = nil, saveAndReload: SaveAndReload<Document>? = nil, validate: (Document) -> String?
) -> StatefulFailure? {
    precondition(!actions.isEmpty, "give at least one action")
    let seed = seed ?? ProcessInfo.processInfo.environment["CORRUPT_FUZZ_SEED"].flatMap(UInt64.init) ?? 0
    var rng = FuzzRNG(seed: seed)
    /// Replays steps; returns the descriptions and the first failure's index and message.
    func replay(_ steps: [StatefulStep]) -> (descriptions: [String], failure: (Int, String)?) {
        var document = initial()
        var descriptions: [String] = []
        for (index, step) in steps.enumerated() {
            var stepRNG = FuzzRNG(seed: step.seed)
            guard let description = actions[step.action].body(&document, &stepRNG) else { continue }
            descriptions.append(description)
            if let message = validate(document), !message.isEmpty {
                return (descriptions, (index, message))
            }
            if let message = saveAndReload?.check(document) {
                return (descriptions, (index, message))
            }
        }
        return (descriptions, nil)
    }
    for _ in 0..<runs {
        let steps = (0..<(1 + rng.below(maxSteps))).map { _ in StatefulStep(action: rng.below(actions.count), seed: rng.next()) }
        guard let (failingIndex, _) = replay(steps).failure else { continue }
        // Shrink: drop steps (chunks, then one at a time) while the sequence still fails.
        var current = Array(steps[...failingIndex])
        var chunk = max(1, current.count / 2)
        while chunk >= 1 {
            var start = 0
            var removed = false
            while start < current.count {
                var candidate = current
                candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                if !candidate.isEmpty, let (index, _) = replay(candidate).failure {
                    current = Array(candidate[...index])
                    removed = true
                } else {
                    start += chunk
                }
            }
            if !removed { chunk /= 2 }
        }
        let (descriptions, failure) = replay(current)
        return StatefulFailure(steps: descriptions, message: failure?.1 ?? "", originalLength: failingIndex + 1, seed: seed)
    }
    return nil
}

/// Like ``verifyStatefulChanges(initial:actions:runs:maxSteps:seed:saveAndReload:validate:)``, recording a
/// Swift Testing issue (or an XCTest failure outside Swift Testing) with the shrunk sequence.
@discardableResult
public func assertStatefulChanges<Document>(
    initial: @Sendable () -> Document, actions: [DocumentAction<Document>], runs: Int = 200, maxSteps: Int = 20,
    seed: UInt64? = nil, saveAndReload: SaveAndReload<Document>? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    validate: (Document) -> String?
) -> StatefulFailure? {
    let failure = verifyStatefulChanges(
        initial: initial, actions: actions, runs: runs, maxSteps: maxSteps, seed: seed, saveAndReload: saveAndReload, validate: validate)
    if let failure {
        if Test.current != nil {
            Issue.record(Comment(rawValue: "corrupt-fuzz stateful: \(failure)"), sourceLocation: sourceLocation)
        } else {
            XCTFail("corrupt-fuzz stateful: \(failure)")
        }
    }
    return failure
}
