// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

@testable import TiltSensors

/// FixReplaySource: order, pacing from the fixes' own times, the end, and stopping.
final class GPSReplayTests: XCTestCase {
    private let t0: Int64 = 1_714_564_800_000_000_000

    private func fixes(count: Int, spacing seconds: Double) -> [Fix] {
        (0..<count).map { k in
            Fix(mode: 3, time: t0 + Int64(Double(k) * seconds * 1e9), lat: 47 + Double(k) * 1e-4, lon: 8)
        }
    }

    func testAsFastAsPossibleEmitsEveryFixInOrderThenFinished() throws {
        let track = fixes(count: 500, spacing: 60)  // 500 minutes of walk
        let collector = FixCollector(running: FixReplaySource(fixes: track, name: "walk.gpx", pace: .asFastAsPossible))
        defer { collector.stopAndWait() }
        XCTAssertTrue(waitFor(10) { collector.hasReturned }, "replay did not finish")
        XCTAssertNil(collector.error)
        XCTAssertEqual(collector.fixes, track)
        XCTAssertEqual(collector.statuses.map(\.state), [.streaming, .finished])
        XCTAssertEqual(collector.all.last?.status?.state, .finished)
        XCTAssertEqual(collector.statuses.last?.device, "replay walk.gpx")
    }

    func testRealTimeIsPacedByTheFixTimes() throws {
        // 5 fixes 1 s apart at ×10: the last is due 0.4 s after the first.
        let track = fixes(count: 5, spacing: 1)
        let collector = FixCollector(running: FixReplaySource(fixes: track, name: "t", pace: .realTime(factor: 10)))
        defer { collector.stopAndWait() }
        XCTAssertTrue(waitFor(10) { collector.hasReturned }, "replay did not finish")
        XCTAssertEqual(collector.fixes, track)
        let times = collector.timeline.filter { $0.output.fix != nil }.map(\.at)
        for k in 1..<times.count {
            // Each fix is held back until it is due (0.1 s per second of fix time); never early.
            let due = Duration.milliseconds(100 * k)
            XCTAssertGreaterThanOrEqual(times[0].duration(to: times[k]), due - .milliseconds(5), "fix \(k) came early")
        }
    }

    func testFixesWithoutTimeOrGoingBackwardsAreNotWaitedFor() throws {
        let track = [
            Fix(mode: 3, time: t0, lat: 1, lon: 1),
            Fix(mode: 1),
            Fix(mode: 3, time: t0 - 3_600_000_000_000, lat: 1, lon: 1),
        ]
        let collector = FixCollector(running: FixReplaySource(fixes: track, name: "t", pace: .realTime(factor: 1)))
        defer { collector.stopAndWait() }
        XCTAssertTrue(waitFor(5) { collector.hasReturned }, "replay waited on fixes it should not wait for")
        XCTAssertEqual(collector.fixes, track)
    }

    func testStopEndsAReplayEarly() throws {
        let track = fixes(count: 3, spacing: 3600)  // hours apart in real time
        let collector = FixCollector(running: FixReplaySource(fixes: track, name: "t", pace: .realTime(factor: 1)))
        XCTAssertTrue(waitFor(5) { collector.fixes.count == 1 })
        XCTAssertTrue(collector.stopAndWait(timeout: 2), "run did not return within 2 s of stop")
        XCTAssertEqual(collector.fixes.count, 1)
        XCTAssertFalse(collector.statuses.contains { $0.state == .finished })
    }

    func testBadSpeedFactorIsAClearError() {
        for factor in [0, -1, Double.nan, .infinity] {
            let source = FixReplaySource(fixes: [], name: "t", pace: .realTime(factor: factor))
            XCTAssertThrowsError(try source.run(stop: StopSignal()) { _ in }) { error in
                guard case .invalidSpeedFactor = error as? FixReplayError else {
                    return XCTFail("unexpected error \(error)")
                }
                XCTAssertTrue("\(error)".contains("speed factor"), "\(error)")
            }
        }
    }

    func testSummaryNamesTheTrackAndPace() {
        XCTAssertEqual(
            FixReplaySource(
                fixes: fixes(count: 2, spacing: 1), name: "walk.gpx",
                pace: .realTime(factor: 10)
            ).summary, "replay walk.gpx (2 fixes, ×10)")
        XCTAssertEqual(
            FixReplaySource(fixes: [], name: "w", pace: .asFastAsPossible).summary,
            "replay w (0 fixes, as fast as possible)")
    }
}
