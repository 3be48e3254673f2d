// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltPlatform
import XCTest

/// AttitudeEstimator on synthetic motions whose true orientation is known exactly.
final class FusionTests: XCTestCase {
    static let g = AttitudeEstimator.gravity
    static let deg = Double.pi / 180

    /// Deterministic noise (xorshift), so every run sees the same samples.
    struct Noise {
        var state: UInt64
        mutating func next() -> Double {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Double(state % 1_000_000) / 1_000_000 - 0.5
        }
        mutating func vector(_ scale: Double) -> Vector3 { Vector3(next(), next(), next()) * (2 * scale) }
    }

    /// Samples of a sensor turning at the constant body rate `omega` from `start`, plus `bias` on
    /// the gyro and uniform noise. Returns the samples and the true orientation at each.
    static func simulate(
        from start: Quaternion, omega: Vector3 = .zero, seconds: Double, rate: Double = 100,
        t0: Nanoseconds = 1_000_000_000, bias: Vector3 = .zero,
        accNoise: Double = 0, gyroNoise: Double = 0, seed: UInt64 = 7,
        jitter: Double = 0
    ) -> (samples: [IMUSample], truth: [Quaternion]) {
        var noise = Noise(state: seed)
        var samples: [IMUSample] = [], truth: [Quaternion] = []
        let n = Int(seconds * rate)
        for i in 0..<n {
            // Jitter moves the timestamp (and so the true pose) by up to ±jitter of a period.
            let t = (Double(i) + jitter * 2 * noise.next()) / rate
            let q = (start * Quaternion(axis: omega, angle: omega.norm * t)).normalized
            let accel = q.conjugate.rotate(Vector3(0, 0, g)) + noise.vector(accNoise)
            let gyro = omega + bias + noise.vector(gyroNoise)
            samples.append(IMUSample(t: t0 + Int64((t * 1e9).rounded()), accel: accel, gyro: gyro))
            truth.append(q)
        }
        return (samples, truth)
    }

    /// Roll/pitch error between two orientations, ignoring heading (the BROAD metric), degrees.
    static func inclinationError(_ a: Quaternion, _ b: Quaternion) -> Double {
        let e = a * b.conjugate
        return 2 * acos(min(1, (e.w * e.w + e.z * e.z).squareRoot())) / deg
    }

    func testFirstSampleStartsFromGravity() {
        for (roll, pitch) in [(0.0, 0.0), (30.0, 0.0), (0.0, -50.0), (-120.0, 20.0), (170.0, -80.0)] {
            let q = Quaternion(roll: roll * Self.deg, pitch: pitch * Self.deg, yaw: 0)
            var est = AttitudeEstimator()
            let s = IMUSample(t: 5, accel: q.conjugate.rotate(Vector3(0, 0, Self.g)), gyro: .zero)
            let a = est.update(s)
            XCTAssertLessThan(Self.inclinationError(a.q, q), 0.01, "roll \(roll) pitch \(pitch)")
        }
    }

    func testStaticTiltsWithinHalfADegree() {
        for (roll, pitch) in [(10.0, 0.0), (0.0, 25.0), (-45.0, 30.0), (60.0, -70.0), (135.0, 10.0)] {
            let q = Quaternion(roll: roll * Self.deg, pitch: pitch * Self.deg, yaw: 0.7)
            let (samples, _) = Self.simulate(from: q, seconds: 5, accNoise: 0.2, gyroNoise: 0.01, seed: 11)
            var est = AttitudeEstimator()
            // The very first sample carries its own noise (±0.2 m/s² per axis, up to ~1.5°); from
            // half a second on, the running mean must hold the tilt within 0.5°.
            var worst = 0.0
            for (i, s) in samples.enumerated() {
                let a = est.update(s)
                if i >= 50 { worst = max(worst, Self.inclinationError(a.q, q)) }
            }
            XCTAssertLessThan(worst, 0.5, "roll \(roll) pitch \(pitch): worst error \(worst)°")
            let last = est.update(IMUSample(t: samples.last!.t + 10_000_000, accel: samples.last!.accel, gyro: .zero))
            XCTAssertEqual(last.roll / Self.deg, roll, accuracy: 0.5)
            XCTAssertEqual(last.pitch / Self.deg, pitch, accuracy: 0.5)
        }
    }

