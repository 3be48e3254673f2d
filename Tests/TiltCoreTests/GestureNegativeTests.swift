// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltPlatform
import XCTest

@testable import TiltCore

/// Head motion that must not answer in the `nod` vocabulary: walking's head bob, talking's
/// small quick movements, looking around (turn, look, turn back), standing still. Built from
/// head angles with their exact rates (head frame = the assumed convention: x right, y up,
/// z back), at 30 and 100 Hz, with gyro noise. Figures from the literature on head motion in
/// walking (pitch 2–3° at the step rate, ≈ 2 Hz; yaw and roll a few degrees at the stride rate).
final class GestureNegativeTests: XCTestCase {
    /// Samples of a head whose nod (pitch, + = down), turn (yaw, + = left) and lean (roll)
    /// angles in degrees follow `angles(t)`, plus a vertical acceleration `bounce(t)` (m/s²).
    static func samples(
        seconds: Double, rateHz: Double, seed: UInt64 = 1,
        angles: (Double) -> (pitch: Double, yaw: Double, roll: Double),
        bounce: (Double) -> Double = { _ in 0 }
    ) -> [IMUSample] {
        var rng = SplitMix64(seed: seed)
        func noise(_ sd: Double) -> Double { sd * (Double(rng.next() >> 11) / Double(1 << 53) * 2 - 1) * 1.7 }
        let d = Double.pi / 180, h = 1e-4
        var out: [IMUSample] = []
        for k in 0..<Int(seconds * rateHz) {
            let t = Double(k) / rateHz
            let a = angles(t), b = angles(t + h)
            // Head → world: yaw about up (y), then nod about the left axis (−x), then lean about forward (−z).
            func q(_ x: (pitch: Double, yaw: Double, roll: Double)) -> Quaternion {
                Quaternion(axis: Vector3(0, 1, 0), angle: x.yaw * d)
                    * Quaternion(axis: Vector3(-1, 0, 0), angle: x.pitch * d)
                    * Quaternion(axis: Vector3(0, 0, -1), angle: x.roll * d)
            }
            let q0 = q(a), q1 = q(b)
            var dq = q0.conjugate * q1
            if dq.w < 0 { dq = Quaternion(w: -dq.w, x: -dq.x, y: -dq.y, z: -dq.z) }
            let s = dq.vector.norm
            let w = s > 1e-15 ? dq.vector * (2 * atan2(s, dq.w) / s / h) : .zero
            // World up is +y here; the accelerometer reads +g up plus the bounce, in the head frame.
            let accel = q0.conjugate.rotate(Vector3(0, 9.80665 + bounce(t), 0))
            out.append(
                IMUSample(
                    t: 1_000_000_000 + Nanoseconds((t * 1e9).rounded()),
                    accel: accel + Vector3(noise(0.05), noise(0.05), noise(0.05)),
                    gyro: w + Vector3(noise(0.01), noise(0.01), noise(0.01))))
        }
        return out
    }

    static func nodGame(_ samples: [IMUSample]) throws -> GameJudge.Summary {
        var o = GameJudge.Options()
        o.gestures = .nod
        return try GameJudge.play(samples, options: o).summary
    }

    func testWalkingTalkingLookingAroundAndStandingStillDoNotAnswer() throws {
        let tau = 2 * Double.pi
        for rate in [30.0, 100] {
            // Walking: 2 Hz steps, pitch ±3°, yaw ±4° and roll ±2° at the 1 Hz stride, ±3 m/s² bounce.
            let walking = Self.samples(seconds: 60, rateHz: rate) { t in
                (3 * sin(tau * 2 * t), 4 * sin(tau * t), 2 * sin(tau * t + 1))
            } bounce: { t in
                3 * sin(tau * 2 * t)
            }
            // Talking: small quick movements, 1–2° at 3–5 Hz on every axis (rates up to ≈ 35 °/s,
            // under the detector's 40 °/s floor; a talker nodding along by more is nodding).
            let talking = Self.samples(seconds: 60, rateHz: rate, seed: 2) { t in
                (1.7 * sin(tau * 3.1 * t) * sin(tau * 0.3 * t), 1.2 * sin(tau * 4.3 * t + 2), 1 * sin(tau * 5 * t))
            }
            // Looking around: turn 60° in 0.6 s, look for 1 s, turn back; then look down 30° and back.
            let looking = Self.samples(seconds: 60, rateHz: rate, seed: 3) { t in
                let c = t.truncatingRemainder(dividingBy: 6)
                func ease(_ x: Double) -> Double { x <= 0 ? 0 : x >= 1 ? 1 : (1 - cos(.pi * x)) / 2 }
                let yaw = 60 * (ease(c / 0.6) - ease((c - 1.6) / 0.6))
                let pitch = 30 * (ease((c - 3) / 0.6) - ease((c - 4.6) / 0.6))
                return (pitch, yaw, 0)
            }
            let still = Self.samples(seconds: 30, rateHz: rate, seed: 4) { _ in (0, 0, 0) }
            for (name, s) in [
                ("walking", walking), ("talking", talking), ("looking around", looking), ("standing still", still),
            ] {
                let summary = try Self.nodGame(s)
                XCTAssertEqual(summary.decisions, 0, "\(name) at \(rate) Hz")
                XCTAssertEqual(summary.nodsDetected + summary.shakesDetected, 0, "\(name) at \(rate) Hz")
            }
            // And the same generator's deliberate gestures do answer: three 12° nods, three 20° shakes.
            let nodding = Self.samples(seconds: 4, rateHz: rate, seed: 5) { t in
                (t > 1 && t < 2.5 ? 12 * sin(tau * 2 * (t - 1)).magnitude : 0, 0, 0)
            }
            XCTAssertGreaterThan(try Self.nodGame(nodding).nodsDetected, 0, "nods at \(rate) Hz")
            let shaking = Self.samples(seconds: 4, rateHz: rate, seed: 6) { t in
                (0, t > 1 && t < 2.5 ? 20 * sin(tau * 2 * (t - 1)) : 0, 0)
            }
            XCTAssertGreaterThan(try Self.nodGame(shaking).shakesDetected, 0, "shakes at \(rate) Hz")
        }
    }
}
