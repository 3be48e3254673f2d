// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// The calibration steps on synthetic data with known errors.
final class CalibrationTests: XCTestCase {
    typealias Face = AccelCalibration.Face

    // MARK: stillness

    func testStillWindowsFormOneStretchAndMotionBreaksIt() {
        var imu = SyntheticIMU(seed: 1)
        imu.still(.identity, seconds: 2)
        imu.turn(from: .identity, rate: Vector3(0.5, 0, 0), seconds: 1)
        var d = StillnessDetector()
        var windows: [StillnessWindow] = []
        for s in imu.samples { if let w = d.add(s) { windows.append(w) } }
        XCTAssertEqual(windows.count, 5)  // the sixth window is still open
        XCTAssertTrue(windows[0].isStill)
        XCTAssertTrue(windows[1...3].allSatisfy { $0.isStill && $0.continuesStretch })
        XCTAssertEqual(windows[0].count, 50)
        XCTAssertFalse(windows[4].isStill)
        XCTAssertTrue(
            windows[4].motion?.hasPrefix("gyro") == true || windows[4].motion?.hasPrefix("accel") == true,
            windows[4].motion ?? "")
        XCTAssertEqual(d.stillSeconds, 0)
    }

    func testSlowSmoothTurnIsCaughtByTheTiltCheck() {
        // 0.03 rad/s is below the gyro threshold and steady within each window; only the
        // changing gravity direction gives it away.
        var imu = SyntheticIMU(seed: 2)
        imu.turn(from: .identity, rate: Vector3(0.03, 0, 0), seconds: 4)
        var d = StillnessDetector()
        var motions: [String] = []
        for s in imu.samples { if let w = d.add(s), let m = w.motion { motions.append(m) } }
        XCTAssertTrue(motions.contains { $0.hasPrefix("turned") }, "\(motions)")
    }

    // MARK: gyro

    func testGyroBiasIsRecovered() throws {
        var imu = SyntheticIMU(seed: 3)
        imu.gyroBias = Vector3(0.021, -0.0137, 0.0082)
        imu.gyroNoise = 0.005
        imu.still(Quaternion(roll: 0.2, pitch: -0.1, yaw: 1), seconds: 6)
        var cal = GyroBiasCalibration(seconds: 5)
        var result: GyroBiasCalibration.Result?
        for s in imu.samples {
            if case .done(let r) = cal.add(s) { result = r; break }
        }
        let r = try XCTUnwrap(result)
        let err = (r.bias - imu.gyroBias).norm
        XCTAssertLessThan(err, 0.002)
        XCTAssertLessThan(err, 0.0005, "500 samples at σ = 0.005 should do far better than the requirement")
        XCTAssertEqual(r.seconds, 5, accuracy: 0.3)
        XCTAssertEqual(r.noise, 0.005 * 3.0.squareRoot(), accuracy: 0.001)
        print("gyro bias error \(err) rad/s")
    }

    func testMotionDuringGyroCalibrationIsRefusedWithTheReason() {
        var imu = SyntheticIMU(seed: 4)
        imu.gyroBias = Vector3(0.01, 0, 0)
        imu.still(.identity, seconds: 3)
        imu.turn(from: .identity, rate: Vector3(0, 0.2, 0.1), seconds: 2)
        var cal = GyroBiasCalibration(seconds: 5)
        var outcome: GyroBiasCalibration.Progress = .measuring(seconds: 0)
        for s in imu.samples { outcome = cal.add(s) }
        guard case .refused(let e) = outcome else { return XCTFail("expected refusal, got \(outcome)") }
        XCTAssertTrue(e.message.hasPrefix("moved: "), e.message)
        XCTAssertTrue(e.message.contains("after 3."), e.message)
    }

    func testTooShortStillInputIsRefused() {
        var imu = SyntheticIMU(seed: 5)
        imu.still(.identity, seconds: 2)
        var cal = GyroBiasCalibration(seconds: 5)
        for s in imu.samples { cal.add(s) }
        guard case .refused(let e) = cal.finish() else { return XCTFail("expected refusal") }
        XCTAssertTrue(e.message.contains("5.0 s are needed"), e.message)
    }

