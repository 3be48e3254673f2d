// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltProtocol

extension TiltGame {
    /// How tilts are measured and judged. All angles in degrees, all times in seconds.
    ///
    /// The defaults follow the classic forehead game and were chosen from the decision-test traces
    /// (see docs/game.md, "Defaults"): they accept every deliberate tilt in the traces and
    /// reject every jerk, double nod and noisy hover.
    public struct Rules: Sendable, Equatable {
        /// How the tilt angle is measured.
        public enum Mode: String, Sendable, CaseIterable {
            /// The tilt angle is |roll| of the attitude: no capture needed, but the IMU must be
            /// mounted with its x axis along the ear-to-ear line (see `TiltMeter`).
            case absolute
            /// The tilt angle is the nod away from a captured neutral pose, about the head's
            /// ear-to-ear axis; works with the IMU mounted any way round.
            case relative
        }

        /// How the wearer answers.
        public enum Gestures: String, Sendable, CaseIterable {
            /// Tilt the head down past a threshold and hold it (correct), or up (skip).
            case tilt
            /// Nod (correct) or shake the head (skip); needs a gyroscope.
            case nod
        }

        /// The vocabulary rounds use unless `start` names one.
        public var gestures: Gestures = .tilt
        /// The head is *still* while its angular rate stays below this, °/s. The neutral pose
        /// is captured, and a prompt appears, only while still. 20 °/s: a head held still sways
        /// at under 10 °/s; nodding, shaking, looking around and walking's head bob exceed it.
        public var stillDps: Double = 20
        /// No answer counts if the head started it less than this long after the prompt
        /// appeared: faster than any person reacts, so it was not an answer to this prompt.
        public var minReactionSeconds: Double = 0.25
        /// Limits of a nod and a shake (the `nod` vocabulary).
        public var nod = GestureDetector.Parameters()

        /// Tilt angle below which a pose is in the low zone (correct unless `swapSides`).
        public var lowThresholdDeg: Double = 63  // 0.35 π
        /// Tilt angle above which a pose is in the high zone (skip unless `swapSides`).
        public var highThresholdDeg: Double = 117  // 0.65 π
        /// False: low zone = correct, high zone = skip. True: the other way round (for an IMU
        /// whose z axis points forward, or players who prefer "up = correct").
        public var swapSides: Bool = false
        /// Absolute |roll| or relative to a captured neutral pose.
        public var mode: Mode = .relative
        /// In relative mode: the sensor axis that points (roughly) toward the back of the head
        /// when the neutral pose is captured. Tilting the head down turns the world's up
        /// direction toward this axis. Only its part perpendicular to "up" at capture is used,
        /// so it need not be exact. Default: the sensor's +z, as in the absolute convention.
        public var backAxis: Vector3 = Vector3(0, 0, 1)
        /// In relative mode: capture the neutral pose from the first attitude of each round.
        /// When false, the pose captured by `captureNeutral` is kept across rounds.
        public var captureNeutralAtRoundStart: Bool = true
        /// A zone is entered at its threshold and left only once the angle is back past the
        /// threshold by this much (so noise at a threshold cannot make a pose flicker).
        public var hysteresisDeg: Double = 10
        /// How long a tilt must stay in a decision zone before it counts (rejects jerks).
        public var holdSeconds: Double = 0.15
        /// How long the head must stay in the neutral zone before the next prompt appears.
        public var neutralHoldSeconds: Double = 0.2
        /// After a decision, nothing counts for this long (rejects the rebound of a nod and
        /// quick double nods).
        public var debounceSeconds: Double = 0.5
        /// Default round length when `start` is not given one.
        public var roundSeconds: Double = 60

        /// The defaults.
        public init() {}

        /// Round lengths accepted by `start`, seconds.
        public static let roundSecondsRange = CommandCatalogue.roundSecondsRange

