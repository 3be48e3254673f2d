// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// Learns the head frame from "look ahead, then nod down once" (`tiltd calibrate neutral`).
///
/// Feed calibrated samples (mount matrix and gyro bias applied). While the head is still for
/// `stillSeconds`, the mean acceleration gives *up* (at rest the accelerometer reads +g along
/// the axis pointing up). The nod that follows turns the head about its ear-to-ear axis: the
/// dominant direction of the angular rate over the nod (the principal axis of Σ ω ωᵀ) is that
/// axis, and its sign is fixed by which way gravity tips while nodding (the head goes *down*
/// from looking ahead; a positive rotation about the wearer's left turns the face down), or by
/// the first swing when gravity hardly moved. Forward is then left × up.
///
/// Why gravity and gyro rather than the attitude: both are fixed to the board, so the result
/// does not depend on the estimator's heading, which drifts with a 6-axis IMU.
///
/// Each movement after the still part (an episode: moving until 0.1 s of calm, at most 2 s) is
/// judged on its own; the nod is the largest clean one, taken once the head has been calm for
/// `nodSettleSeconds` after it. So a twitch before the nod, or sway while holding still, is not
/// mistaken for it. Feed it from the first sample: the stillness of the look-ahead pose counts.
///
/// Refused with a reason (that of the largest movement seen) when: the head never held still;
/// no nod within `nodTimeoutSeconds` of holding still; the nod was smaller than `minNodDeg`; its
/// axis was more than 30° from horizontal (a turn or a shake, not a nod); or less than 70% of
/// the rotation was about one axis (not one clean nod).
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

    /// How long the head must be calm after a nod before the calibration takes it, seconds: a
    /// bigger nod that follows at once is still looked at.
    public var nodSettleSeconds = 1.0

    /// Where it is.
    public private(set) var progress: Progress = .waitingForStill
    private var stillSince: Nanoseconds?
    private var accelSum = Vector3.zero
    private var accelCount = 0
    private var up = Vector3.zero
    private var upKnownAt: Nanoseconds = 0
    private var lastT: Nanoseconds?
    // The movement under way (an *episode*: moving samples up to 0.1 s of calm, at most 2 s):
    // Σ ω ωᵀ (upper triangle), its samples, and when it calmed down.
    private var m = [Double](repeating: 0, count: 6)
    private var nodRates: [(dt: Double, w: Vector3, a: Vector3)] = []
    private var calmSince: Nanoseconds?
    private var nodSeconds = 0.0
    private var episodeEnd: Nanoseconds = 0
    // After an episode cut at 2 s the motion goes on: it is not a new nod (its first swing need
    // not be the way down), so nothing counts until the head calms for a moment.
    private var ignoreUntilCalm = false
    private var totalMoving = 0
    // The largest clean nod seen so far, and the largest movement refused (for the reason).
    private var best: (frame: HeadFrame, size: Double)?
    private var bestRefusal: (reason: String, size: Double)?

    /// A calibration with the default limits.
    public init() {}

    /// Adds one calibrated sample; returns the progress.
    ///
    /// Every movement after the still part is judged on its own (an episode ends after 0.1 s of
    /// calm or 2 s of motion). Why not just the first one: a real wearer twitches before nodding
    /// (a 29 °/s turn about the vertical, then the nod 0.15 s later), and judging the twitch as
    /// the nod refused a good calibration. The nod taken is the largest clean one, once the head
    /// has been calm for `nodSettleSeconds` after it; a refusal names the largest movement's fault.
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
            if rateDps >= stillDps, ignoreUntilCalm {
                calmSince = nil
                episodeEnd = s.t
            } else if rateDps >= stillDps {
                progress = .nodding
                addNod(s, dt: dt)
            } else {
                if ignoreUntilCalm {
                    if calmSince == nil { calmSince = s.t }
                    if Double(s.t - calmSince!) * 1e-9 >= 0.1 - 1e-6 { ignoreUntilCalm = false; calmSince = nil }
                }
                // Still looking ahead: keep refining up until a nod is found.
                if best == nil {
                    accelSum += s.accel; accelCount += 1
                    up = (accelSum / Double(accelCount)).normalized
                }
                if let b = best, Double(s.t - episodeEnd) * 1e-9 >= nodSettleSeconds - 1e-6 {
                    progress = .done(b.frame)
                } else if best == nil, Double(s.t - upKnownAt) * 1e-9 > nodTimeoutSeconds {
                    progress = .refused(
                        bestRefusal?.reason
                            ?? "no nod within \(Int(saturating: nodTimeoutSeconds)) s of holding still; look ahead, then nod down once"
                    )
                }
            }
        case .nodding:
            addNod(s, dt: dt)
            nodSeconds += dt
            // The episode ends when the head calms down for a moment (0.1 s), or after 2 s of
            // motion: what follows (looking around, more nods) must not blur the axis.
            if rateDps < stillDps {
                if calmSince == nil { calmSince = s.t }
                if Double(s.t - calmSince!) * 1e-9 >= 0.1 - 1e-6 { endEpisode(at: s.t, cut: false) }
            } else {
                calmSince = nil
            }
            if case .nodding = progress, nodSeconds >= 2 { endEpisode(at: s.t, cut: true) }
        }
        return progress
    }

    /// The input ended: the result if a nod was seen, else why not.
    public mutating func finish() -> Progress {
        switch progress {
        case .done, .refused: return progress
        case .waitingForStill: return .refused("never held still for \(stillSeconds) s while looking ahead")
        case .nodding: endEpisode(at: lastT ?? 0, cut: false)
        case .waitingForNod: break
        }
        if let b = best { return .done(b.frame) }
        return .refused(bestRefusal?.reason ?? "no nod seen after holding still; look ahead, then nod down once")
    }

    /// Judges the episode just ended and goes back to waiting.
    private mutating func endEpisode(at t: Nanoseconds, cut: Bool) {
        switch judgeEpisode() {
        case .success(let nod):
            if nod.size > (best?.size ?? 0) { best = nod }
        case .failure(let refusal):
            if refusal.size > (bestRefusal?.size ?? -1) { bestRefusal = (refusal.reason, refusal.size) }
        }
        m = [Double](repeating: 0, count: 6)
        nodRates.removeAll(keepingCapacity: true)
        calmSince = nil
        nodSeconds = 0
        episodeEnd = t
        ignoreUntilCalm = cut
        if case .nodding = progress { progress = .waitingForNod }
    }

    private struct Refusal: Error { var reason: String; var size: Double }

    /// The episode as a nod (the frame and its largest swing), or why it is not one (with its
    /// total rotation, to rank refusals).
    private func judgeEpisode() -> Result<(frame: HeadFrame, size: Double), Refusal> {
        let axis = principalAxis()
        let total = nodRates.reduce(0.0) { $0 + $1.w.normSquared * $1.dt }
        let along = nodRates.reduce(0.0) { $0 + pow($1.w.dot(axis), 2) * $1.dt }
        let turned = nodRates.reduce(0.0) { $0 + $1.w.norm * $1.dt } * 180 / .pi
        guard total > 0, along / total >= 0.7 else {
            return .failure(
                Refusal(
                    reason:
                        "the motion was not one clean nod (\(fmt(100 * along / max(total, 1e-12), 0))% of it about one axis, 70% needed); nod straight down and back up",
                    size: turned))
        }
        guard abs(axis.dot(up)) <= 0.5 else {
            return .failure(
                Refusal(
                    reason:
                        "the head turned about an axis \(Int(saturating: (asin(min(1, abs(axis.dot(up)))) * 180 / .pi).rounded()))° from horizontal: that was a turn or a shake, not a nod; nod down once",
                    size: turned))
        }
        // The nod's size is its largest swing (the logs' wearers nod 4–10° per swing, fast).
        // Its sign: the head goes down from looking ahead, and a head turned face-down by θ
        // about its left sees gravity turned the other way, so (â × up)·left = sin θ ≥ 0 over
        // a nod. That holds for a nod begun at the bottom of the last one (its first swing goes
        // up), which the first swing would get wrong; only without that evidence (under 1° on
        // average) does the first swing (the way down) decide.
        var firstSwing = 0.0, swing = 0.0, largest = 0.0, swingSign = 0.0, tipped = 0.0, time = 0.0
        for r in nodRates {
            let v = r.w.dot(axis)
            let s: Double = v > 0 ? 1 : -1
            if s != swingSign { swingSign = s; swing = 0 }
            swing += abs(v) * r.dt * 180 / .pi
            largest = max(largest, swing)
            if firstSwing == 0, swing >= 2 { firstSwing = s }
            tipped += r.a.normalized.cross(up).dot(axis) * r.dt
            time += r.dt
        }
        let sign = abs(tipped) > sin(Double.pi / 180) * time ? (tipped > 0 ? 1.0 : -1.0) : firstSwing
        guard sign != 0, largest >= minNodDeg else {
            return .failure(
                Refusal(
                    reason: "the nod was only \(fmt(largest, 0))°; nod down at least \(fmt(minNodDeg, 0))°",
                    size: turned))
        }
        let left = axis * sign
        guard let frame = HeadFrame(up: up, forward: left.cross(up), source: .calibrated) else {
            return .failure(Refusal(reason: "could not make a frame from the measurement", size: turned))
        }
        return .success((frame, largest))
    }

    private mutating func addNod(_ s: IMUSample, dt: Double) {
        let w = s.gyro
        nodRates.append((dt, w, s.accel))
        m[0] += w.x * w.x * dt; m[1] += w.x * w.y * dt; m[2] += w.x * w.z * dt
        m[3] += w.y * w.y * dt; m[4] += w.y * w.z * dt; m[5] += w.z * w.z * dt
        totalMoving += 1
        if totalMoving > 100_000 {
            progress = .refused("the head kept moving; look ahead, hold still, then nod down once")
        }
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