    func testSteadyTurnFasterThanAnyBiasIsRefused() {
        // 0.5 rad/s about the vertical axis: gravity stays put, windows look steady.
        var imu = SyntheticIMU(seed: 6)
        imu.turn(from: .identity, rate: Vector3(0, 0, 0.5), seconds: 3)
        var cal = GyroBiasCalibration(seconds: 2)
        var outcome: GyroBiasCalibration.Progress = .measuring(seconds: 0)
        for s in imu.samples { outcome = cal.add(s) }
        guard case .refused(let e) = outcome else { return XCTFail("expected refusal, got \(outcome)") }
        XCTAssertTrue(e.message.contains("turning at 0.5"), e.message)
    }

    // MARK: accel

    /// Six faces, each held 3 s with a few degrees of tilt, with moves in between.
    func sixFaces(_ imu: inout SyntheticIMU, order: [Face] = Face.allCases, tiltDeg: Double = 4) {
        var q = Quaternion.identity
        for f in order {
            q = imu.turn(from: q, rate: Vector3(0.8, -0.5, 0.3), seconds: 0.6)
            let pose = imu.faceUp(f, tiltDeg: tiltDeg)
            imu.still(pose, seconds: 3)
            q = pose
        }
    }

    func testSixPositionRecoversOffsetAndScale() throws {
        var imu = SyntheticIMU(seed: 7)
        let gain = Vector3(1.031, 0.968, 1.017)
        imu.accelGain = Matrix3(Vector3(gain.x, 0, 0), Vector3(0, gain.y, 0), Vector3(0, 0, gain.z))
        imu.accelOffset = Vector3(0.25, -0.18, 0.41)
        sixFaces(&imu, order: [.minusX, .plusZ, .plusY, .minusZ, .minusY, .plusX])
        var cal = AccelCalibration()
        var captured: [Face] = []
        for s in imu.samples {
            if case .captured(let p, true)? = cal.add(s) { captured.append(p.face!) }
        }
        _ = cal.finish()
        XCTAssertEqual(captured, [.minusX, .plusZ, .plusY, .minusZ, .minusY, .plusX])
        let fit = try cal.fit()
        XCTAssertEqual(fit.model, .perAxis)
        XCTAssertNil(fit.residualFull)
        for i in 0..<3 {
            let expectedScale = 1 / gain[i]
            XCTAssertEqual(fit.scale[i], expectedScale, accuracy: 0.01 * expectedScale, "scale \(i)")
            XCTAssertEqual(fit.scale[i], expectedScale, accuracy: 0.002 * expectedScale, "scale \(i), well inside 1 %")
            XCTAssertEqual(fit.offset[i], imu.accelOffset[i], accuracy: 0.02, "offset \(i)")
        }
        XCTAssertGreaterThan(fit.residualBefore, 0.2)
        XCTAssertLessThan(fit.residualAfter, 0.01)
        let worstScale = (0..<3).map { abs(fit.scale[$0] * gain[$0] - 1) }.max()!
        let worstOffset = (0..<3).map { abs(fit.offset[$0] - imu.accelOffset[$0]) }.max()!
        print(
            "accel per-axis: worst scale error \(worstScale * 100) %, worst offset error \(worstOffset) m/s², residual \(fit.residualBefore) → \(fit.residualAfter)"
        )
    }

    func testResidualBeforeUsesTheCalibrationInUse() throws {
        var imu = SyntheticIMU(seed: 8)
        imu.accelGain = Matrix3(Vector3(1.05, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1))
        sixFaces(&imu)
        var cal = AccelCalibration()
        for s in imu.samples { _ = cal.add(s) }
        let raw = try cal.fit()
        let good = try cal.fit(current: raw.applied(to: .none))
        XCTAssertLessThan(good.residualBefore, 0.01, "the fitted calibration already removes the error")
        XCTAssertGreaterThan(raw.residualBefore, 0.1)
    }