        /// Checks the values make sense together; the error names the offending field.
        public func validate() throws(GameError) {
            func bad(_ field: String, _ why: String) -> GameError { .invalidConfiguration(field: field, reason: why) }
            let finite: [(String, Double)] = [
                ("low_threshold_deg", lowThresholdDeg), ("high_threshold_deg", highThresholdDeg),
                ("hysteresis_deg", hysteresisDeg), ("hold_s", holdSeconds),
                ("neutral_hold_s", neutralHoldSeconds), ("debounce_s", debounceSeconds),
                ("round_s", roundSeconds), ("still_dps", stillDps), ("min_reaction_s", minReactionSeconds),
                ("nod_min_peak_dps", nod.minPeakDps), ("nod_min_swing_deg", nod.minSwingDeg),
                ("nod_max_swing_s", nod.maxSwingSeconds), ("nod_max_gap_s", nod.maxGapSeconds),
                ("nod_max_swing_ratio", nod.maxSwingRatio),
            ]
            for (f, v) in finite where !v.isFinite { throw bad(f, "must be a finite number") }
            guard (0...180).contains(lowThresholdDeg) else { throw bad("low_threshold_deg", "must be within 0…180") }
            guard (0...180).contains(highThresholdDeg) else { throw bad("high_threshold_deg", "must be within 0…180") }
            guard lowThresholdDeg < highThresholdDeg else {
                throw bad("high_threshold_deg", "must be greater than low_threshold_deg")
            }
            // Each zone's exit point must stay on its own side of the middle, or leaving one
            // decision zone could land straight in the other.
            guard hysteresisDeg >= 0, 2 * hysteresisDeg < highThresholdDeg - lowThresholdDeg else {
                throw bad("hysteresis_deg", "must be ≥ 0 and less than half the gap between the thresholds")
            }
            for (f, v) in [
                ("hold_s", holdSeconds), ("neutral_hold_s", neutralHoldSeconds), ("debounce_s", debounceSeconds),
            ]
            where !(0...10).contains(v) {
                throw bad(f, "must be within 0…10 s")
            }
            guard stillDps > 0, stillDps <= 360 else { throw bad("still_dps", "must be within 0…360 °/s (not 0)") }
            guard (0...5).contains(minReactionSeconds) else { throw bad("min_reaction_s", "must be within 0…5 s") }
            guard nod.minPeakDps > 0, nod.minPeakDps <= 1000 else {
                throw bad("nod_min_peak_dps", "must be within 0…1000 °/s (not 0)")
            }
            guard nod.minSwingDeg > 0, nod.minSwingDeg <= 90 else {
                throw bad("nod_min_swing_deg", "must be within 0…90° (not 0)")
            }
            guard nod.maxSwingSeconds > 0, nod.maxSwingSeconds <= 5 else {
                throw bad("nod_max_swing_s", "must be within 0…5 s (not 0)")
            }
            guard (0...2).contains(nod.maxGapSeconds) else { throw bad("nod_max_gap_s", "must be within 0…2 s") }
            guard nod.maxSwingRatio >= 1, nod.maxSwingRatio <= 100 else {
                throw bad("nod_max_swing_ratio", "must be within 1…100")
            }
            guard (2...9).contains(nod.shakeSwings) else { throw bad("shake_swings", "must be within 2…9") }
            guard Self.roundSecondsRange.contains(roundSeconds) else {
                throw bad("round_s", "must be within \(CommandCatalogue.roundSecondsText) s")
            }
            guard backAxis.x.isFinite, backAxis.y.isFinite, backAxis.z.isFinite, backAxis.norm > 0.1 else {
                throw bad("back_axis", "must be a non-zero finite vector")
            }
        }

        /// The settings as JSON, for the game snapshot (so a client can show what counts).
        public var json: JSONObject {
            var o = JSONObject()
            o["mode"] = .string(mode.rawValue)
            o["low_threshold_deg"] = .number(lowThresholdDeg)
            o["high_threshold_deg"] = .number(highThresholdDeg)
            o["low_side"] = swapSides ? "skip" : "correct"
            o["hysteresis_deg"] = .number(hysteresisDeg)
            o["hold_s"] = .number(holdSeconds)
            o["neutral_hold_s"] = .number(neutralHoldSeconds)
            o["debounce_s"] = .number(debounceSeconds)
            o["round_s"] = .number(roundSeconds)
            o["gestures"] = .string(gestures.rawValue)
            o["still_dps"] = .number(stillDps)
            o["min_reaction_s"] = .number(minReactionSeconds)
            if mode == .relative { o["back_axis"] = .vector(backAxis) }
            return o
        }
    }
}
