// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// Where the game decides an answer: a tilt held past a threshold (`tiltStep`), a nod or a shake
/// (`nodStep`), and when the next prompt may show (`neutralHeld`, `gaitSettled`). `update`
/// (TiltGame+Update.swift) feeds them each sample; `decide` (TiltGame+Rounds.swift) records the
/// answer. The limits and where each comes from: `AnswerLimits`, docs/game-everyday.md.
extension TiltGame {
    /// A tilt's hold counts only from `turnSettleNs` (1 s) after the head last turned about
    /// the vertical axis faster than this (rad/s; 60 °/s). On the head-gestures logs vigorous
    /// shakes (100–300 °/s) swing the measured tilt past a threshold, and a wearer pausing
    /// mid-shake with the head low held a 30° tilt for 0.45 s, another looked down 45° 0.4 s after
    /// shaking; a deliberate tilt hardly turns, and 1 s is a short wait after looking around.
    static let maxTurnDuringTilt = 60 * Double.pi / 180
    /// A gesture or tilt begun within this long of a whole-body move is part of it, ns.
    static let bodyMoveMarginNs: Nanoseconds = 1_000_000_000
    static let turnSettleNs: Nanoseconds = 1_000_000_000

    static let suspectReason =
        "the head turns mostly about the axis taken as front-to-back: it is probably the ear-to-ear axis, so tilts would be sideways leans; run tiltd calibrate neutral (or fix back_axis / mount_matrix). No prompt appears until this clears."

    /// True when the head has been still, and (tilt vocabulary) in the neutral zone, for
    /// `neutral_hold_s`, counting only from `countFrom`.
    func neutralHeld(at t: Nanoseconds, zoneSince: Nanoseconds?) -> Bool {
        guard let still = motion.stillSince, !check.suspect else { return false }
        var since = max(still, countFrom)
        if let z = zoneSince { since = max(since, z) }
        return t - since >= neutralHoldNs
    }

    /// While walking or running the head is never still for `neutral_hold_s` (a runner's, never
    /// under `still_dps` at all): the next prompt of the nod vocabulary shows once no nod or shake
    /// cycle has been read for `AnswerLimits.gaitSettleSeconds`, counting from `countFrom` (the
    /// answer plus the debounce). The gait alone gives no cycles of two or more that answer
    /// (`gaitCycles`, the stand-out test), so a settled gait is the walker's "neutral".
    func gaitSettled(at t: Nanoseconds) -> Bool {
        guard activityTracker.onFoot(at: t), limits.gaitSettleSeconds > 0, !check.suspect else { return false }
        let since = max(countFrom, lastGestureRead ?? .min)
        return t - since >= Nanoseconds(saturating: (limits.gaitSettleSeconds * 1e9).rounded())
    }

    mutating func tiltStep(_ t: Nanoseconds, tilt: Double?) -> [GameEvent] {
        guard let tilt else { return [] }
        let z = classify(tilt)
        if z != zone { zone = z; zoneSince = t }
        let c = configuration
        let past: Zone? = tilt < c.lowThresholdDeg ? .low : (tilt > c.highThresholdDeg ? .high : nil)
        if past != beyond { beyond = past; beyondSince = t }
        switch phase {
        case .waitingForNeutral:
            if z == .neutral, neutralHeld(at: t, zoneSince: zoneSince) {
                var e = makeEvent(.neutral, t: t)
                e.tiltDeg = tilt
                return [e, showNextPrompt(at: t)]
            }
        case .prompt:
            // The hold counts only past the threshold itself (not in the hysteresis band), from
            // the minimum reaction time after the prompt, and only for a head that moved since
            // the prompt appeared (a slow drift past a threshold is not an answer), and not while
            // the head frame is suspect (the tilt would be a sideways lean).
            // A tilt that began with or within 1 s of a whole-body move (standing up, bending)
            // is the body's, also when the move is seen only after the tilt (see `pendingTilt`).
            if let p = pendingTilt {
                if let m = activityTracker.lastBodyMove, m >= p.from - Self.bodyMoveMarginNs {
                    pendingTilt = nil
                } else if t - p.from >= limits.bodyWaitNs {
                    pendingTilt = nil
                    return decide(p.decision, at: t, enteredAt: p.from, tilt: p.tilt, debounceFrom: p.heldAt)
                }
                return []
            }
            // The pose the head last rested in, in the neutral zone: an answer turns away from it.
            if motion.isStill, z == .neutral { restTilt = tilt }
            guard z != .neutral, beyond == z, !check.suspect, let moved = motion.lastMoving, moved > round!.shownAt
            else { return [] }
            // A head turning fast (shaking, looking around) is not answering: the hold counts only
            // from `turnSettle` after the last fast turn.
            // Nor is a body bending or standing up (`ActivityTracker.bodyMoveMeters`): a tilt
            // that began with or within 1 s of a whole-body move does not count.
            if let m = activityTracker.lastBodyMove, m >= beyondSince - Self.bodyMoveMarginNs { return [] }
            // Nor a head that rested near a threshold and drifted or twitched across it: an
            // answer turns the head from where it rested by `minTiltTurn` of the way from level
            // to the threshold it crosses.
            let threshold = z == .low ? c.lowThresholdDeg : c.highThresholdDeg
            if let r = restTilt, abs(tilt - r) < limits.minTiltTurn * abs(threshold - 90) { return [] }
            let from = max(beyondSince, countFrom, (lastTurn ?? .min) &+ Self.turnSettleNs)
            if t - from >= holdNs {
                let d: Decision = (z == .low) != c.swapSides ? .correct : .skip
                // Standing up begins as a lean that looks like a tilt down; the whole-body move is
                // seen only as the body rises, up to ~0.9 s later. While body moves can be seen
                // (accelerometer and gyroscope), the answer is held back until `bodyWait` after it
                // began, and dropped if one shows up by then. The wearer need not keep holding.
                if activityTracker.measuresBody, t - from < limits.bodyWaitNs {
                    pendingTilt = PendingTilt(decision: d, from: from, heldAt: t, tilt: tilt)
                    return []
                }
                return decide(d, at: t, enteredAt: from, tilt: tilt)
            }
        case .idle:
            break
        }
        return []
    }

