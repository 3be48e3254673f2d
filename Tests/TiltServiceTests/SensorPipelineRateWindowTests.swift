// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import TiltService

/// Which `rateWindow` the daemon's estimator uses: the IIO source's for a chip polled slower
/// than it runs, unless the config names one of its own.
final class SensorPipelineRateWindowTests: XCTestCase {
    func testTheSourcesWindowReplacesTheDefault() {
        XCTAssertEqual(SensorPipeline.rateWindow(configured: 1, source: 0.03), 0.03)
    }

    func testAConfiguredWindowIsKept() {
        XCTAssertEqual(SensorPipeline.rateWindow(configured: 0.21, source: 0.03), 0.21)
    }

    func testBufferedAgainGoesBackToTheConfiguredWindow() {
        XCTAssertEqual(SensorPipeline.rateWindow(configured: 1, source: nil), 1)
    }

    func testANonsenseWindowIsIgnored() {
        XCTAssertEqual(SensorPipeline.rateWindow(configured: 1, source: 0), 1)
        XCTAssertEqual(SensorPipeline.rateWindow(configured: 1, source: 1.5), 1)
    }
}