    func testMissingFacesAreNamed() {
        var imu = SyntheticIMU(seed: 9)
        sixFaces(&imu, order: [.plusZ, .minusZ, .plusX, .plusY])
        var cal = AccelCalibration()
        for s in imu.samples { _ = cal.add(s) }
        XCTAssertEqual(cal.facesMissing, [.minusX, .minusY])
        XCTAssertThrowsError(try cal.fit()) { e in
            XCTAssertTrue("\(e)".hasPrefix("missing faces: -X, -Y"), "\(e)")
        }
    }

    func testShortHoldsAndTiltedPosesDoNotCountAsFaces() {
        var imu = SyntheticIMU(seed: 10)
        imu.still(imu.faceUp(.plusZ), seconds: 1)  // too short
        imu.turn(from: .identity, rate: Vector3(1, 0, 0), seconds: 0.5)
        imu.still(Quaternion(roll: 0.7, pitch: 0.5, yaw: 0), seconds: 3)  // between faces
        var cal = AccelCalibration()
        var events: [AccelCalibration.Event] = []
        for s in imu.samples { if let e = cal.add(s) { events.append(e) } }
        XCTAssertEqual(cal.facesDone, [])
        XCTAssertEqual(cal.poses.count, 1)
        XCTAssertNil(cal.poses[0].face)
        XCTAssertTrue(events.contains { if case .holding(.plusZ, _) = $0 { true } else { false } })
    }

    func testFullModelIsChosenWhenCrossAxisErrorsAreThere() throws {
        var imu = SyntheticIMU(seed: 11)
        let a = Matrix3(Vector3(1.02, 0.025, -0.015), Vector3(0.025, 0.975, 0.02), Vector3(-0.015, 0.02, 1.01))
        imu.accelGain = a
        imu.accelOffset = Vector3(-0.12, 0.3, 0.05)
        sixFaces(&imu, tiltDeg: 3)
        // Eight corner poses: each axis at ±55° from vertical, where cross-axis terms show.
        var q = Quaternion.identity
        for (r, p) in [
            (0.6, 0.6), (-0.6, 0.6), (0.6, -0.6), (-0.6, -0.6), (2.5, 0.6), (-2.5, 0.6), (2.5, -0.6), (-2.5, -0.6),
        ] {
            q = imu.turn(from: q, rate: Vector3(0.7, 0.4, 0), seconds: 0.6)
            q = Quaternion(roll: r, pitch: p, yaw: 0)
            imu.still(q, seconds: 3)
        }
        var cal = AccelCalibration()
        for s in imu.samples { _ = cal.add(s) }
        XCTAssertEqual(cal.poses.count, 14)
        let fit = try cal.fit()
        XCTAssertEqual(fit.model, .full)
        let full = try XCTUnwrap(fit.residualFull)
        XCTAssertLessThan(full, 0.5 * fit.residualPerAxis)
        // M·A should be a rotation; as both are (near) symmetric, close to the identity.
        let m = try XCTUnwrap(fit.matrix)
        let ma = m * a
        for (i, row) in [ma.r0, ma.r1, ma.r2].enumerated() {
            for j in 0..<3 { XCTAssertEqual(row[j], i == j ? 1 : 0, accuracy: 0.005, "(M·A)[\(i)][\(j)]") }
        }
        for i in 0..<3 { XCTAssertEqual(fit.offset[i], imu.accelOffset[i], accuracy: 0.03) }
        print("accel full: residual per-axis \(fit.residualPerAxis) → full \(full) m/s²")
    }