    /// Turns at 90°/s about global z for four seconds: the heading must advance 360° within 1 %.
    func testConstantRotationAboutVerticalIntegratesWithinOnePercent() {
        let start = Quaternion(roll: 0.2, pitch: -0.1, yaw: 0)
        // Body rate whose axis is global z at every instant: the start's z axis seen in the body.
        let omega = start.conjugate.rotate(Vector3(0, 0, 90 * Self.deg))
        let (samples, truth) = Self.simulate(from: start, omega: omega, seconds: 4.01, rate: 200)
        var est = AttitudeEstimator()
        var turned = 0.0
        var lastYaw: Double?
        for (s, q) in zip(samples, truth) {
            let a = est.update(s)
            if let ly = lastYaw { turned += remainder(a.yaw - ly, 2 * .pi) }
            lastYaw = a.yaw
            XCTAssertLessThan(Self.inclinationError(a.q, q), 0.5)
        }
        let expected = 90 * Self.deg * Double(samples.last!.t - samples.first!.t) * 1e-9
        XCTAssertEqual(turned / expected, 1, accuracy: 0.01)
    }

    /// Rolls at 30°/s for three seconds: the roll must follow the true angle within 1 % of it.
    func testConstantRotationAboutHorizontalAxisWithinOnePercent() {
        let omega = Vector3(30 * Self.deg, 0, 0)
        let (samples, truth) = Self.simulate(
            from: .identity, omega: omega, seconds: 3, rate: 100,
            accNoise: 0.05, gyroNoise: 0.002)
        var est = AttitudeEstimator()
        var a = est.update(samples[0])
        for s in samples.dropFirst() { a = est.update(s) }
        let trueRoll = truth.last!.roll
        XCTAssertEqual(trueRoll / Self.deg, 89.7, accuracy: 0.5)
        XCTAssertEqual(a.roll / trueRoll, 1, accuracy: 0.01)
    }

    func testBiasLearnedAtRest() {
        let injected = Vector3(0.02, -0.015, 0.01)
        let q = Quaternion(roll: 0.3, pitch: 0.2, yaw: 0)
        let (samples, _) = Self.simulate(
            from: q, seconds: 20, rate: 100, bias: injected,
            accNoise: 0.05, gyroNoise: 0.005)
        var est = AttitudeEstimator()
        var a = est.update(samples[0])
        for s in samples.dropFirst() { a = est.update(s) }
        XCTAssertTrue(a.atRest)
        XCTAssertLessThan((a.gyroBias - injected).norm, 0.001, "bias \(a.gyroBias)")
        XCTAssertLessThan(Self.inclinationError(a.q, q), 0.5)
        // Learnt, it stays subtracted: no drift while still.
        XCTAssertEqual(est.bias, a.gyroBias)
    }

    /// Never still (a slow tumble), so only motion bias estimation can find the bias.
    func testBiasLearnedDuringMotion() {
        let injected = Vector3(0.01, -0.012, 0.008)
        var samples: [IMUSample] = []
        var noise = Noise(state: 3)
        var q = Quaternion(roll: 0.1, pitch: 0, yaw: 0)
        let rate = 100.0
        for i in 0..<Int(240 * rate) {
            let t = Double(i) / rate
            // Rates along changing axes so every sensor axis is horizontal some of the time.
            let w = Vector3(0.6 * sin(0.31 * t), 0.5 * cos(0.23 * t), 0.4 * sin(0.17 * t + 1))
            q = (q * Quaternion(axis: w, angle: w.norm / rate)).normalized
            let accel = q.conjugate.rotate(Vector3(0, 0, Self.g)) + noise.vector(0.05)
            samples.append(IMUSample(t: Int64(t * 1e9), accel: accel, gyro: w + injected + noise.vector(0.003)))
        }
        var est = AttitudeEstimator()
        var rest = 0
        for s in samples { if est.update(s).atRest { rest += 1 } }
        XCTAssertEqual(rest, 0, "the tumble must never look like rest")
        XCTAssertLessThan((est.bias - injected).norm, 0.25 * injected.norm, "bias \(est.bias)")
    }

