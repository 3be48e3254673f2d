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
        // The classifier's candidates, only where nods can answer: a nod round, or between
        // rounds when the next will be one (the history then reaches back when it starts).
        // A learned frame does not steer them: it can be off by 15–20° for a while (or flipped
        // until re-checked), which split a nod between two axes; about up and the horizontal
        // the candidates need no frame (bench/gestures: walking nods with no configuration
        // 79 → 84 % answered, docs/dev/game-everyday.md).
        var judged: [(gesture: HeadGesture, features: GestureFeatures)] = []
        if limits.classifier != nil, (round?.gestures ?? configuration.gestures) == .nod {
            let told = frameKnown && frame.source != .learned
            judged = candidates.add(
                t: a.t, rate: w, up: TiltMeter.upInSensor(q), frame: told ? frame : nil, accel: accel?.norm,
                minCycles: min(limits.nodCycles, limits.shakeCycles), wanted: phase == .prompt)
        }
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
        case .nod: events += nodStep(a.t, tilt: tilt, gestures: found, candidates: judged)
        }
        return events
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
