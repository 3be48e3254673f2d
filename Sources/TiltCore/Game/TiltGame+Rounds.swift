// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

extension TiltGame {
    /// Starts a round at time `t` (the daemon's latest sample time) with prompts from `deck`,
    /// lasting `roundSeconds` (default: the configuration's), answered with `gestures` (default:
    /// the configuration's). Throws if a round is running, the length is out of range, the deck
    /// has no prompts, or the `nod` vocabulary is asked for without a gyroscope.
    public mutating func start(
        at t: Nanoseconds, roundSeconds: Double? = nil, gestures: Rules.Gestures? = nil,
        deck: any PromptProvider
    ) throws(GameError) -> [GameEvent] {
        guard round == nil else { throw .roundInProgress }
        let seconds = roundSeconds ?? configuration.roundSeconds
        guard seconds.isFinite, Rules.roundSecondsRange.contains(seconds) else {
            throw .invalidRoundLength(seconds)
        }
        let vocabulary = gestures ?? configuration.gestures
        if vocabulary == .nod, !gyroAvailable { throw .needsGyro }
        let prompts = try Self.distinctPrompts(from: deck)
        lastDeck = deck
        lastRoundLength = seconds
        lastGestures = vocabulary
        return beginRound(at: t, seconds: seconds, gestures: vocabulary, deckName: deck.deckName, prompts: prompts)
    }

    /// Ends the running round now; its result is reported in a `stopped` event.
    public mutating func stop(at t: Nanoseconds) throws(GameError) -> [GameEvent] {
        guard round != nil else { throw .notRunning }
        return [endRound(at: t, reason: .stopped)]
    }

    /// Ends the running round (if any) because the replayed recording ran out (`round_ended`,
    /// reason `recording_ended`); nothing otherwise.
    public mutating func recordingEnded(at t: Nanoseconds) -> [GameEvent] {
        guard round != nil else { return [] }
        return [endRound(at: t, reason: .recordingEnded)]
    }

    /// Stops the running round (if any) and starts a new one with the last round's length,
    /// vocabulary and deck (asking the deck again, so a places deck reflects the current fix).
    public mutating func restart(at t: Nanoseconds) throws(GameError) -> [GameEvent] {
        guard let deck = lastDeck, let seconds = lastRoundLength else { throw .nothingToRestart }
        // Ask the deck before stopping, so a failing deck leaves the running round untouched.
        let prompts = try Self.distinctPrompts(from: deck)
        var events: [GameEvent] = []
        if round != nil { events.append(endRound(at: t, reason: .stopped)) }
        events += beginRound(
            at: t, seconds: seconds, gestures: lastGestures ?? configuration.gestures,
            deckName: deck.deckName, prompts: prompts)
        return events
    }

    /// Back to idle: drops the running round without a result, the last result and the neutral
    /// pose. Keeps the configuration, the calibrated head frame, the round counter and the deck
    /// for `restart`.
    public mutating func reset(at t: Nanoseconds) -> [GameEvent] {
        round = nil
        phase = .idle
        lastResult = nil
        neutral = nil
        lastTilt = nil
        zone = nil
        beyond = nil
        captureOnNextSample = false
        let cleared = restartCheck(at: t)
        return [makeEvent(.reset, t: t)] + cleared
    }

    /// Captures the neutral pose from `attitude` (the daemon's latest). In relative mode the
    /// tilt is measured from it at once; in absolute mode it is kept but not used. Refused
    /// (`neutral_rejected`, the old pose kept) while the head moves faster than `still_dps`, or
    /// when the back axis is within 20° of vertical.
    public mutating func captureNeutral(_ attitude: Attitude) -> [GameEvent] {
        if lastT != nil, !motion.isStill {
            var e = makeEvent(.neutralRejected, t: attitude.t)
            e.reason =
                "the head is moving (\(Int(saturating: motion.rateDps.rounded())) °/s, still means under \(Int(saturating: configuration.stillDps.rounded())) °/s); hold it still and try again"
            return [e]
        }
        return capture(attitude)
    }

    // MARK: internals

    /// Starts the orientation check over (the head frame changed). When it was suspect, says
    /// `orientation_ok`: the last word clients heard was that no prompt would appear, and one
    /// may now.
    mutating func restartCheck(at t: Nanoseconds) -> [GameEvent] {
        let wasSuspect = check.suspect
        check.reset()
        return wasSuspect ? [makeEvent(.orientationOK, t: t)] : []
    }