    /// A 2 s hole in the samples while the sensor is turned over: the estimator must not integrate
    /// across it, and must be right again from the first sample after it.
    func testGapRestartsTiltFromGravityAndKeepsBias() {
        let before = Quaternion(roll: 20 * Self.deg, pitch: 0, yaw: 0)
        let after = Quaternion(roll: -30 * Self.deg, pitch: 10 * Self.deg, yaw: 0)
        let injected = Vector3(0.01, 0, 0)
        let a = Self.simulate(from: before, seconds: 6, bias: injected)
        let b = Self.simulate(from: after, seconds: 1, t0: a.samples.last!.t + 2_000_000_000, bias: injected)
        var est = AttitudeEstimator()
        for s in a.samples { _ = est.update(s) }
        let learnt = est.bias
        XCTAssertLessThan((learnt - injected).norm, 0.003)
        // Fake a huge rate on the first sample after the gap: it must not be integrated over 2 s.
        var first = b.samples[0]
        first.gyro = Vector3(3, 3, 3)
        let r = est.update(first)
        XCTAssertLessThan(Self.inclinationError(r.q, after), 0.5)
        XCTAssertEqual(est.bias, learnt)
        var worst = 0.0
        for s in b.samples.dropFirst() { worst = max(worst, Self.inclinationError(est.update(s).q, after)) }
        XCTAssertLessThan(worst, 0.5)
    }

    func testRepeatedOrBackwardTimestampsChangeNothing() {
        let q = Quaternion(roll: 0.4, pitch: 0, yaw: 0)
        let (samples, _) = Self.simulate(from: q, seconds: 1)
        var est = AttitudeEstimator()
        var last = est.update(samples[0])
        for s in samples.dropFirst() { last = est.update(s) }
        var bad = samples.last!
        bad.gyro = Vector3(5, 0, 0)
        XCTAssertEqual(est.update(bad).q, last.q)  // same timestamp again
        bad.t -= 50_000_000
        XCTAssertEqual(est.update(bad).q, last.q)  // from the past
    }

    /// Timestamps jittered by ±40 % of the period: dt comes from them, so the rotation stays right.
    func testTimestampJitter() {
        let omega = Vector3(0, 45 * Self.deg, 0)
        let (samples, truth) = Self.simulate(from: .identity, omega: omega, seconds: 1.5, rate: 60, jitter: 0.4)
        var est = AttitudeEstimator()
        var worst = 0.0
        for (s, q) in zip(samples, truth) { worst = max(worst, Self.inclinationError(est.update(s).q, q)) }
        XCTAssertLessThan(worst, 0.5)
    }

    func testResetStartsAgainFromGravity() {
        var est = AttitudeEstimator(initialBias: Vector3(0.001, 0, 0))
        let (a, _) = Self.simulate(from: Quaternion(roll: 0.5, pitch: 0, yaw: 0), seconds: 1)
        for s in a { _ = est.update(s) }
        est.reset()
        let q = Quaternion(roll: -0.7, pitch: 0.3, yaw: 0)
        let r = est.update(IMUSample(t: 99, accel: q.conjugate.rotate(Vector3(0, 0, Self.g)), gyro: .zero))
        XCTAssertLessThan(Self.inclinationError(r.q, q), 0.01)
        XCTAssertFalse(r.atRest)
    }

    func testParameterOverridesByName() throws {
        var p = AttitudeEstimator.Parameters()
        try p.set("accTau", 4)
        XCTAssertEqual(p.accTau, 4)
        for name in AttitudeEstimator.Parameters.names { try p.set(name, name == "accOrder" ? 3 : 1) }
        XCTAssertThrowsError(try p.set("accTau", 0))
        XCTAssertThrowsError(try p.set("accOrder", 4))
        XCTAssertThrowsError(try p.set("nope", 1)) { error in
            XCTAssertTrue("\(error)".contains("unknown fusion parameter 'nope'"))
        }
        XCTAssertThrowsError(try p.set("accTau", .nan))
        XCTAssertThrowsError(try p.set("accTau", -1))
    }
}
