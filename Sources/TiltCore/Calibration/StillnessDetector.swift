// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform
import TiltProtocol

/// Thresholds that decide when the IMU is held still, shared by every calibration step.
///
/// Samples are judged in disjoint windows of `windowSeconds`. A window is *still* when
/// - the RMS deviation of the gyro from the window's mean rate is at most `gyroRate` (rad/s), and
/// - the RMS deviation of the acceleration vector from the window's mean is at most `accel` (m/s²)
///   (this covers both the variance of ‖a‖ from translation and a changing direction from turning).
///
/// Consecutive still windows form one *still stretch* while each stays close to the stretch's first
/// window: the mean rate within `gyroRate`, the gravity direction within `tiltDegrees`, and ‖a‖
/// within `accel`. That catches a slow, smooth turn that no single window would notice.
///
/// The defaults pass a hand-held or head-worn MEMS IMU held still (gyro noise ≈ 0.002–0.01 rad/s,
/// accel noise ≈ 0.02–0.05 m/s² RMS, hand tremor below 0.1 m/s²) and reject deliberate motion.
public struct StillnessThresholds: Sendable, Equatable {
    /// Length of one judged window, seconds.
    public var windowSeconds: Double = 0.5
    /// Largest gyro deviation (rad/s, ≈ 2.9 °/s) within a window and between windows of a stretch.
    public var gyroRate: Double = 0.05
    /// Largest acceleration deviation (m/s²) within a window, and of ‖a‖ between windows of a stretch.
    public var accel: Double = 0.15
    /// Largest change of the gravity direction within a stretch, degrees.
    public var tiltDegrees: Double = 3
    /// A window needs at least this many samples to be judged still.
    public var minSamples: Int = 3

    /// The defaults (a device put down or held firmly).
    public init() {}

    /// For a device that is put down or held firmly: gyro and accel calibration.
    public static let device = StillnessThresholds()

    /// For a worn device whose wearer holds their head still: a head sways by a degree or two at
    /// a few °/s even then, which is still for a pose but would spoil a gyro bias.
    public static let wornHead: StillnessThresholds = {
        var t = StillnessThresholds()
        t.gyroRate = 0.15
        t.accel = 0.3
        t.tiltDegrees = 5
        return t
    }()
}

/// What one window of samples looked like.
public struct StillnessWindow: Sendable, Equatable {
    /// First and last sample time in the window.
    public var start: Nanoseconds, end: Nanoseconds
    /// Samples in the window.
    public var count: Int
    /// Mean acceleration over the window, m/s².
    public var meanAccel: Vector3
    /// Mean angular rate over the window, rad/s.
    public var meanGyro: Vector3
    /// Sum of the samples' rates and accelerations (to build exact sample means over a stretch).
    public var sumAccel: Vector3, sumGyro: Vector3
    /// RMS of ‖g − ḡ‖ within the window, rad/s.
    public var gyroDeviation: Double
    /// RMS of ‖a − ā‖ within the window, m/s².
    public var accelDeviation: Double
    /// True when the window alone is still.
    public var isStill: Bool
    /// True when the window is still *and* continues the current still stretch.
    public var continuesStretch: Bool
    /// Why the window is not still, or why it broke the stretch (e.g. "gyro 0.21 rad/s > 0.05").
    public var motion: String?
}

/// Cuts a sample stream into windows and judges each one (see `StillnessThresholds`).
///
/// Pure: time comes from the samples. `add` returns a window once a sample arrives past its end;
/// that sample opens the next window.
public struct StillnessDetector: Sendable {
    /// What counts as still.
    public let thresholds: StillnessThresholds
    private var pending: [IMUSample] = []
    /// The first still window of the current stretch, if there is one.
    public private(set) var stretchStart: StillnessWindow?
    /// Start time of the current still stretch and when its last window ended.
    public private(set) var stretchEnd: Nanoseconds?

    /// A detector judging windows by `thresholds`.
    public init(thresholds: StillnessThresholds = StillnessThresholds()) {
        self.thresholds = thresholds
        pending.reserveCapacity(256)
    }

    /// Seconds the current still stretch has lasted (0 when there is none).
    public var stillSeconds: Double {
        guard let s = stretchStart, let e = stretchEnd else { return 0 }
        return Double(e - s.start) * 1e-9
    }

