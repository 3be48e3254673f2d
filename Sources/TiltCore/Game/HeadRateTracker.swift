// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// The head's angular rate and stillness as the game sees them, one sample at a time.
///
/// The rate comes from the gyroscope when the daemon passes it; otherwise (an accelerometer-only
/// device, or attitudes alone in tests) it is derived from consecutive attitudes, which is the
/// same thing for a gyro-driven estimator and a smoothed version of it for an accelerometer-only one.
struct HeadRateTracker: Sendable {
    /// Still below this rate, rad/s.
    var stillLimit: Double
    /// The latest angular rate, sensor frame, rad/s.
    private(set) var rate: Vector3 = .zero
    /// Since when the head has been still (nil while moving or before the first sample).
    private(set) var stillSince: Nanoseconds?
    /// The last sample at which the head moved faster than the limit.
    private(set) var lastMoving: Nanoseconds?
    private var lastQ: Quaternion?
    private var lastT: Nanoseconds?

    init(stillDps: Double) { stillLimit = stillDps * .pi / 180 }

    /// The rate in °/s.
    var rateDps: Double { rate.norm * 180 / .pi }

    /// True when the rate is known and below the limit.
    var isStill: Bool { stillSince != nil }

    /// How long the head has been still at `t` (0 when moving).
    func stillFor(at t: Nanoseconds) -> Nanoseconds { stillSince.map { t - $0 } ?? 0 }

    mutating func add(t: Nanoseconds, q: Quaternion, rate given: Vector3?) {
        defer { lastQ = q; lastT = t }
        if let g = given {
            rate = g
        } else if let pq = lastQ, let pt = lastT, t > pt {
            // Body rate from two attitudes: q_prev⁻¹ ⊗ q = rotation over dt, in the sensor frame.
            var d = pq.conjugate * q
            if d.w < 0 { d = Quaternion(w: -d.w, x: -d.x, y: -d.y, z: -d.z) }
            let dt = Double(t - pt) * 1e-9
            let s = d.vector.norm
            let angle = 2 * atan2(s, d.w)
            rate = s > 1e-12 ? d.vector * (angle / s / dt) : .zero
        } else {
            rate = .zero
        }
        if rate.norm < stillLimit {
            if stillSince == nil { stillSince = t }
        } else {
            stillSince = nil
            lastMoving = t
        }
    }

    /// Forgets the history (after a reset).
    mutating func reset() { self = HeadRateTracker(stillDps: stillLimit * 180 / .pi) }
}

/// Watches whether the head frame in use can be right: a head turns about its ear-to-ear axis
/// (nods, looking down) and its vertical axis (looking around) far more than about its
/// front-to-back axis (leaning an ear to the shoulder). When the axis taken as front-to-back
/// carries the largest share of the rotation for long, it is really the ear-to-ear axis (a
/// wrong `back_axis`, or a board mounted off the convention without calibration): tilts
/// measured with it are sideways leans, and the game says so instead of judging them.
///
/// Rotation is summed in degrees with a 20 s memory (only while moving and not mainly turning
/// about the vertical axis). Suspect when at least
/// 180° of lean has been seen and lean exceeds twice the nodding; clear again when lean drops
/// below 1.2 × nodding. On the head-gestures recordings a wrong back axis gives ratios of 2.8–4.3
/// while the right one gives 0.3–0.7 on nod logs and up to 1.5 on shake logs (docs/game.md).
struct OrientationCheck: Sendable {
    static let memorySeconds = 20.0
    static let minLeanDeg = 180.0
    static let suspectRatio = 2.0
    static let clearRatio = 1.2
    private(set) var lean = 0.0
    private(set) var nodding = 0.0
    private(set) var suspect = false
    private var lastT: Nanoseconds?

    /// Adds one moving sample's rates (rad/s, head frame). Returns the new verdict when it changed.
    mutating func add(t: Nanoseconds, pitch: Double, roll: Double, yaw: Double, moving: Bool) -> Bool? {
        defer { lastT = t }
        guard let last = lastT, t > last else { return nil }
        let dt = min(0.25, Double(t - last) * 1e-9)
        // Turning samples are left out: a shake rocks the head sideways too (the shake logs
        // show a lean of up to 2× the nodding while shaking), which says nothing about the axes.
        guard moving, abs(yaw) < max(abs(pitch), abs(roll)) else { return nil }
        let decay = exp(-dt / Self.memorySeconds)
        lean = lean * decay + abs(roll) * dt * 180 / .pi
        nodding = nodding * decay + abs(pitch) * dt * 180 / .pi
        if !suspect, lean >= Self.minLeanDeg, lean > Self.suspectRatio * nodding {
            suspect = true
            return true
        }
        if suspect, lean < Self.clearRatio * nodding {
            suspect = false
            return false
        }
        return nil
    }

    /// Starts over (a new frame).
    mutating func reset() { self = OrientationCheck() }
}
