import Glibc

/// Learns the head frame from "look ahead, then nod down once" (`tiltd calibrate neutral`).
///
/// Feed calibrated samples (mount matrix and gyro bias applied). While the head is still for
/// `stillSeconds`, the mean acceleration gives *up* (at rest the accelerometer reads +g along
/// the axis pointing up). The nod that follows turns the head about its ear-to-ear axis: the
/// dominant direction of the angular rate over the nod (the principal axis of Σ ω ωᵀ) is that
/// axis, and its sign is fixed by the first swing, which goes *down* (a positive rotation about
/// the wearer's left turns the face down). Forward is then left × up.
///
/// Why gravity and gyro rather than the attitude: both are fixed to the board, so the result
/// does not depend on the estimator's heading, which drifts with a 6-axis IMU.
///
/// Refused with a reason when: the head never held still; the nod was smaller than
/// `minNodDeg`; its axis was more than 30° from horizontal (a turn or a shake, not a nod); or less
/// than 70% of the rotation was about one axis (not one clean nod).
public struct HeadFrameCalibration: Sendable {
    /// Where the calibration is.
    public enum Progress: Sendable, Equatable {
        /// Waiting for the head to hold still (looking ahead).
        case waitingForStill
        /// Up is known; waiting for the nod.
        case waitingForNod
        /// The nod is under way.
        case nodding
        /// Done: the frame.
        case done(HeadFrame)
        /// Refused, with the reason for the user.
        case refused(String)
    }

    /// Stillness needed before the nod, seconds.
    public var stillSeconds = 0.5
    /// Still below this rate, °/s (as the game's `still_dps`).
    public var stillDps = 20.0
    /// Smallest nod accepted, degrees (its largest swing).
    public var minNodDeg = 5.0
    /// How long to wait for the nod after the still part, seconds.
    public var nodTimeoutSeconds = 10.0

    /// Where it is.
    public private(set) var progress: Progress = .waitingForStill
    private var stillSince: Nanoseconds?
    private var accelSum = Vector3.zero
    private var accelCount = 0
    private var up = Vector3.zero
    private var upKnownAt: Nanoseconds = 0
    private var lastT: Nanoseconds?
    // Σ ω ωᵀ over the nod (upper triangle), the samples of the nod, and when it calmed down.
    private var m = [Double](repeating: 0, count: 6)
    private var nodRates: [(dt: Double, w: Vector3)] = []
    private var calmSince: Nanoseconds?
    private var nodSeconds = 0.0

    /// A calibration with the default limits.
    public init() {}

    /// Adds one calibrated sample; returns the progress.
    @discardableResult
    public mutating func add(_ s: IMUSample) -> Progress {
        defer { lastT = s.t }
        let dt = lastT.map { min(0.25, max(0, Double(s.t - $0) * 1e-9)) } ?? 0
        let rateDps = s.gyro.norm * 180 / .pi
        switch progress {
        case .done, .refused:
            break
        case .waitingForStill:
            if rateDps < stillDps {
                if stillSince == nil { stillSince = s.t; accelSum = .zero; accelCount = 0 }
                accelSum += s.accel; accelCount += 1
                if Double(s.t - stillSince!) * 1e-9 >= stillSeconds {
                    up = (accelSum / Double(accelCount)).normalized
                    upKnownAt = s.t
                    progress = .waitingForNod
                }
            } else {
                stillSince = nil
            }
        case .waitingForNod:
            if rateDps >= stillDps {
                progress = .nodding
                addNod(s.gyro, dt: dt)
            } else if rateDps < stillDps {
                // Still looking ahead: keep refining up.
                accelSum += s.accel; accelCount += 1
                up = (accelSum / Double(accelCount)).normalized
                if Double(s.t - upKnownAt) * 1e-9 > nodTimeoutSeconds {
                    progress = .refused(
                        "no nod within \(Int(nodTimeoutSeconds)) s of holding still; look ahead, then nod down once")
                }
            }
        case .nodding:
            addNod(s.gyro, dt: dt)
            nodSeconds += dt
            // The nod ends when the head calms down for a moment (0.1 s), or after 2 s of
            // motion: what follows (looking around, more nods) must not blur the axis.
            if rateDps < stillDps {
                if calmSince == nil { calmSince = s.t }
                if Double(s.t - calmSince!) * 1e-9 >= 0.1 - 1e-6 { progress = finish() }
            } else {
                calmSince = nil
            }
            if case .nodding = progress, nodSeconds >= 2 { progress = finish() }
        }
        return progress
    }

    /// The input ended: the result if the nod completed, else why not.
    public mutating func finish() -> Progress {
        switch progress {
        case .done, .refused: return progress
        case .waitingForStill: return .refused("never held still for \(stillSeconds) s while looking ahead")
        case .waitingForNod: return .refused("no nod seen after holding still; look ahead, then nod down once")
        case .nodding: break
        }
        let axis = principalAxis()
        let total = nodRates.reduce(0.0) { $0 + $1.w.normSquared * $1.dt }
        let along = nodRates.reduce(0.0) { $0 + pow($1.w.dot(axis), 2) * $1.dt }
        guard total > 0, along / total >= 0.7 else {
            return .refused(
                "the motion was not one clean nod (\(fmt(100 * along / max(total, 1e-12), 0))% of it about one axis, 70% needed); nod straight down and back up"
            )
        }
        guard abs(axis.dot(up)) <= 0.5 else {
            return .refused(
                "the head turned about an axis \(Int((asin(min(1, abs(axis.dot(up)))) * 180 / .pi).rounded()))° from horizontal: that was a turn or a shake, not a nod; nod down once"
            )
        }
        // The first swing (until the rate about the axis changes sign) is the way down; the
        // nod's size is its largest swing (the logs' wearers nod 4–10° per swing, fast).
        var sign = 0.0, swing = 0.0, largest = 0.0, swingSign = 0.0
        for r in nodRates {
            let v = r.w.dot(axis)
            let s: Double = v > 0 ? 1 : -1
            if s != swingSign { swingSign = s; swing = 0 }
            swing += abs(v) * r.dt * 180 / .pi
            largest = max(largest, swing)
            if sign == 0, swing >= 2 { sign = s }
        }
        guard sign != 0, largest >= minNodDeg else {
            return .refused("the nod was only \(fmt(largest, 0))°; nod down at least \(fmt(minNodDeg, 0))°")
        }
        let left = axis * sign
        let forward = left.cross(up)
        guard let frame = HeadFrame(up: up, forward: forward, source: .calibrated) else {
            return .refused("could not make a frame from the measurement")
        }
        return .done(frame)
    }

    private mutating func addNod(_ w: Vector3, dt: Double) {
        nodRates.append((dt, w))
        m[0] += w.x * w.x * dt; m[1] += w.x * w.y * dt; m[2] += w.x * w.z * dt
        m[3] += w.y * w.y * dt; m[4] += w.y * w.z * dt; m[5] += w.z * w.z * dt
        if Double(nodRates.count) > 10_000 { progress = .refused("the nod went on too long") }
    }

    /// The dominant eigenvector of the symmetric matrix `m` (power iteration from the largest column).
    private func principalAxis() -> Vector3 {
        let c0 = Vector3(m[0], m[1], m[2]), c1 = Vector3(m[1], m[3], m[4]), c2 = Vector3(m[2], m[4], m[5])
        var v = [c0, c1, c2].max { $0.norm < $1.norm }!.normalized
        for _ in 0..<50 {
            let n = Vector3(c0.dot(v), c1.dot(v), c2.dot(v)).normalized
            if n.norm == 0 { break }
            v = n
        }
        return v
    }
}