    /// Adds a sample; returns the window it closed, if any.
    public mutating func add(_ s: IMUSample) -> StillnessWindow? {
        if let first = pending.first {
            // A clock that jumps back (a restarted source) starts afresh rather than judging garbage.
            if s.t < pending.last!.t {
                pending.removeAll(keepingCapacity: true); stretchStart = nil; stretchEnd = nil
            } else if Double(s.t - first.t) * 1e-9 >= thresholds.windowSeconds {
                let w = close()
                pending.append(s)
                return w
            }
        }
        pending.append(s)
        return nil
    }

    /// Judges whatever samples are pending as a (short) last window; nil if there are too few.
    public mutating func flush() -> StillnessWindow? {
        guard pending.count >= thresholds.minSamples else { pending.removeAll(); return nil }
        return close()
    }

    /// Forgets the current stretch (e.g. after the caller has used it up).
    public mutating func resetStretch() { stretchStart = nil; stretchEnd = nil }

    private mutating func close() -> StillnessWindow {
        var w = Self.measure(pending)
        pending.removeAll(keepingCapacity: true)
        w.motion = judgeAlone(w)
        w.isStill = w.motion == nil
        if w.isStill, let first = stretchStart {
            if let why = judgeAgainst(first, w) {
                w.motion = why
                stretchStart = w; stretchEnd = w.end  // a new stretch starts here
            } else {
                w.continuesStretch = true
                stretchEnd = w.end
            }
        } else if w.isStill {
            stretchStart = w; stretchEnd = w.end
        } else {
            stretchStart = nil; stretchEnd = nil
        }
        return w
    }

    private func judgeAlone(_ w: StillnessWindow) -> String? {
        let t = thresholds
        if w.count < t.minSamples { return "only \(w.count) samples in \(fmt(t.windowSeconds, 1)) s" }
        if w.gyroDeviation > t.gyroRate { return "gyro \(fmt(w.gyroDeviation, 3)) rad/s > \(fmt(t.gyroRate, 3))" }
        if w.accelDeviation > t.accel { return "accel \(fmt(w.accelDeviation, 3)) m/s² > \(fmt(t.accel, 3))" }
        return nil
    }

    private func judgeAgainst(_ first: StillnessWindow, _ w: StillnessWindow) -> String? {
        let t = thresholds
        let dg = (w.meanGyro - first.meanGyro).norm
        if dg > t.gyroRate { return "gyro \(fmt(dg, 3)) rad/s > \(fmt(t.gyroRate, 3))" }
        let tilt = Self.angleDegrees(first.meanAccel, w.meanAccel)
        if tilt > t.tiltDegrees { return "turned \(fmt(tilt, 1))° > \(fmt(t.tiltDegrees, 1))" }
        let dn = abs(w.meanAccel.norm - first.meanAccel.norm)
        if dn > t.accel { return "accel \(fmt(dn, 3)) m/s² > \(fmt(t.accel, 3))" }
        return nil
    }

    /// Statistics of a run of samples (no judgement).
    static func measure(_ samples: [IMUSample]) -> StillnessWindow {
        var sa = Vector3.zero, sg = Vector3.zero
        for s in samples { sa += s.accel; sg += s.gyro }
        let n = Double(max(samples.count, 1))
        let ma = sa / n, mg = sg / n
        var va = 0.0, vg = 0.0
        for s in samples { va += (s.accel - ma).normSquared; vg += (s.gyro - mg).normSquared }
        return StillnessWindow(
            start: samples.first?.t ?? 0, end: samples.last?.t ?? 0, count: samples.count,
            meanAccel: ma, meanGyro: mg, sumAccel: sa, sumGyro: sg,
            gyroDeviation: (vg / n).squareRoot(), accelDeviation: (va / n).squareRoot(),
            isStill: false, continuesStretch: false, motion: nil)
    }

    /// Angle between two vectors, degrees.
    public static func angleDegrees(_ a: Vector3, _ b: Vector3) -> Double {
        let c = a.dot(b) / max(a.norm * b.norm, 1e-12)
        return acos(max(-1, min(1, c))) * 180 / .pi
    }
}

/// Formats a number with `digits` decimals (0–9), as `%.Nf` does, for messages: the protocol's
/// own formatter, so the pure core needs no Foundation's `String(format:)`.
func fmt(_ x: Double, _ digits: Int) -> String {
    guard x.isFinite else { return x.description }
    var w = JSONWriter(capacity: 32)
    w.double(x, digits: digits, trailingZeros: true)
    return w.text
}

/// A calibration that could not be made, with the reason a person can act on.
public struct CalibrationError: Error, Equatable, CustomStringConvertible {
    /// Why, for people.
    public var message: String
    /// A refusal saying `message`.
    public init(_ message: String) { self.message = message }
    /// Same as `message`.
    public var description: String { message }
}
