// SPDX-License-Identifier: Apache-2.0
import TiltCore

extension Configuration {
    /// `[game]`: the tilt game's rules and its deck (see `GameComponent`).
    public struct Game: Sendable, Equatable, ConfigDefaults {
        /// Thresholds, hysteresis, holds, round length, mode (validated by `TiltGame`).
        public var rules = TiltGame.Rules()
        /// A deck (a file name in `deck_dir`, or a path with a "/": one prompt per line, or a JSON
        /// array), or "nearby" for places near the fix. See `Configuration.deckPath(_:)`.
        public var deck: String?
        /// The deck used when "nearby" has no fix or no places (as `deck`; nil = a built-in list).
        public var fallbackDeck: String?
        /// `deck_dir`: where deck names are looked up, absolute; nil = `decks` beside the config
        /// file (`Configuration.deckDirectory`).
        public var deckDir: String?
        /// Seeds the prompt shuffle; nil = a different order every run.
        public var seed: UInt64?
        /// `head_frame`: without a calibrated head frame, learn one from wear ("learn", the
        /// default: `TiltGame.learnsHeadFrame`) or keep the assumed convention ("assumed").
        public var learnsHeadFrame = true
        /// The defaults.
        public init() {}

        /// The keys of `[game]`.
        static var keys: [ConfigKey<Game>] {
            [
                .choice(
                    "gestures", \.rules.gestures, [("tilt", .tilt), ("nod", .nod)],
                    "how prompts are answered: tilt down/up and hold, or nod (correct) / shake (skip; needs a gyroscope). `game.start` may override it per round"
                ),
                .choice(
                    "mode", \.rules.mode, [("relative", .relative), ("absolute", .absolute)],
                    "relative: tilts from the wearer's own pose, captured still at round start (or by `game.neutral`). absolute: against gravity in the head frame (the calibrated look-ahead pose, else |roll| with the convention y up, z back)"
                ),
                .number(
                    "low_threshold_deg", \.rules.lowThresholdDeg, in: 0...180,
                    "below it answers `correct` (0.35π; must be below `high_threshold_deg`)"),
                .number("high_threshold_deg", \.rules.highThresholdDeg, in: 0...180, "above it answers `skip` (0.65π)"),
                .flag("swap_sides", \.rules.swapSides, "low = skip, high = correct"),
                .number(
                    "hysteresis_deg", \.rules.hysteresisDeg, in: 0...90,
                    "a zone is left only this far back past its threshold (less than half the gap between the thresholds)"
                ),
                .number("hold_s", \.rules.holdSeconds, in: 0...10, "a tilt must be held this long (rejects jerks)"),
                .number(
                    "neutral_hold_s", \.rules.neutralHoldSeconds, in: 0...10,
                    "still (and, for `tilt`, in the neutral band) this long before the next prompt"),
                .number(
                    "still_dps", \.rules.stillDps, in: 1...360,
                    "the head is still while its angular rate is below this, °/s"),
                .number(
                    "min_reaction_s", \.rules.minReactionSeconds, in: 0...5,
                    "an answer begun sooner than this after its prompt does not count"),
                .number("debounce_s", \.rules.debounceSeconds, in: 0...10, "after an answer nothing counts this long"),
                .number("round_s", \.rules.roundSeconds, in: TiltGame.Rules.roundSecondsRange, "round length"),
                .vector(
                    "back_axis", \.rules.backAxis, in: -1...1,
                    "relative mode without a calibrated head frame: the sensor axis pointing to the back of the head"),
                .flag(
                    "capture_neutral_at_round_start", \.rules.captureNeutralAtRoundStart,
                    "relative mode: capture the neutral pose when a round starts"),
                .number(
                    "nod_min_peak_dps", \.rules.nod.minPeakDps, in: 1...1000,
                    "`nod` vocabulary: a half-swing peaks at least this fast"),
                .number("nod_min_swing_deg", \.rules.nod.minSwingDeg, in: 0.1...90, "… and sweeps at least this angle"),
                .number("nod_max_swing_s", \.rules.nod.maxSwingSeconds, in: 0.05...5, "… and lasts at most this long"),
                .number(
                    "nod_max_gap_s", \.rules.nod.maxGapSeconds, in: 0...2,
                    "longest pause between two swings of one gesture"),
                .number(
                    "nod_max_swing_ratio", \.rules.nod.maxSwingRatio, in: 1...100,
                    "consecutive swings differ at most this many times in size"),
                .integer(
                    "shake_swings", \.rules.nod.shakeSwings, in: 2...9,
                    "swings before the detector reports a shake's first cycle (3 = left-right-left); an answer needs its second, one swing more"
                ),
                .deck(
                    "deck", \.deck, orNearby: true,
                    "a deck file's name in `deck_dir` (a path with a `/` is taken relative to this file), or `\"nearby\"` for places near the fix"
                ),
                .choice(
                    "head_frame", \.learnsHeadFrame, [("learn", true), ("assumed", false)],
                    "without a calibrated head frame (`tiltd calibrate neutral`): learn one from wear — up from walking, the ear-to-ear axis from the head's tilts outside walking, its sign from looking down — and use it once confident (`orientation.source` `learned`; docs/game-everyday.md), or keep the assumed convention (+y up, +z back). A calibrated frame always wins"
                ),
                .deck(
                    "fallback_deck", \.fallbackDeck, orNearby: false, "used when `\"nearby\"` has nothing (as `deck`)"),
                .path(
                    "deck_dir", \.deckDir, default: "`decks` beside this file",
                    "the deck directory: the decks `deck`, `fallback_deck`, `[mqtt] room_deck` and clients' `game.start` name (files ending in `.txt` or `.json`)"
                ),
                .seed("seed", \.seed, default: "per run", "seeds the shuffle"),
            ]
        }
    }

    static var gameTable: ConfigTable {
        .table(
            "game",
            onReload:
                "rules apply from the next round (at once when no round runs; the reply and the `status` line say so); `head_frame` at once (`assumed` drops a learned frame, `learn` starts learning afresh); `deck`, `fallback_deck` at the next `game.start`",
            keys: Game.keys.map { $0.lifted(\.game) },
            check: { (t, c) throws(ConfigError) in
                do throws(GameError) { try c.game.rules.validate() } catch {
                    if case .invalidConfiguration(let field, let reason) = error { throw t.error(field, reason) }
                    throw t.error("", error.message)
                }
            })
    }
}
