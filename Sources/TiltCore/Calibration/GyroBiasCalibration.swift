// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// Measures the gyro bias: the mean rate while the IMU is held still for `seconds`.
///
/// Feed it raw samples (before the user's calibration). The measurement starts at the first
/// sample and must stay one still stretch (see `StillnessThresholds`) until `seconds` have passed;
/// any motion refuses the measurement with the reason and when it happened, because a bias taken
/// while moving would tilt every later attitude.
public struct GyroBiasCalibration: Sendable {
    /// A finished measurement.
    public struct Result: Sendable, Equatable {
        /// Mean rate over the still time, rad/s: the bias to subtract.
        public var bias: Vector3
        /// RMS deviation of the rate from the bias, rad/s (the gyro's noise).
        public var noise: Double
        /// Samples averaged.
        public var samples: Int
        /// Time covered, seconds.
        public var seconds: Double
    }

    /// Where the measurement stands after a sample.
    public enum Progress: Sendable, Equatable {
        /// Still so far, for this many seconds.
        case measuring(seconds: Double)
        case done(Result)
        case refused(CalibrationError)
    }

    /// A rate this large (rad/s, ≈ 20 °/s, the worst zero-rate offset in common MEMS data sheets)
    /// is a turn, not a bias.
    public static let largestPlausibleBias = 0.35

    /// Seconds of stillness to measure.
    public let seconds: Double
    private var detector: StillnessDetector
    private var firstT: Nanoseconds?
    private var sumGyro = Vector3.zero
    private var count = 0
    private var windows: [StillnessWindow] = []
    /// Where the measurement is.
    public private(set) var progress: Progress = .measuring(seconds: 0)

    /// A measurement over `seconds` of stillness judged by `thresholds`.
    public init(seconds: Double = 5, thresholds: StillnessThresholds = StillnessThresholds()) {
        self.seconds = seconds
        self.detector = StillnessDetector(thresholds: thresholds)
    }

    /// Adds one raw sample. Once done or refused, further samples are ignored.
    @discardableResult
    public mutating func add(_ s: IMUSample) -> Progress {
        guard case .measuring = progress else { return progress }
        if firstT == nil { firstT = s.t }
        if let w = detector.add(s) { judge(w) }
        return progress
    }

    /// The input ended: the result if enough still time was seen, else why not.
    public mutating func finish() -> Progress {
        if case .measuring = progress, let w = detector.flush() { judge(w) }
        if case .measuring(let done) = progress {
            progress = .refused(
                CalibrationError(
                    "input ended after \(fmt(done, 1)) s still; \(fmt(seconds, 1)) s are needed"))
        }
        return progress
    }

    private mutating func judge(_ w: StillnessWindow) {
        let after = Double(w.end - firstT!) * 1e-9
        if !w.isStill || (!windows.isEmpty && !w.continuesStretch) {
            progress = .refused(CalibrationError("moved: \(w.motion ?? "not still") after \(fmt(after, 1)) s"))
            return
        }
        if w.meanGyro.norm > Self.largestPlausibleBias {
            progress = .refused(
                CalibrationError(
                    "moved: turning at \(fmt(w.meanGyro.norm, 3)) rad/s, more than any gyro bias (\(Self.largestPlausibleBias)) after \(fmt(after, 1)) s"
                ))
            return
        }
        windows.append(w)
        sumGyro += w.sumGyro
        count += w.count
        let covered = Double(w.end - windows[0].start) * 1e-9
        // Windows end on sample times, so the covered span falls short of whole windows by one
        // sample period: half a window of slack keeps `--seconds 5` from needing an eleventh window.
        if covered > 0 && covered >= seconds - detector.thresholds.windowSeconds / 2 {
            let bias = sumGyro / Double(count)
            // Second pass over window means and deviations: the within-window variance plus the
            // spread of the window means around the overall mean gives the total variance.
            var ss = 0.0
            for x in windows {
                ss += Double(x.count) * (x.gyroDeviation * x.gyroDeviation + (x.meanGyro - bias).normSquared)
            }
            progress = .done(
                Result(bias: bias, noise: (ss / Double(count)).squareRoot(), samples: count, seconds: covered))
        } else {
            progress = .measuring(seconds: covered)
        }
    }
}
