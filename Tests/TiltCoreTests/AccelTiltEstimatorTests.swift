// SPDX-License-Identifier: Apache-2.0
import TiltCore
import XCTest

/// `AccelTiltEstimator` on synthetic motion: static tilts, a head nod (the low-pass lag), rest
/// detection and jolt rejection. Its accuracy on real recordings is in bench/accel-only.
final class AccelTiltEstimatorTests: XCTestCase {
    let g = 9.80665
    let deg = Double.pi / 180

    func accel(roll: Double, pitch: Double) -> Vector3 {
        Quaternion(roll: roll, pitch: pitch, yaw: 0).conjugate.rotate(Vector3(0, 0, g))
    }

    func testStaticTiltsAreExactAndYawIsAbsent() {
        for (r, p) in [(0.0, 0.0), (30.0, -20.0), (-75.0, 40.0), (170.0, 10.0)] {
            var e = AccelTiltEstimator()
            var a: Attitude?
            for i in 0..<120 { a = e.update(t: Int64(i) * 16_666_667, accel: accel(roll: r * deg, pitch: p * deg)) }
            XCTAssertEqual(a!.roll / deg, r, accuracy: 1e-6)
            XCTAssertEqual(a!.pitch / deg, p, accuracy: 1e-6)
            XCTAssertEqual(a!.yaw, 0, accuracy: 1e-9)
            XCTAssertFalse(a!.hasYaw)
            XCTAssertTrue(a!.atRest, "still for 2 s")
        }
    }

    func testFollowsANodWithLessThanAFifthOfASecondLag() {
        // Pitch 0 → 40° → 0 over 1 s (a deliberate nod), sampled at 60 Hz.
        var e = AccelTiltEstimator()
        var peakT = 0.0, peak = 0.0
        for i in 0..<180 {
            let t = Double(i) / 60
            let pitch = t < 0.5 ? 0 : (t < 1.5 ? 40 * sin((t - 0.5) * .pi) : 0)
            let a = e.update(t: Int64(t * 1e9), accel: accel(roll: 0, pitch: pitch * deg))
            if a.pitch / deg > peak { peak = a.pitch / deg; peakT = t }
        }
        XCTAssertGreaterThan(peak, 36, "the nod's amplitude survives the low-pass")
        XCTAssertLessThan(peakT - 1.0, 0.2, "peak lag")
        XCTAssertGreaterThanOrEqual(peakT, 1.0)
    }

    func testAJoltMovesTheTiltLessThanAPlainLowPassWould() {
        var gated = AccelTiltEstimator()
        var p = AccelTiltEstimator.Parameters()
        p.gate = 1e6  // no gating
        var plain = AccelTiltEstimator(parameters: p)
        var worstGated = 0.0, worstPlain = 0.0
        for i in 0..<240 {
            let t = Int64(i) * 16_666_667
            // Level, with a 100 ms sideways jolt of 3 g at 2 s.
            var a = Vector3(0, 0, g)
            if i >= 120 && i < 126 { a = a + Vector3(3 * g, 0, 0) }
            worstGated = max(worstGated, abs(gated.update(t: t, accel: a).pitch / deg))
            worstPlain = max(worstPlain, abs(plain.update(t: t, accel: a).pitch / deg))
        }
        XCTAssertLessThan(worstGated, worstPlain / 2)
        XCTAssertGreaterThan(worstPlain, 5)
    }

    func testAGapRestartsFromTheNextSample() {
        var e = AccelTiltEstimator()
        for i in 0..<60 { _ = e.update(t: Int64(i) * 16_666_667, accel: accel(roll: 0, pitch: 0)) }
        let a = e.update(t: 10_000_000_000, accel: accel(roll: 50 * deg, pitch: 0))
        XCTAssertEqual(a.roll / deg, 50, accuracy: 1e-6)
        XCTAssertFalse(a.atRest)
    }
}

/// Recordings of an accelerometer alone keep "no gyro" through `tiltd record` and a replay.
final class AccelOnlyRecordingTests: XCTestCase {
    func testEmptyGyroFieldsRoundTrip() throws {
        let s = IMUSample(t: 1_000_000_000, accelOnly: Vector3(0.0123, 9.8061, 0.041))
        let line = RecordingFormat.format(s)
        XCTAssertEqual(line, "1000000000,0.0123,9.8061,0.041,,,")
        let back = try XCTUnwrap(try RecordingFormat.parse(line: Substring(line)))
        XCTAssertFalse(back.hasGyro)
        XCTAssertEqual(back.accel, s.accel)
        let full = try XCTUnwrap(try RecordingFormat.parse(line: "5,1,2,3,0.1,0.2,0.3"))
        XCTAssertTrue(full.hasGyro)
        XCTAssertThrowsError(try RecordingFormat.parse(line: "5,1,2,3,0.1,,0.3"), "half a gyro is an error")
    }
}
