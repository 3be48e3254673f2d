// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import XCTest

/// A gyro polled slower than its chip runs: each reading is the rate of its moment, not a mean
/// since the previous reading (`AttitudeEstimator.Parameters.rateWindow`, set by the daemon from
/// what the IIO source says). A busy machine leaves gaps between polls; held over a gap, the last
/// reading turns a nod into degrees of error, while interpolated it costs little.
final class PolledRateWindowTests: XCTestCase {
    /// Worst inclination error (degrees) after the first second, on a head rolling ±20° at 1 Hz
    /// read at instants 16.7 ms apart with a 40 or 80 ms gap every half second (a starved poller).
    static func worstError(rateWindow: Double) -> Double {
        var p = AttitudeEstimator.Parameters()
        p.rateWindow = rateWindow
        var est = AttitudeEstimator(parameters: p)
        let amplitude = 20 * Double.pi / 180, w = 2 * Double.pi
        var t = 0.0, k = 0, worst = 0.0
        while t < 6 {
            let roll = amplitude * sin(w * t)
            let q = Quaternion(axis: Vector3(1, 0, 0), angle: roll)
            let accel = q.conjugate.rotate(Vector3(0, 0, AttitudeEstimator.gravity))
            let gyro = Vector3(amplitude * w * cos(w * t), 0, 0)  // the rate at the read's instant
            let a = est.update(IMUSample(t: 1_000_000_000 + Int64((t * 1e9).rounded()), accel: accel, gyro: gyro))
            if t > 1 { worst = max(worst, FusionTests.inclinationError(a.q, q)) }
            k += 1
            t += k % 30 == 0 ? 0.040 + 0.040 * Double(k / 30 % 2) : 1.0 / 60
        }
        return worst
    }

    func testInstantReadingsAreInterpolatedAcrossGaps() {
        let held = Self.worstError(rateWindow: 1)
        let interpolated = Self.worstError(rateWindow: 60.0 / 2000)
        // Measured: held 4.9°, interpolated 0.27° (the numbers this test was written against).
        XCTAssertGreaterThan(held, 1, "the gaps should cost the held readings over a degree")
        XCTAssertLessThan(interpolated, held / 2, "held \(held)°, interpolated \(interpolated)°")
        XCTAssertLessThan(interpolated, 1, "interpolated \(interpolated)°")
    }
}
