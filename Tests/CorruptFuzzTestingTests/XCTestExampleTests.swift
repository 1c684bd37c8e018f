import CorruptFuzzSchema
import CorruptFuzzTesting
import Foundation
import HabitLoaders
import XCTest

/// The same checks from XCTest.
final class XCTestHabitLoaderTests: XCTestCase {
    func testHardenedLoaderSurvivesCorruptionInWorkers() {
        let report = assertLoaderSurvivesCorruption(
            "xctest-hardened", format: habitFormat, options: .init(runs: 300, regressions: scratchRegressions("xctest"))
        ) { data in
            try HardenedHabitLoader.load([UInt8](data))
        } validate: { habits in
            validateHabits(habits)
        }
        XCTAssertGreaterThanOrEqual(report.executions, 300)
    }

    func testXCTestFilterNamesThisTest() {
        XCTAssertTrue(xctestFilterForTesting.hasSuffix("XCTestHabitLoaderTests/testXCTestFilterNamesThisTest"), xctestFilterForTesting)
    }
}
