// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// Captures the wearer's neutral pose: the mean attitude over the first still stretch of
/// `seconds`, for the game's relative mode (tilts are then measured from this pose).
///
/// Feed it calibrated samples together with the estimator's attitude for each. Windows that
/// start within `settleSeconds` of the first sample are skipped so the estimator has converged
/// from its gravity initialisation. A stretch broken by motion starts over: the wearer only
/// has to hold still once. Stillness uses the looser `StillnessThresholds.wornHead` by default:
/// the natural sway of a head held still is not motion for this purpose.
///
/// With a 6-axis IMU the heading part of the result is arbitrary (it drifts); the tilt part
/// (roll and pitch against gravity) is what the pose is for.
public struct NeutralPoseCapture: Sendable {
    /// The captured neutral pose.
    public struct Result: Sendable, Equatable {
        /// Mean attitude (sensor → z-up world), a unit quaternion with w ≥ 0.
        public var q: Quaternion
        /// Largest angle between any window's mean attitude and `q`, degrees: how steady the pose was.
        public var spreadDegrees: Double
        /// Samples averaged.
        public var samples: Int
        /// Time covered, seconds.
        public var seconds: Double
    }

    /// Where the capture is.
    public enum Progress: Sendable, Equatable {
        /// Waiting for the estimator to settle or for stillness (`reason` when motion reset it).
        case waiting(reason: String?)
        /// Still for `seconds` so far.
        case holding(seconds: Double)
        case done(Result)
        case refused(CalibrationError)
    }

    /// Seconds the head must be held steady.
    public let seconds: Double
    /// Seconds ignored at the start (the wearer settling).
    public let settleSeconds: Double
    private var detector: StillnessDetector
    private var firstT: Nanoseconds?
    /// Attitudes of the samples in the detector's open window (sign-aligned sum and count).
    private var pendingSum = Quaternion(w: 0, x: 0, y: 0, z: 0)
    private var pendingCount = 0
    /// The stretch so far: window mean attitudes and the running sum.
    private var stretch: [Quaternion] = []
    private var stretchSum = Quaternion(w: 0, x: 0, y: 0, z: 0)
    private var stretchCount = 0
    private var stretchStart: Nanoseconds = 0
    private var longest = 0.0
    /// Where the capture is.
    public private(set) var progress: Progress = .waiting(reason: nil)

    /// A capture of `seconds` after `settleSeconds`, steadiness judged by `thresholds`.
    public init(seconds: Double = 3, settleSeconds: Double = 1, thresholds: StillnessThresholds = .wornHead) {
        self.seconds = seconds; self.settleSeconds = settleSeconds
        self.detector = StillnessDetector(thresholds: thresholds)
    }

    /// Adds a calibrated sample and the estimator's attitude at that sample.
    @discardableResult
    public mutating func add(_ s: IMUSample, attitude q: Quaternion) -> Progress {
        switch progress {
        case .done, .refused: return progress;
        default: break
        }
        if firstT == nil { firstT = s.t }
        if let w = detector.add(s) { judge(w) }
        accumulate(q)
        return progress
    }

    /// The input ended: the result if a long enough still stretch was seen, else why not.
    public mutating func finish() -> Progress {
        switch progress {
        case .done, .refused: return progress
        default:
            progress = .refused(
                CalibrationError(
                    "never held still for \(fmt(seconds, 1)) s (longest still stretch \(fmt(longest, 1)) s)"))
            return progress
        }
    }

    private mutating func accumulate(_ q: Quaternion) {
        // q and −q are the same attitude: align signs before averaging.
        let ref = stretch.first ?? (pendingCount > 0 ? pendingSum : q)
        let d = ref.w * q.w + ref.x * q.x + ref.y * q.y + ref.z * q.z
        let a = d < 0 ? Quaternion(w: -q.w, x: -q.x, y: -q.y, z: -q.z) : q
        pendingSum = Quaternion(
            w: pendingSum.w + a.w, x: pendingSum.x + a.x, y: pendingSum.y + a.y, z: pendingSum.z + a.z)
        pendingCount += 1
    }

    private mutating func judge(_ w: StillnessWindow) {
        let windowQ = pendingSum.normalized, windowN = pendingCount
        let windowSum = pendingSum
        pendingSum = Quaternion(w: 0, x: 0, y: 0, z: 0); pendingCount = 0
        if Double(w.start - firstT!) * 1e-9 < settleSeconds { progress = .waiting(reason: nil); return }
        if !w.isStill {
            resetStretch()
            progress = .waiting(reason: w.motion)
            return
        }
        if !w.continuesStretch || stretch.isEmpty {
            resetStretch()
            stretchStart = w.start
        }
        // Align this window's sum with the stretch before adding it.
        let ref = stretch.first ?? windowQ
        let sign: Double = ref.w * windowQ.w + ref.x * windowQ.x + ref.y * windowQ.y + ref.z * windowQ.z < 0 ? -1 : 1
        stretch.append(sign < 0 ? Quaternion(w: -windowQ.w, x: -windowQ.x, y: -windowQ.y, z: -windowQ.z) : windowQ)
        stretchSum = Quaternion(
            w: stretchSum.w + sign * windowSum.w, x: stretchSum.x + sign * windowSum.x,
            y: stretchSum.y + sign * windowSum.y, z: stretchSum.z + sign * windowSum.z)
        stretchCount += windowN
        let held = Double(w.end - stretchStart) * 1e-9
        longest = max(longest, held)
        if held + 1e-9 < seconds - detector.thresholds.windowSeconds / 2 { progress = .holding(seconds: held); return }
        var mean = stretchSum.normalized
        if mean.w < 0 { mean = Quaternion(w: -mean.w, x: -mean.x, y: -mean.y, z: -mean.z) }
        let spread = stretch.map { $0.angle(to: mean) }.max() ?? 0
        progress = .done(Result(q: mean, spreadDegrees: spread * 180 / .pi, samples: stretchCount, seconds: held))
    }

    private mutating func resetStretch() {
        stretch = []; stretchSum = Quaternion(w: 0, x: 0, y: 0, z: 0); stretchCount = 0
    }
}
