// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import TiltCore

/// `fmt`, the numbers in calibration messages: as `%.Nf` writes them, without Foundation.
final class MessageNumberTests: XCTestCase {
    func testDecimalsAsPrintfWritesThem() {
        XCTAssertEqual(fmt(3.14159, 2), "3.14")
        XCTAssertEqual(fmt(12, 2), "12.00")
        XCTAssertEqual(fmt(0.05, 3), "0.050")
        XCTAssertEqual(fmt(2.96, 1), "3.0")
        XCTAssertEqual(fmt(7.4, 0), "7")
        XCTAssertEqual(fmt(-0.5001, 0), "-1")
        XCTAssertEqual(fmt(-2.25001, 1), "-2.3")
        XCTAssertEqual(fmt(-0.0001, 2), "0.00")
        XCTAssertEqual(fmt(.nan, 1), "nan")
    }
}
