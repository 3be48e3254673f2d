// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import XCTest

/// AttitudeEstimator's magnetometer heading (`updateMag`) on synthetic motions whose true
/// orientation and field are known exactly.
final class MagneticHeadingTests: XCTestCase {
    static let deg = Double.pi / 180
    /// A field of 45 µT dipping 65° (mid-latitude Europe), in ENU (x east, y north, z up).
    static let earth = Vector3(0, 45 * cos(65 * deg), -45 * sin(65 * deg))

    /// Heading error (rotation about the vertical of q ⊗ truth⁻¹, the BROAD metric), degrees.
    static func headingError(_ q: Quaternion, _ truth: Quaternion) -> Double {
        let e = q * truth.conjugate
        return 2 * atan2(abs(e.z), abs(e.w)) / deg
    }

    /// Runs the estimator over `samples`, feeding the field every `magEvery`-th sample:
    /// `field(i, truth)` gives the sensor-frame reading. Returns the attitudes and magDisturbed flags.
    static func run(
        _ sim: (samples: [IMUSample], truth: [Quaternion]), magEvery: Int = 1,
        field: (Int, Quaternion) -> Vector3 = { _, q in q.conjugate.rotate(earth) }
    ) -> (q: [Quaternion], disturbed: [Bool]) {
        var est = AttitudeEstimator()
        var qs: [Quaternion] = [], flags: [Bool] = []
        for (i, s) in sim.samples.enumerated() {
            var a = est.update(s)
            if i % magEvery == 0 { a = est.updateMag(t: s.t, field: field(i, sim.truth[i])) }
            qs.append(a.q); flags.append(est.magDisturbed)
        }
        return (qs, flags)
    }

    func testFirstFieldSampleSetsTheHeadingAnyWayRound() {
        for yaw in [0.0, 75.0, -140.0, 179.0] {
            let start = Quaternion(roll: 20 * Self.deg, pitch: -10 * Self.deg, yaw: yaw * Self.deg)
            let sim = FusionTests.simulate(from: start, seconds: 1)
            let r = Self.run(sim)
            XCTAssertLessThan(Self.headingError(r.q[0], sim.truth[0]), 0.01, "yaw \(yaw)")
            XCTAssertLessThan(Self.headingError(r.q.last!, sim.truth.last!), 0.01, "yaw \(yaw)")
            XCTAssertFalse(r.disturbed.last!)
        }
    }

    func testWithoutAFieldTheHeadingIsTheGyros() {
        var est = AttitudeEstimator()
        let sim = FusionTests.simulate(
            from: Quaternion(roll: 0, pitch: 0, yaw: 1), omega: Vector3(0.1, 0, 0.5), seconds: 5)
        var plain = AttitudeEstimator()
        for s in sim.samples { XCTAssertEqual(est.update(s), plain.update(s)) }
        XCTAssertFalse(est.hasMagneticHeading)
        XCTAssertFalse(est.magDisturbed)
        XCTAssertNil(est.magneticReference)
    }

    func testHeadingLeavesTheInclinationAlone() {
        // A gyro bias makes the 6-axis heading drift; the field must pull the heading back while
        // roll and pitch stay exactly those of the 6-axis filter.
        let sim = FusionTests.simulate(
            from: Quaternion(roll: 0.3, pitch: -0.2, yaw: 2), omega: Vector3(0.2, -0.3, 0.6), seconds: 60,
            bias: Vector3(0, 0, 0.002), gyroNoise: 0.01, seed: 3)
        var six = AttitudeEstimator(), nine = AttitudeEstimator()
        for (i, s) in sim.samples.enumerated() {
            let a = six.update(s)
            _ = nine.update(s)
            let b = nine.updateMag(t: s.t, field: sim.truth[i].conjugate.rotate(Self.earth))
            let up6 = a.q.conjugate.rotate(Vector3(0, 0, 1)), up9 = b.q.conjugate.rotate(Vector3(0, 0, 1))
            XCTAssertLessThan((up6 - up9).norm, 1e-9)
        }
        XCTAssertEqual(nine.magneticReference!.strength, 45, accuracy: 0.5)
        XCTAssertEqual(nine.magneticReference!.dip, 65 * Self.deg, accuracy: 1 * Self.deg)
        // 0.002 rad/s of bias drifts 7°/min: the field holds the heading within two degrees.
        XCTAssertLessThan(Self.headingError(nine.q, sim.truth.last!), 2)
    }