    func testPerAxisFitIsKeptWhenTheFullModelGainsNothing() throws {
        var imu = SyntheticIMU(seed: 12)
        imu.accelGain = Matrix3(Vector3(1.02, 0, 0), Vector3(0, 0.99, 0), Vector3(0, 0, 1.01))
        sixFaces(&imu)
        sixFaces(&imu)  // twelve poses, but no cross-axis error to find
        var cal = AccelCalibration()
        for s in imu.samples { _ = cal.add(s) }
        XCTAssertEqual(cal.poses.count, 12)
        let fit = try cal.fit()
        XCTAssertNotNil(fit.residualFull)
        XCTAssertEqual(fit.model, .perAxis)
        XCTAssertNil(fit.matrix)
    }

    // MARK: neutral

    func testNeutralPoseIsTheMeanAttitudeOfTheFirstLongStillStretch() throws {
        var imu = SyntheticIMU(seed: 13)
        let start = Quaternion(roll: 0.3, pitch: 0, yaw: 0)
        let neutral = Quaternion(roll: 0.1745, pitch: -0.0873, yaw: 0.4)
        imu.still(start, seconds: 2)  // the settle time and a short rest
        imu.turn(from: start, rate: Vector3(-0.4, -0.3, 0.1), seconds: 0.5)
        imu.still(neutral, seconds: 4)
        var cap = NeutralPoseCapture(seconds: 3, settleSeconds: 1)
        // Attitudes as an estimator would give them: the true pose with a little jitter.
        var rng = SplitMix64(seed: 99)
        var result: NeutralPoseCapture.Result?
        var q = start
        for (i, s) in imu.samples.enumerated() {
            if i >= 200 && i < 250 {
                q = (q * Quaternion(axis: Vector3(-0.4, -0.3, 0.1), angle: 0.51 * 0.01)).normalized
            }
            if i >= 250 { q = neutral }
            let jitter = Quaternion(axis: rng.gauss3(1), angle: 0.002)
            if case .done(let r) = cap.add(s, attitude: q * jitter) { result = r; break }
        }
        let r = try XCTUnwrap(result)
        XCTAssertLessThan(r.q.angle(to: neutral) * 180 / .pi, 0.1)
        XCTAssertGreaterThanOrEqual(r.q.w, 0)
        XCTAssertEqual(r.q.norm, 1, accuracy: 1e-12)
        XCTAssertLessThan(r.spreadDegrees, 0.5)
    }

    func testNeutralPoseHandlesTheQuaternionSignFlip() throws {
        var imu = SyntheticIMU(seed: 14)
        let neutral = Quaternion(roll: 0.2, pitch: 0.1, yaw: 3.1)
        imu.still(neutral, seconds: 5)
        var cap = NeutralPoseCapture(seconds: 3, settleSeconds: 0)
        var result: NeutralPoseCapture.Result?
        for (i, s) in imu.samples.enumerated() {
            // −q is the same attitude; an estimator may hand either.
            let q = i % 2 == 0 ? neutral : Quaternion(w: -neutral.w, x: -neutral.x, y: -neutral.y, z: -neutral.z)
            if case .done(let r) = cap.add(s, attitude: q) { result = r; break }
        }
        let r = try XCTUnwrap(result)
        XCTAssertLessThan(r.q.angle(to: neutral), 1e-6)
    }

    func testNeutralPoseRefusedWhenNeverStill() {
        var imu = SyntheticIMU(seed: 15)
        imu.turn(from: .identity, rate: Vector3(0.6, 0.2, 0), seconds: 5)
        var cap = NeutralPoseCapture(seconds: 3)
        for s in imu.samples { cap.add(s, attitude: .identity) }
        guard case .refused(let e) = cap.finish() else { return XCTFail("expected refusal") }
        XCTAssertTrue(e.message.hasPrefix("never held still for 3.0 s"), e.message)
    }

    func testNeutralIsCarriedByIMUCalibrationButNotApplied() {
        let q = Quaternion(roll: 0.1, pitch: 0, yaw: 0)
        let c = IMUCalibration(neutral: q)
        XCTAssertEqual(c.neutral, q)
        let s = IMUSample(t: 0, accel: Vector3(0, 0, 9.8), gyro: Vector3(0.1, 0, 0))
        XCTAssertEqual(Calibrator(c).apply(s), s)
    }
}
