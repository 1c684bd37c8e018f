import Foundation
import Testing
import XCTest

// The checks for a loader that reads `[UInt8]`, as hand-written binary parsers do: the input's
// bytes are handed to it as they are. Through the `Data` functions, `[UInt8](data)` costs two
// copies and two allocations per input (the bytes into a `Data`, then back), which is more than
// many such loaders spend on a corrupt file. The parameters and results are those of the `Data`
// functions. They are disfavored so that a closure that type-checks either way (one that calls
// `[UInt8](data)`) keeps meaning the `Data` function.

/// ``verifyLoaderSurvivesCorruption(_:format:seeds:options:filePath:load:validate:)`` for a
/// loader of `[UInt8]`: `{ bytes in try HabitStore.load(bytes) }`.
@_disfavoredOverload
public func verifyLoaderSurvivesCorruption<Value>(
    _ id: String, format: some FuzzFormat, seeds: [Data] = [], options: CorruptFuzzOptions = .init(),
    filePath: StaticString = #filePath,
    load: @escaping @Sendable ([UInt8]) throws -> Value, validate: (@Sendable (Value) -> String?)? = nil
) -> CorruptFuzzReport {
    swiftTestingCheck(id, format, seeds, options, filePath, load, validate).0
}

/// ``assertLoaderSurvivesCorruption(_:format:seeds:options:filePath:sourceLocation:load:validate:)``
/// for a loader of `[UInt8]`.
@_disfavoredOverload
@discardableResult
public func assertLoaderSurvivesCorruption<Value>(
    _ id: String, format: some FuzzFormat, seeds: [Data] = [], options: CorruptFuzzOptions = .init(),
    filePath: StaticString = #filePath, sourceLocation: SourceLocation = #_sourceLocation,
    load: @escaping @Sendable ([UInt8]) throws -> Value, validate: (@Sendable (Value) -> String?)? = nil
) -> CorruptFuzzReport {
    let (report, warnings) = swiftTestingCheck(id, format, seeds, options, filePath, load, validate)
    recordIssues(id, report, warnings, sourceLocation)
    return report
}

/// ``verifyLoaderSurvivesCorruption(_:seeds:options:filePath:load:)`` (no format) for a loader
/// of `[UInt8]`.
@_disfavoredOverload
public func verifyLoaderSurvivesCorruption<Value>(
    _ id: String, seeds: [Data], options: CorruptFuzzOptions = .init(), filePath: StaticString = #filePath,
    load: @escaping @Sendable ([UInt8]) throws -> Value
) -> CorruptFuzzReport {
    swiftTestingCheck(id, nil, seeds, options, filePath, load, nil).0
}

/// ``assertLoaderSurvivesCorruption(_:seeds:options:filePath:sourceLocation:load:)`` (no
/// format) for a loader of `[UInt8]`.
@_disfavoredOverload
@discardableResult
public func assertLoaderSurvivesCorruption<Value>(
    _ id: String, seeds: [Data], options: CorruptFuzzOptions = .init(), filePath: StaticString = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation, load: @escaping @Sendable ([UInt8]) throws -> Value
) -> CorruptFuzzReport {
    let (report, warnings) = swiftTestingCheck(id, nil, seeds, options, filePath, load, nil)
    recordIssues(id, report, warnings, sourceLocation)
    return report
}

/// A check run from the current Swift Testing test (its filter re-runs it as a worker).
private func swiftTestingCheck<Value>(
    _ id: String, _ format: (any FuzzFormat)?, _ seeds: [Data], _ options: CorruptFuzzOptions, _ filePath: StaticString,
    _ load: @escaping @Sendable ([UInt8]) throws -> Value, _ validate: (@Sendable (Value) -> String?)?
) -> (CorruptFuzzReport, warnings: [String]) {
    runCheck(
        id: id, format: format, seeds: seeds, options: options, filePath: "\(filePath)", rerun: SwiftTestingRerun.current(),
        replayHint: SwiftTestingRerun.replayHint(), load: load, validate: validate)
}

extension XCTestCase {
    /// The XCTest check with a format, for a loader of `[UInt8]`.
    @_disfavoredOverload
    @discardableResult
    public func assertLoaderSurvivesCorruption<Value>(
        _ id: String, format: some FuzzFormat, seeds: [Data] = [], options: CorruptFuzzOptions = .init(),
        file: StaticString = #filePath, line: UInt = #line,
        load: @escaping @Sendable ([UInt8]) throws -> Value, validate: (@Sendable (Value) -> String?)? = nil
    ) -> CorruptFuzzReport {
        xctestCheck(id, format, seeds, options, file: file, line: line, load, validate)
    }

    /// The XCTest check without a format, for a loader of `[UInt8]`.
    @_disfavoredOverload
    @discardableResult
    public func assertLoaderSurvivesCorruption<Value>(
        _ id: String, seeds: [Data], options: CorruptFuzzOptions = .init(), file: StaticString = #filePath, line: UInt = #line,
        load: @escaping @Sendable ([UInt8]) throws -> Value
    ) -> CorruptFuzzReport {
        xctestCheck(id, nil, seeds, options, file: file, line: line, load, nil)
    }

    /// A check run from this XCTest test, failing it for each finding.
    private func xctestCheck<Value>(
        _ id: String, _ format: (any FuzzFormat)?, _ seeds: [Data], _ options: CorruptFuzzOptions, file: StaticString, line: UInt,
        _ load: @escaping @Sendable ([UInt8]) throws -> Value, _ validate: (@Sendable (Value) -> String?)?
    ) -> CorruptFuzzReport {
        let (report, warnings) = runCheck(
            id: id, format: format, seeds: seeds, options: options, filePath: "\(file)", rerun: xctestRerun,
            replayHint: "swift test --filter '\(xctestFilter)'", load: load, validate: validate)
        failTest(id, report, warnings, file: file, line: line)
        return report
    }
}
