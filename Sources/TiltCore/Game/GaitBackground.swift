// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// How hard the head has been turning about the nod and shake axes lately: the RMS of each
/// rate over about the last 3 s, as it stood at any moment of the last 4 s (`rms(at:)`).
///
/// While walking or running the whole head is carried all the time, so the whole-body test
/// (`ActivityTracker`) cannot tell a gesture from the gait and would let no answer through
/// (issue 30: 17 % of real nods and shakes played onto real walks answered). What tells them
/// apart instead is size: a walker's head swings through the gait at 15–40 °/s RMS about the
/// ear-to-ear axis and 25–60 °/s about the vertical (the everyday set's walking recordings),
/// a deliberate nod peaks near 100 °/s or more (the head-gestures logs). So while the gait is
/// seen a gesture answers when its peak stands well above what the head was doing just before
/// it began (`AnswerLimits.gaitPeakRatio`). Pure; constant cost per sample.
struct GaitBackground: Sendable {
    static let binNs: Nanoseconds = 40_000_000
    static let bins = 100
    /// The averaging time of the mean squares, s.
    static let tau = 3.0

    private var meanSquare = (pitch: 0.0, yaw: 0.0)
    private var lastT: Nanoseconds?
    /// One snapshot of `meanSquare` per 40 ms bin, the last 4 s, with the bin's start.
    private var ring = [(t: Nanoseconds, pitch: Double, yaw: Double)](
        repeating: (Nanoseconds.min, 0, 0), count: bins)
    private var head = 0

    /// The first sample, or the first after a hole: the mean squares are known from `tau` after it.
    private var since: Nanoseconds?

    /// Adds one sample's rates about the head frame's axes, rad/s.
    mutating func add(t: Nanoseconds, pitch: Double, yaw: Double) {
        if lastT.map({ t < $0 || t - $0 > 1_000_000_000 }) ?? true { since = t }
        let dt = lastT.map { min(0.25, max(0, Double(t - $0) * 1e-9)) } ?? 0
        lastT = t
        let k = dt / Self.tau
        meanSquare.pitch += (pitch * pitch - meanSquare.pitch) * min(1, k)
        meanSquare.yaw += (yaw * yaw - meanSquare.yaw) * min(1, k)
        let last = ring[(head + Self.bins - 1) % Self.bins].t
        if last == .min || t - last >= Self.binNs {
            ring[head] = (t, meanSquare.pitch, meanSquare.yaw)
            head = (head + 1) % Self.bins
        }
    }

    /// Whether the RMS at `t` stands for what the head did: `tau` of samples came before it
    /// (from the start, the mean squares rise from zero, and anything would stand out of them).
    func isKnown(at t: Nanoseconds) -> Bool {
        since.map { t - $0 >= Nanoseconds(saturating: Self.tau * 1e9) } ?? false
    }

    /// The RMS rates (rad/s) as they stood at the last snapshot at or before `t` (the oldest kept
    /// when `t` is older than 4 s).
    func rms(at t: Nanoseconds) -> (pitch: Double, yaw: Double) {
        var best: (t: Nanoseconds, pitch: Double, yaw: Double)?
        for e in ring where e.t != .min && e.t <= t && (best == nil || e.t > best!.t) { best = e }
        let e = best ?? ring.filter { $0.t != .min }.min { $0.t < $1.t } ?? (0, 0, 0)
        return (e.pitch.squareRoot(), e.yaw.squareRoot())
    }
}
