// SPDX-License-Identifier: Apache-2.0
import Synchronization
import TiltCore
import XCTest

@testable import TiltService

/// `calibrate.gyro`'s capture (`GyroCapture`) and the sampler's taps (`RawSampleTaps`): the
/// daemon side of `tiltd calibrate gyro` while the service runs (the real unit is tested by
/// scripts/systemd-test, check `calibrate`).
final class GyroCaptureTests: XCTestCase {
    static let bias = Vector3(0.012, -0.008, 0.005)

    /// A still sample at 60 Hz: gravity on z, the bias plus a little deterministic noise.
    static func still(_ i: Int, turning: Double = 0) -> IMUSample {
        let n = Double(i % 7 - 3) * 0.0003
        return IMUSample(
            t: 1_000_000_000 + Int64(i) * 16_666_667, accel: Vector3(0.02, -0.01, 9.80665),
            gyro: bias + Vector3(n, -n, n + turning), hasGyro: true)
    }

    func testSettlesThenMeasuresTheBias() throws {
        var capture = GyroCapture(seconds: 2, settle: 1)
        var outcome: GyroCapture.Outcome?
        var fed = 0
        while outcome == nil && fed < 600 {
            outcome = capture.add(Self.still(fed))
            fed += 1
        }
        guard case .done(let r) = try XCTUnwrap(outcome) else {
            return XCTFail("not done: \(String(describing: outcome))")
        }
        XCTAssertEqual((r.bias - Self.bias).norm, 0, accuracy: 0.0002)
        // One second of settling (60 samples) is not averaged: about two seconds are.
        XCTAssertEqual(Double(r.samples), 120, accuracy: 31)
        XCTAssertGreaterThan(fed, 60 + r.samples - 1)
    }

    func testMotionRefuses() throws {
        var capture = GyroCapture(seconds: 2, settle: 0)
        var outcome: GyroCapture.Outcome?
        for i in 0..<600 where outcome == nil {
            outcome = capture.add(Self.still(i, turning: i > 40 ? 0.5 : 0))
        }
        guard case .refused(let code, let message) = try XCTUnwrap(outcome) else { return XCTFail("not refused") }
        XCTAssertEqual(code, .calibrationRefused)
        XCTAssertTrue(message.hasPrefix("refused: moved"), message)
    }

    func testNoGyroscopeIsNeedsGyro() throws {
        var capture = GyroCapture(seconds: 2, settle: 0)
        let outcome = capture.add(IMUSample(t: 1, accel: Vector3(0, 0, 9.8), gyro: .zero, hasGyro: false))
        guard case .refused(let code, _) = try XCTUnwrap(outcome) else { return XCTFail("not refused") }
        XCTAssertEqual(code, .needsGyro)
    }

    func testTapsGetSamplesUntilDone() {
        let taps = RawSampleTaps()
        XCTAssertFalse(taps.isActive)
        let seen = Mutex(0)
        taps.add { _ in
            seen.withLock {
                $0 += 1; return $0 == 3
            }
        }
        XCTAssertTrue(taps.isActive)
        for i in 0..<10 { taps.feed(Self.still(i)) }
        // The tap said it was done at its third sample and was removed.
        XCTAssertEqual(seen.withLock { $0 }, 3)
        XCTAssertFalse(taps.isActive)
        let id = taps.add { _ in false }
        taps.remove(id)
        XCTAssertFalse(taps.isActive)
    }
}
