// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Synchronization
import TiltCore
import TiltPlatform

/// Plausibility of a driver's units. IIO promises SI (m/s², rad/s), but drivers get it wrong:
/// Linux 6.1's `fxas21002c` prints `in_anglvel_scale = 62.5` (millidegrees/s per count), so a
/// 1 °/s turn reads 1091 rad/s and the attitude spins; its neighbour `fxos8700` scales the
/// accelerometer in g, so gravity reads 1 "m/s²". Nothing downstream can tell: the estimator
/// trusts its inputs. So the scale is checked against what a real sensor can be — a gyroscope's
/// full range is within 100–10,000 °/s, an accelerometer at rest reads about 1 g — and a known
/// mistake is corrected when exactly one known unit explains the value; anything else is refused
/// with the reason. (The magnetometer has its own check against the World Magnetic Model.)
///
/// Pure: the caller passes the scale and the readings.
public enum IIOUnits {
    /// The full ranges a real gyroscope has, °/s (from ±125 on a BMI160 to ±4000 on an ICM-42688,
    /// with margin).
    public static let gyroRangeDegPerS = 100.0...10_000.0
    /// How far a resting accelerometer's magnitude may be from 1 g and still be in m/s².
    public static let restTolerance = 0.3

    /// A unit mistake a driver is known to make, and the factor that turns its values into SI.
    public struct Correction: Sendable, Equatable {
        /// Multiplies the driver's scale.
        public var factor: Double
        /// For the log and the status message, e.g. "fxas21002c's anglvel scale 62.5 is in
        /// millidegrees/s per count (Linux 6.1): ×π/180000, full range ±2048 °/s".
        public var note: String
    }

    /// What a check concluded.
    public enum Verdict: Sendable, Equatable {
        /// The unit is SI.
        case plausible
        /// A known mistake, corrected.
        case corrected(Correction)
        /// Neither SI nor a known mistake: the reason, for the status message.
        case refused(String)
    }

    /// The gyroscope's full range, °/s, for a scale (rad/s per count, as read) and the number of
    /// significant bits of its values (signed).
    public static func gyroFullRangeDegPerS(scale: Double, bits: Int) -> Double {
        abs(scale) * Double(Int64(1) << Int64(max(1, min(bits, 62)) - 1)) * 180 / .pi
    }

    /// Judges a gyroscope's scale. `bits` are its values' significant bits (16 when unknown).
    public static func judgeGyro(scale: Double, bits: Int, driver: String) -> Verdict {
        let range = gyroFullRangeDegPerS(scale: scale, bits: bits)
        if gyroRangeDegPerS.contains(range) { return .plausible }
        let known: [(factor: Double, unit: String, factorText: String)] = [
            (.pi / 180_000, "millidegrees/s per count (as Linux 6.1's fxas21002c prints it)", "π/180000"),
            (.pi / 180, "degrees/s per count", "π/180"),
        ]
        let fits = known.filter { gyroRangeDegPerS.contains(range * $0.factor) }
        let scaleText = "\(scale)"
        guard fits.count == 1, let fit = fits.first else {
            return .refused(
                "\(driver)'s anglvel scale \(scaleText) gives a full range of ±\(rangeText(range)) °/s, "
                    + "not within 100–10000 °/s, and no known unit mistake explains it")
        }
        return .corrected(
            Correction(
                factor: fit.factor,
                note: "\(driver)'s anglvel scale \(scaleText) is in \(fit.unit), not rad/s: ×\(fit.factorText), "
                    + "full range ±\(rangeText(range * fit.factor)) °/s"))
    }

    /// Judges an accelerometer from its magnitude at rest (m/s² as read).
    public static func judgeAccel(restingMagnitude m: Double, driver: String) -> Verdict {
        let g = 9.80665
        func nearOneG(_ v: Double) -> Bool { abs(v / g - 1) <= restTolerance }
        if nearOneG(m) { return .plausible }
        if nearOneG(m * g) {
            return .corrected(
                Correction(
                    factor: g,
                    note: "\(driver)'s accel scale is in g, not m/s² (at rest it reads "
                        + "\(rangeText(m)) for gravity, as Linux 6.1's fxos8700 does): ×9.80665"))
        }
        return .refused(
            "\(driver)'s accelerometer reads \(rangeText(m)) m/s² at rest, not near 1 g (9.8), and no known "
                + "unit mistake explains it")
    }

    static func rangeText(_ v: Double) -> String {
        v >= 100 ? String(Int(saturating: v.rounded())) : String((v * 1000).rounded() / 1000)
    }

    /// Notes already logged: a correction is said once per run, not at every reconnect.
    private static let logged = Mutex<Set<String>>([])

    /// True the first time `note` is passed.
    static func firstTime(_ note: String) -> Bool {
        logged.withLock { $0.insert(note).inserted }
    }
}

/// Watches an accelerometer's first moments at rest and judges its unit (`IIOUnits.judgeAccel`).
/// At rest: over a window of about half a second the magnitude varies by under 5 % and the
/// gyroscope, if any, turns by under 0.1 rad/s. A window of zeros (a chip not yet updated, free
/// fall) is not judged.
struct IIOAccelUnitWatch {
    /// Samples in one window (half a second, at least 8).
    let windowSize: Int
    private var magnitudes: [Double] = []
    /// Set once a window at rest was judged.
    private(set) var verdict: IIOUnits.Verdict?

    init(rateHz: Double) {
        windowSize = min(2000, max(8, Int(saturating: rateHz / 2)))
    }

    /// Adds one sample; returns the verdict once, when a window at rest has been judged.
    mutating func add(accel: Vector3, gyro: Vector3?, driver: String) -> IIOUnits.Verdict? {
        guard verdict == nil else { return nil }
        if let gyro, gyro.norm > 0.1 {
            magnitudes.removeAll(keepingCapacity: true)
            return nil
        }
        magnitudes.append(accel.norm)
        guard magnitudes.count >= windowSize else { return nil }
        defer { magnitudes.removeAll(keepingCapacity: true) }
        let mean = magnitudes.reduce(0, +) / Double(magnitudes.count)
        guard mean > 0.05, magnitudes.allSatisfy({ abs($0 - mean) <= 0.05 * mean }) else { return nil }
        let v = IIOUnits.judgeAccel(restingMagnitude: mean, driver: driver)
        verdict = v
        return v
    }
}