    mutating func nodStep(
        _ t: Nanoseconds, tilt: Double?, gestures: [HeadGesture],
        candidates: [(gesture: HeadGesture, features: GestureFeatures)] = []
    ) -> [GameEvent] {
        switch phase {
        case .waitingForNeutral:
            if neutralHeld(at: t, zoneSince: nil) || gaitSettled(at: t) {
                var e = makeEvent(.neutral, t: t)
                e.tiltDeg = tilt
                return [e, showNextPrompt(at: t)]
            }
        case .prompt:
            if let classifier = limits.classifier {
                // The trained classifier judges the loose detector's candidates (docs/game-everyday.md):
                // one begun before the prompt plus the reaction time answers nothing; of a nod and a
                // shake accepted at once, the likelier. Two successive cycles of one run that both
                // score `classifierRunAccept` answer too.
                var accepted: [(HeadGesture, Double)] = []
                for c in candidates {
                    let g = c.gesture
                    guard g.start >= countFrom else { continue }
                    let need = g.kind == .nod ? limits.nodCycles : limits.shakeCycles
                    guard g.cycle >= need else { continue }
                    guard g.peakDps >= limits.minClassifiedPeakDps,
                        !(c.features["stride_match"] < limits.strideRepeatMax)
                    else { continue }
                    let p = classifier.probability(c.features.inputs)
                    let previous = lastScored
                    lastScored = (g.kind, g.runStart, g.cycle, p)
                    let run =
                        previous.map {
                            $0.kind == g.kind && $0.runStart == g.runStart && $0.cycle == g.cycle - 1
                                && min($0.probability, p) >= limits.classifierRunAccept
                        } ?? false
                    if p >= classifier.accept || run { accepted.append((g, p)) }
                }
                guard let (g, _) = accepted.max(by: { $0.1 < $1.1 }) else { return [] }
                return decide(g.kind == .nod ? .correct : .skip, at: t, enteredAt: g.start, tilt: tilt, gesture: g.kind)
            }
            // A gesture begun before the prompt plus the reaction time answers nothing.
            // While walking or running a single down-up can be the gait's head bob, and a single
            // left-right-left a walker looking both ways: a nod or shake answers from its second
            // cycle (`gaitCycles`), when it stands out of what the head did in the ~3 s before it
            // (`GaitBackground`, `AnswerLimits.gaitPeakRatio`): the whole-body test cannot judge
            // a gesture there (the gait carries the head all the time). Elsewhere a gesture
            // begun clear of a whole-body move answers; one begun in or just after such a move
            // (standing up, bending, a step or two) answers only when repeated (two cycles,
            // `bodyMoveSpareCycles`) and standing out in the same way: a body that rises or bends
            // does not swing the head back and forth twice. docs/game-everyday.md has the figures.
            let gait = activityTracker.onFoot(at: t)
            if let g = gestures.first(where: {
                guard $0.start >= countFrom, $0.peakDps >= limits.minAnswerPeakDps else { return false }
                if gait, $0.cycle < limits.gaitCycles { return false }
                // The gait sways the head about the vertical at the stride (half-swings of a
                // step period, 0.35–0.6 s); a shake's half-swings take 0.1–0.3 s.
                if gait, $0.kind == .shake, $0.cycle >= 2, limits.gaitShakeSwingSeconds > 0,
                    Double($0.end - $0.start) * 0.5e-9 > limits.gaitShakeSwingSeconds
                {
                    return false
                }
                if $0.cycle < ($0.kind == .nod ? limits.nodCycles : limits.shakeCycles) { return false }
                // Stands out of the ~3 s before it (not known in the first 3 s: anything would).
                let background = gaitBackground.rms(at: $0.start)
                let own = ($0.kind == .nod ? background.pitch : background.yaw) * 180 / .pi
                let ratio = gait && $0.kind == .shake ? limits.gaitShakePeakRatio : limits.gaitPeakRatio
                let standsOut = gaitBackground.isKnown(at: $0.start) && $0.peakDps >= ratio * own
                let repeated = limits.bodyMoveSpareCycles > 0 && $0.cycle >= limits.bodyMoveSpareCycles
                if gait, repeated { return standsOut }
                if (activityTracker.lastBodyMove ?? .min) < $0.start - Self.bodyMoveMarginNs { return true }
                return (gait || repeated) && standsOut
            }) {
                return decide(g.kind == .nod ? .correct : .skip, at: t, enteredAt: g.start, tilt: tilt, gesture: g.kind)
            }
        case .idle:
            break
        }
        return []
    }
}
