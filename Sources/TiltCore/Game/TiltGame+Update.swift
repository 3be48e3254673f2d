// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

extension TiltGame {
    /// Feeds one attitude and, when the IMU has a gyroscope, the bias-corrected angular rate at
    /// that sample (sensor frame, rad/s; nil = derive it from the change of attitude), and the
    /// calibrated accelerometer (m/s²; nil = no activity from it: no gait). Returns what
    /// happened (usually nothing). Attitudes older than the newest seen, or with a non-finite
    /// quaternion, are ignored.
    public mutating func update(_ a: Attitude, rate: Vector3? = nil, accel: Vector3? = nil) -> [GameEvent] {
        if let last = lastT, a.t < last { return [] }
        let q = a.q
        guard q.w.isFinite, q.x.isFinite, q.y.isFinite, q.z.isFinite else { return [] }
        if let r = rate, !(r.x.isFinite && r.y.isFinite && r.z.isFinite) { return [] }
        lastT = a.t
        motion.add(t: a.t, q: q, rate: rate)
        activityTracker.add(t: a.t, q: q, rate: rate, accel: accel, still: motion.isStill)
        // Paused while the device is off the head, and until it has been on for a moment: no
        // prompt appears and nothing answers (glasses being put on nod and turn).
        if activityTracker.activity == .notWorn { countFrom = max(countFrom, a.t + Self.wornSettleNs) }
        var events: [GameEvent] = []
        if learnsHeadFrame, calibratedFrame == nil, let accel, let rate {
            learner.add(t: a.t, accel: accel, rate: rate, activity: activityTracker.activity)
            if let f = learner.frame,
                learnedFrame.map({ f.isRotated(atLeast: Self.learnedFrameRefreshDeg, from: $0) }) ?? true
            {
                // Adopted once confident, then followed whenever the learner's frame has moved
                // `learnedFrameRefreshDeg` from the one in use (it moves only at walking windows,
                // 2 s apart, and settles as evidence grows); the check starts over on adoption.
                // Clients hear of each change (`head_frame`).
                if learnedFrame == nil { events += restartCheck(at: a.t) }
                learnedFrame = f
                learnedFrameRestored = false
                events.append(headFrameEvent(at: a.t))
            } else if learner.frame != nil {
                // This run's learner agrees with the kept frame: from now on it is the learner's.
                learnedFrameRestored = false
            } else if learner.frame == nil, learnedFrame != nil, !learnedFrameRestored {
                // Withdrawn (its sign became unclear): back to the assumed frame, checked afresh.
                learnedFrame = nil
                events += restartCheck(at: a.t)
                events.append(headFrameEvent(at: a.t))
            }
        }
        if calibratedFrame == nil {
            // The assumed convention allows the board either way up in its plane (|roll|).
            let upY = TiltMeter.upInSensor(q).y
            if upY < -0.3, assumedFrame.up.y > 0 {
                assumedFrame = HeadFrame(up: Vector3(0, -1, 0), forward: Vector3(0, 0, -1), source: .assumed)!
            } else if upY > 0.3, assumedFrame.up.y < 0 {
                assumedFrame = .assumed
            }
        }
        if calibratedFrame == nil, neutral == nil, configuration.mode == .relative,
            configuration.backAxis != Self.conventionBackAxis
        {
            // A configured back axis says how the board sits from the first sample, not only from
            // the first capture: without this the orientation check judged the convention's axes
            // (and found a right back_axis suspect) until a round captured a pose. A nod turns up
            // about the ear-to-ear axis, so the frame made from the current up keeps that axis.
            backAxisFrame = HeadFrame(up: TiltMeter.upInSensor(q), forward: -configuration.backAxis, source: .assumed)
        }
        let frame = headFrame
        let w = motion.rate
        // The rate about the head's axes, once a sample for the check, the detector and the gait.
        let pitchRate = frame.pitchRate(w)
        let yawRate = frame.yawRate(w)
        // Nothing says how the head is mounted (no calibration, nothing learned or kept, no
        // back_axis) and the game may learn it: nods and shakes are read about up and the
        // horizontal (`GestureReader`), and the orientation check (is the convention right?)
        // has nothing to judge for the nod vocabulary meanwhile.
        let frameKnown =
            frame.source != .assumed || !learnsHeadFrame || configuration.backAxis != Self.conventionBackAxis
        let frameless = !frameKnown && gestures == .nod
        if frameless != readsGesturesWithoutFrame {
            readsGesturesWithoutFrame = frameless
            events += restartCheck(at: a.t)
        }
        if !frameless,
            let verdict = check.add(
                t: a.t, pitch: pitchRate, roll: frame.rollRate(w), yaw: yawRate, moving: !motion.isStill)
        {
            var e = makeEvent(verdict ? .orientationSuspect : .orientationOK, t: a.t)
            e.reason = verdict ? Self.suspectReason : nil
            events.append(e)
        }
        let read = reader.add(t: a.t, rate: w, up: TiltMeter.upInSensor(q), frame: frameKnown ? frame : nil)
        let found = read.gestures
        gaitBackground.add(t: a.t, pitch: read.pitch, yaw: read.yaw)
        // Repeated nods or shakes read as steps in part: the learner drops the window they are in.
        if !found.isEmpty { learner.dropWindow(); lastGestureRead = a.t }
        if abs(yawRate) >= Self.maxTurnDuringTilt { lastTurn = a.t }

        guard let r = round else {
            // Kept up to date between rounds too, so a client can show a tilt meter before play.
            lastTilt = measure(q)
            return events
        }
        // The timer comes first: a pose at or after the final instant does not count.
        if a.t >= r.endsAt { return events + [endRound(at: a.t, reason: .timeout)] }

        if captureOnNextSample, motion.stillFor(at: a.t) >= neutralHoldNs, looksLevel(q) { events += capture(a) }
        let tilt = measure(q)
        lastTilt = tilt
        switch r.gestures {
        case .tilt: events += tiltStep(a.t, tilt: tilt)
        case .nod: events += nodStep(a.t, tilt: tilt, gestures: found)
        }
        return events
    }

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
    private func neutralHeld(at t: Nanoseconds, zoneSince: Nanoseconds?) -> Bool {
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
    private func gaitSettled(at t: Nanoseconds) -> Bool {
        guard activityTracker.onFoot(at: t), limits.gaitSettleSeconds > 0, !check.suspect else { return false }
        let since = max(countFrom, lastGestureRead ?? .min)
        return t - since >= Nanoseconds(saturating: (limits.gaitSettleSeconds * 1e9).rounded())
    }

    private mutating func tiltStep(_ t: Nanoseconds, tilt: Double?) -> [GameEvent] {
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

    private mutating func nodStep(_ t: Nanoseconds, tilt: Double?, gestures: [HeadGesture]) -> [GameEvent] {
        switch phase {
        case .waitingForNeutral:
            if neutralHeld(at: t, zoneSince: nil) || gaitSettled(at: t) {
                var e = makeEvent(.neutral, t: t)
                e.tiltDeg = tilt
                return [e, showNextPrompt(at: t)]
            }
        case .prompt:
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

    /// Whether the head may be captured as neutral in this pose: when the head frame is known
    /// (calibrated, or the convention with the default `back_axis`), only within 25° of level
    /// (`levelToleranceDeg`) — a head held down (at the bottom of a nod, reading something) is
    /// still but not neutral, while a wearer who rests 10–16° low (as in the real logs) is
    /// captured where they rest. With a custom `back_axis` (a board off the convention) nothing tells.
    func looksLevel(_ q: Quaternion) -> Bool {
        let tilt: Double
        if let f = calibratedFrame {
            tilt = TiltMeter.relativeTilt(q, neutral: f.neutralPose(t: 0))
        } else if configuration.backAxis == Self.conventionBackAxis {
            tilt = TiltMeter.absoluteTilt(q)
        } else {
            return true
        }
        return abs(tilt - 90) <= Self.levelToleranceDeg
    }

    /// See `looksLevel`.
    static let levelToleranceDeg = 25.0

    /// The tilt angle in degrees, or nil in relative mode without a neutral pose.
    func measure(_ q: Quaternion) -> Double? {
        switch configuration.mode {
        case .absolute:
            if let f = calibratedFrame { return TiltMeter.relativeTilt(q, neutral: f.neutralPose(t: 0)) }
            return TiltMeter.absoluteTilt(q)
        case .relative:
            guard let n = neutral else { return nil }
            return TiltMeter.relativeTilt(q, neutral: n)
        }
    }

    /// The zone for `tilt`, given the zone the head is in now: a zone is entered at its
    /// threshold but left only once the angle is `hysteresisDeg` back past it.
    func classify(_ tilt: Double) -> Zone {
        let c = configuration
        let plain: Zone = tilt < c.lowThresholdDeg ? .low : (tilt > c.highThresholdDeg ? .high : .neutral)
        switch zone {
        case .low?: return tilt > c.lowThresholdDeg + c.hysteresisDeg ? plain : .low
        case .high?: return tilt < c.highThresholdDeg - c.hysteresisDeg ? plain : .high
        case .neutral?, nil: return plain
        }
    }
}
