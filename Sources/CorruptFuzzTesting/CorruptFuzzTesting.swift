@_exported import CorruptFuzzCore
@_exported import CorruptFuzzGenerators
import Foundation
import Testing
import XCTest

/// Hammers an in-process loader with valid and corrupt files of a format and returns what it
/// found, without failing the test (see
/// ``assertLoaderSurvivesCorruption(_:format:seeds:options:filePath:sourceLocation:load:validate:)-(_,_,_,_,_,_,(Data)->Value,_)``).
///
/// - Parameters:
///   - id: A stable name for the check; names its regression folder and its worker.
///   - format: The file format (e.g. a `SchemaFormat` from a `.ksy` file).
///   - seeds: Valid files to start from; the format generates some when empty.
///   - options: Runs, seed, isolation, timeout.
///   - load: The app's loader: returns the loaded value or throws why it cannot. An error with
///     a `reason` string property gives the reason word (`empty`, `corrupt`,
///     `unsupported-version`, …).
///   - validate: The app's own check of a loaded value, `validateUserData`-style: nil or an
///     empty string when the value is valid, else a message.
///   - filePath: The test's file (the default); the regression store is in the package that
///     holds it.
/// - Returns: The findings (crash, hang, oom, silent acceptance, false rejection, wrong reason).
public func verifyLoaderSurvivesCorruption<Value>(
    _ id: String, format: some FuzzFormat, seeds: [Data] = [], options: CorruptFuzzOptions = .init(),
    filePath: StaticString = #filePath,
    load: @escaping @Sendable (Data) throws -> Value, validate: (@Sendable (Value) -> String?)? = nil
) -> CorruptFuzzReport {
    verifyLoaderSurvivesCorruption(id, format: format, seeds: seeds, options: options, filePath: filePath, load: dataLoader(load), validate: validate)
}

/// Hammers an in-process loader with valid and corrupt files of a format and fails the
/// current test (Swift Testing) with one issue per finding: its kind, signature, minimized
/// reproducer and how to replay it.
///
/// ```swift
/// @Test func habitLoaderSurvivesCorruption() throws {
///     let format = try SchemaFormat(ksyPath: "Corpus/schemas/habit-tracker.ksy")
///     assertLoaderSurvivesCorruption("habits", format: format) { data in
///         try HabitStore.load(data)
///     } validate: { store in
///         store.validateUserData()
///     }
/// }
/// ```
@discardableResult
public func assertLoaderSurvivesCorruption<Value>(
    _ id: String, format: some FuzzFormat, seeds: [Data] = [], options: CorruptFuzzOptions = .init(),
    filePath: StaticString = #filePath, sourceLocation: SourceLocation = #_sourceLocation,
    load: @escaping @Sendable (Data) throws -> Value, validate: (@Sendable (Value) -> String?)? = nil
) -> CorruptFuzzReport {
    assertLoaderSurvivesCorruption(
        id, format: format, seeds: seeds, options: options, filePath: filePath, sourceLocation: sourceLocation, load: dataLoader(load),
        validate: validate)
}

/// Hammers an in-process loader with byte-level corruptions of `seeds` and returns the crashes,
/// hangs and memory blow-ups it found, as a plain libFuzzer harness would, and the reasons
/// every loader owes (an empty file is `empty`): with no format there is no validator, so
/// silent acceptance, false rejection and other wrong reasons cannot be seen (give a format
/// for those). For a loader whose format has no description yet.
///
/// - Parameters:
///   - id: A stable name for the check; names its regression folder and its worker.
///   - seeds: Valid files to start from (at least one).
///   - options: Runs, seed, isolation, timeout.
///   - filePath: The test's file (the default); the regression store is in the package that
///     holds it.
///   - load: The app's loader.
public func verifyLoaderSurvivesCorruption<Value>(
    _ id: String, seeds: [Data], options: CorruptFuzzOptions = .init(), filePath: StaticString = #filePath,
    load: @escaping @Sendable (Data) throws -> Value
) -> CorruptFuzzReport {
    verifyLoaderSurvivesCorruption(id, seeds: seeds, options: options, filePath: filePath, load: dataLoader(load))
}

