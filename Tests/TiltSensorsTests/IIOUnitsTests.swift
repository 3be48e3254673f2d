// SPDX-License-Identifier: Apache-2.0
import TiltCore
import XCTest

@testable import TiltSensors

/// The plausibility of drivers' units (issue 38): scales of real drivers pass, the known mistakes
/// are corrected, anything else is refused with the reason.
final class IIOUnitsTests: XCTestCase {
    func testRealGyroScalesArePlausible() {
        // inv_mpu6050 ±2000 °/s, st_lsm6dsx ±245 °/s, bmi160 ±2000 °/s, 32-bit at ±3273 °/s.
        for (scale, bits) in [(0.001064724, 16), (0.000152716, 16), (0.001065, 16), (0.0000000266, 32)] {
            XCTAssertEqual(IIOUnits.judgeGyro(scale: scale, bits: bits, driver: "x"), .plausible, "\(scale)")
        }
    }

    func testMillidegreesPerSecondAreCorrected() throws {
        // Linux 6.1's fxas21002c: 62.5 m°/s per count.
        guard case .corrected(let c) = IIOUnits.judgeGyro(scale: 62.5, bits: 16, driver: "fxas21002c") else {
            return XCTFail("not corrected")
        }
        XCTAssertEqual(16 * 62.5 * c.factor * 180 / .pi, 1, accuracy: 1e-9, "16 counts are 1 °/s")
        XCTAssertTrue(c.note.contains("millidegrees/s"), c.note)
        XCTAssertTrue(c.note.contains("full range ±2048 °/s"), c.note)
    }

    func testDegreesPerSecondAreCorrected() {
        guard case .corrected(let c) = IIOUnits.judgeGyro(scale: 0.0625, bits: 16, driver: "g") else {
            return XCTFail("not corrected")
        }
        XCTAssertEqual(c.factor, .pi / 180, accuracy: 1e-15)
    }

    func testAScaleNoKnownUnitExplainsIsRefused() {
        guard case .refused(let why) = IIOUnits.judgeGyro(scale: 0.5, bits: 16, driver: "g") else {
            return XCTFail("not refused")
        }
        XCTAssertTrue(why.contains("no known unit mistake explains it"), why)
    }

    func testAccelerometerInGIsCorrectedAndAnythingElseRefused() {
        XCTAssertEqual(IIOUnits.judgeAccel(restingMagnitude: 9.79, driver: "a"), .plausible)
        guard case .corrected(let c) = IIOUnits.judgeAccel(restingMagnitude: 0.9998, driver: "fxos8700") else {
            return XCTFail("not corrected")
        }
        XCTAssertEqual(c.factor, 9.80665)
        guard case .refused = IIOUnits.judgeAccel(restingMagnitude: 40, driver: "a") else {
            return XCTFail("not refused")
        }
    }

    func testTheAccelerometerIsJudgedAtRestOnlyAndOnce() {
        var watch = IIOAccelUnitWatch(rateHz: 50)
        // Turning: not judged.
        for _ in 0..<50 {
            XCTAssertNil(watch.add(accel: Vector3(0, 0, 1), gyro: Vector3(0, 0, 1), driver: "a"))
        }
        // Zeros (no data yet): not judged.
        for _ in 0..<50 { XCTAssertNil(watch.add(accel: .zero, gyro: nil, driver: "a")) }
        var verdicts: [IIOUnits.Verdict] = []
        for _ in 0..<100 {
            if let v = watch.add(accel: Vector3(0, 0, 1.0), gyro: .zero, driver: "a") { verdicts.append(v) }
        }
        XCTAssertEqual(verdicts.count, 1)
        guard case .corrected = verdicts.first else { return XCTFail("\(verdicts)") }
    }
}