    mutating func capture(_ a: Attitude) -> [GameEvent] {
        captureOnNextSample = false
        let back = (calibratedFrame ?? learnedFrame).map { -$0.forward } ?? configuration.backAxis
        guard let pose = TiltMeter.neutralPose(t: a.t, q: a.q, backAxis: back) else {
            var e = makeEvent(.neutralRejected, t: a.t)
            e.reason =
                "the back axis is within 20° of vertical (or the attitude is invalid); set back_axis to the sensor axis that points to the back of the head, or run tiltd calibrate neutral"
            return [e]
        }
        neutral = pose
        let cleared = calibratedFrame == nil ? restartCheck(at: a.t) : []
        if configuration.mode == .relative, round != nil {
            // Measure from the new pose from now on: the head is, by definition, neutral.
            zone = .neutral
            zoneSince = a.t
            beyond = nil
        }
        var e = makeEvent(.neutralCaptured, t: a.t)
        e.tiltDeg = TiltMeter.absoluteTilt(a.q)
        return [e] + cleared
    }

    static func distinctPrompts(from deck: any PromptProvider) throws(GameError) -> [String] {
        let raw: [String]
        do { raw = try deck.prompts() } catch {
            throw .deckUnavailable(deck: deck.deckName, reason: String(describing: error))
        }
        var seen = Set<String>()
        var out: [String] = []
        out.reserveCapacity(raw.count)
        for p in raw {
            let s = p.trimming(\.isWhitespace)
            if !s.isEmpty, seen.insert(s).inserted { out.append(s) }
        }
        guard !out.isEmpty else { throw .emptyDeck(deck: deck.deckName) }
        return out
    }

    mutating func beginRound(
        at t: Nanoseconds, seconds: Double, gestures: Rules.Gestures,
        deckName: String, prompts: [String]
    ) -> [GameEvent] {
        var order = prompts
        rng.shuffle(&order)
        round = Round(
            id: nextRoundID, deckName: deckName, gestures: gestures, order: order, startedAt: t,
            length: Self.nanoseconds(seconds))
        nextRoundID += 1
        phase = .waitingForNeutral
        zone = nil
        beyond = nil
        countFrom = t
        if configuration.mode == .relative, configuration.captureNeutralAtRoundStart || neutral == nil {
            neutral = nil
            captureOnNextSample = true
        }
        var e = makeEvent(.roundStarted, t: t)
        e.roundSeconds = seconds
        e.deckName = deckName
        e.deckSize = order.count
        return [e]
    }

    mutating func showNextPrompt(at t: Nanoseconds) -> GameEvent {
        // The round ends at the last answer, so a prompt is always left here.
        let p = round!.order[round!.nextIndex]
        round!.nextIndex += 1
        round!.prompt = p
        round!.shownAt = t
        pendingTilt = nil
        countFrom = t + minReactionNs
        lastScored = nil
        phase = .prompt
        return makeEvent(.prompt, t: t)
    }

    mutating func decide(
        _ d: Decision, at t: Nanoseconds, enteredAt: Nanoseconds, tilt: Double?,
        gesture: HeadGesture.Kind? = nil, debounceFrom: Nanoseconds? = nil
    ) -> [GameEvent] {
        let shown = round!.shownAt
        let result = PromptResult(
            prompt: round!.prompt ?? "", decision: d, shownAt: shown, decidedAt: enteredAt, confirmedAt: t)
        round!.results.append(result)
        if d == .correct { round!.score += 1 }
        round!.prompt = nil
        phase = .waitingForNeutral
        // The debounce runs from when the answer was made (a tilt confirmed after `bodyWait`
        // was made at its hold's end), so the wait does not also delay the next prompt.
        countFrom = max(t, (debounceFrom ?? t) + debounceNs)
        var e = makeEvent(d == .correct ? .correct : .skip, t: t)
        e.prompt = result.prompt
        e.decision = result
        e.tiltDeg = tilt
        e.gesture = gesture
        if round!.nextIndex >= round!.order.count {
            return [e, endRound(at: t, reason: .deckEmpty)]
        }
        return [e]
    }

    mutating func endRound(at t: Nanoseconds, reason: RoundEndReason) -> GameEvent {
        let r = round!
        let result = RoundResult(
            round: r.id, deckName: r.deckName, roundLength: r.length, startedAt: r.startedAt,
            endedAt: t, reason: reason, prompts: r.results, unanswered: r.prompt)
        var e = GameEvent(
            kind: reason == .stopped ? .stopped : .roundEnded, t: t, round: r.id, state: .idle,
            remaining: max(0, r.endsAt - t), score: r.score, prompt: nil)
        e.result = result
        lastResult = result
        round = nil
        phase = .idle
        zone = nil
        beyond = nil
        captureOnNextSample = false
        return e
    }

    func makeEvent(_ kind: GameEvent.Kind, t: Nanoseconds) -> GameEvent {
        GameEvent(
            kind: kind, t: t, round: round?.id, state: phase, remaining: remaining(at: t),
            score: round?.score ?? 0, prompt: round?.prompt)
    }
}