/// Hammers an in-process loader with byte-level corruptions of `seeds` and fails the current
/// test (Swift Testing) for every crash, hang or memory blow-up, and an empty file not
/// rejected as `empty`; with no format there is no validator, so only those are seen.
@discardableResult
public func assertLoaderSurvivesCorruption<Value>(
    _ id: String, seeds: [Data], options: CorruptFuzzOptions = .init(), filePath: StaticString = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation, load: @escaping @Sendable (Data) throws -> Value
) -> CorruptFuzzReport {
    assertLoaderSurvivesCorruption(id, seeds: seeds, options: options, filePath: filePath, sourceLocation: sourceLocation, load: dataLoader(load))
}

/// One Swift Testing issue per finding, the warnings printed.
func recordIssues(_ id: String, _ report: CorruptFuzzReport, _ warnings: [String], _ sourceLocation: SourceLocation) {
    for warning in warnings { print("corrupt-fuzz: \(id): \(warning)") }
    for finding in report.findings {
        Issue.record(Comment(rawValue: "corrupt-fuzz \(id): \(finding)"), sourceLocation: sourceLocation)
    }
}

/// Re-running the current Swift Testing test in a worker process.
enum SwiftTestingRerun {
    static func current() -> Rerun? {
        guard let test = Test.current else { return nil }
        return Rerun(arguments: ["--testing-library", "swift-testing", "--filter", filter(for: test)])
    }

    static func filter(for test: Test) -> String {
        let id = test.id.description
        let special = Set("\\^$.|?*+()[]{}")
        return "^" + String(id.flatMap { special.contains($0) ? ["\\", $0] : [$0] })
    }

    static func replayHint() -> String {
        guard let test = Test.current else { return "swift test" }
        return "swift test --filter '\(filter(for: test).replacing("'", with: "'\\''"))'"
    }
}

// MARK: - XCTest

extension XCTestCase {
    /// Hammers an in-process loader with valid and corrupt files of a format and fails this
    /// XCTest test with one failure per finding. Same parameters as the Swift Testing function.
    @discardableResult
    public func assertLoaderSurvivesCorruption<Value>(
        _ id: String, format: some FuzzFormat, seeds: [Data] = [], options: CorruptFuzzOptions = .init(),
        file: StaticString = #filePath, line: UInt = #line,
        load: @escaping @Sendable (Data) throws -> Value, validate: (@Sendable (Value) -> String?)? = nil
    ) -> CorruptFuzzReport {
        assertLoaderSurvivesCorruption(
            id, format: format, seeds: seeds, options: options, file: file, line: line, load: dataLoader(load), validate: validate)
    }

    /// Hammers an in-process loader with byte-level corruptions of `seeds` and fails this XCTest
    /// test for every crash, hang or memory blow-up (no format: no validator).
    @discardableResult
    public func assertLoaderSurvivesCorruption<Value>(
        _ id: String, seeds: [Data], options: CorruptFuzzOptions = .init(), file: StaticString = #filePath, line: UInt = #line,
        load: @escaping @Sendable (Data) throws -> Value
    ) -> CorruptFuzzReport {
        assertLoaderSurvivesCorruption(id, seeds: seeds, options: options, file: file, line: line, load: dataLoader(load))
    }

    /// One XCTest failure per finding, the warnings printed.
    func failTest(_ id: String, _ report: CorruptFuzzReport, _ warnings: [String], file: StaticString, line: UInt) {
        for warning in warnings { print("corrupt-fuzz: \(id): \(warning)") }
        for finding in report.findings {
            XCTFail("corrupt-fuzz \(id): \(finding)", file: file, line: line)
        }
    }

    /// `Module.Class/testMethod`, as the XCTest runner's filter reads it.
    var xctestFilter: String {
        let method = name.split(whereSeparator: { $0 == " " || $0 == "." }).last.map { String($0.filter { $0 != "]" }) } ?? name
        return "\(String(reflecting: type(of: self)))/\(method)"
    }

    var xctestRerun: Rerun { Rerun(arguments: ["--testing-library", "xctest", xctestFilter]) }

    /// The filter that re-runs this test in a worker (for tests of the module itself).
    public var xctestFilterForTesting: String { xctestFilter }
}