    func testMagnetOnTheBoardIsRejectedAndTheHeadingRestsOnTheGyro() {
        // Turning; from 20 s to 40 s a magnet rides on the board: +30 µT along sensor x (hard
        // iron), which changes strength and dip as the board turns. The gyro is exact here, so the
        // heading must stay as it was; the field's own heading is tens of degrees off. In some
        // orientations the sum happens to have the clean field's strength and dip and steers a
        // little (strength and dip are all the detector sees): 3.2° at worst here.
        let sim = FusionTests.simulate(
            from: Quaternion(roll: 0.2, pitch: 0.1, yaw: 0), omega: Vector3(0.3, 0.2, 0.8), seconds: 60, rate: 100)
        let r = Self.run(sim) { i, q in
            q.conjugate.rotate(Self.earth) + (i >= 2000 && i < 4000 ? Vector3(30, 0, 0) : .zero)
        }
        let during = 2000..<4000
        let flagged = during.filter { r.disturbed[$0] }.count
        XCTAssertGreaterThan(Double(flagged) / Double(during.count), 0.8, "most of the magnet's time is flagged")
        XCTAssertFalse(r.disturbed[1999])
        var fieldWorst = 0.0
        for i in stride(from: 0, to: sim.samples.count, by: 50) {
            XCTAssertLessThan(Self.headingError(r.q[i], sim.truth[i]), 4, "sample \(i)")
            if during.contains(i) {
                // The heading the disturbed field alone would give.
                let m = sim.truth[i].rotate(sim.truth[i].conjugate.rotate(Self.earth) + Vector3(30, 0, 0))
                fieldWorst = max(fieldWorst, abs(atan2(m.x, m.y)) / Self.deg)
            }
        }
        XCTAssertGreaterThan(fieldWorst, 20)
        XCTAssertLessThan(Self.headingError(r.q[5999], sim.truth[5999]), 0.5, "the clean field pulls it back")
        // Clean again soon after the magnet is gone (magMinClean 0.5 s).
        XCTAssertFalse(r.disturbed[4000 + 60])
    }

    func testSlowerMagnetometerAndAWrongStartConverge() {
        // IMU at 200 Hz, field at 20 Hz. The first field reading is wrong by 40° (a passing
        // disturbance that keeps strength and dip); the heading then converges on the field with
        // its time constant (9 s): within 1° after 45 s.
        let sim = FusionTests.simulate(
            from: Quaternion(roll: 0.1, pitch: 0.4, yaw: -1), omega: Vector3(0, 0.1, 0.3), seconds: 60, rate: 200)
        let turned = Quaternion(axis: Vector3(0, 0, 1), angle: 40 * Self.deg)
        let r = Self.run(sim, magEvery: 10) { i, q in
            q.conjugate.rotate(i == 0 ? turned.rotate(Self.earth) : Self.earth)
        }
        XCTAssertGreaterThan(Self.headingError(r.q[0], sim.truth[0]), 39)
        XCTAssertLessThan(Self.headingError(r.q[9000], sim.truth[9000]), 1)
    }

    func testANewPlacesFieldBecomesTheReference() {
        // The field changes for good to one 30 % weaker (another building) while the sensor keeps
        // turning: disturbed at first, then, after magNewTime (20 s) of a field that stays the same
        // in the global frame, the new reference, and the heading follows it again.
        let sim = FusionTests.simulate(
            from: Quaternion(roll: 0, pitch: 0, yaw: 0), omega: Vector3(0.1, 0.1, 0.6), seconds: 60, rate: 100)
        let weaker = Self.earth * 0.7
        let r = Self.run(sim) { i, q in q.conjugate.rotate(i < 1000 ? Self.earth : weaker) }
        XCTAssertTrue(r.disturbed[1100])
        XCTAssertFalse(r.disturbed[4000])
        XCTAssertLessThan(Self.headingError(r.q[5999], sim.truth[5999]), 0.5)
    }

    func testResetForgetsTheHeadingButNotTheReference() {
        var est = AttitudeEstimator()
        let sim = FusionTests.simulate(from: Quaternion(roll: 0, pitch: 0, yaw: 0.5), seconds: 1)
        for (i, s) in sim.samples.enumerated() {
            _ = est.update(s)
            est.updateMag(t: s.t, field: sim.truth[i].conjugate.rotate(Self.earth))
        }
        XCTAssertTrue(est.hasMagneticHeading)
        est.reset()
        XCTAssertFalse(est.hasMagneticHeading)
        XCTAssertNotNil(est.magneticReference)
        // A field sample before any IMU sample is ignored.
        let a = est.updateMag(t: 0, field: Self.earth)
        XCTAssertEqual(a.q, .identity)
        XCTAssertFalse(est.hasMagneticHeading)
        // After the reset a disturbed field (twice as strong) does not set the heading; the clean
        // one does, once it has been clean for magMinClean (0.5 s).
        let later = FusionTests.simulate(from: Quaternion(roll: 0, pitch: 0, yaw: -2), seconds: 1, t0: 5_000_000_000)
        _ = est.update(later.samples[0])
        est.updateMag(t: later.samples[0].t, field: later.truth[0].conjugate.rotate(Self.earth * 2))
        XCTAssertFalse(est.hasMagneticHeading)
        XCTAssertTrue(est.magDisturbed)
        XCTAssertEqual(est.magneticReference!.strength, 45, accuracy: 0.01)
        var b = Attitude(t: 0, q: .identity, atRest: false, gyroBias: .zero)
        for i in 1..<later.samples.count {
            _ = est.update(later.samples[i])
            b = est.updateMag(t: later.samples[i].t, field: later.truth[i].conjugate.rotate(Self.earth))
            // 10 ms per sample: set once 0.5 s of clean field have passed (around sample 50).
            if i <= 45 { XCTAssertFalse(est.hasMagneticHeading, "sample \(i)") }
            if i >= 55 { XCTAssertTrue(est.hasMagneticHeading, "sample \(i)") }
        }
        XCTAssertLessThan(Self.headingError(b.q, later.truth.last!), 0.01)
    }
}
