/// Why a game command was refused. `code` and `message` go into the error reply.
public enum GameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `start` while a round runs (use `stop` or `restart`).
    case roundInProgress
    /// `stop` with no round running.
    case notRunning
    /// `restart` before any round was started.
    case nothingToRestart
    /// The deck had no usable prompts.
    case emptyDeck(deck: String)
    /// The prompt provider failed (e.g. a places deck without a GPS fix).
    case deckUnavailable(deck: String, reason: String)
    /// A round length outside `Configuration.roundSecondsRange`.
    case invalidRoundLength(Double)
    /// A configuration value out of range; `field` is its config/protocol name.
    case invalidConfiguration(field: String, reason: String)

    /// The error reply's code (declared with the others in `ProtocolError.Code`).
    public var code: ProtocolError.Code {
        switch self {
        case .roundInProgress: return .roundInProgress
        case .notRunning: return .notRunning
        case .nothingToRestart: return .nothingToRestart
        case .emptyDeck: return .emptyDeck
        case .deckUnavailable: return .deckUnavailable
        case .invalidRoundLength: return .invalidRoundLength
        case .invalidConfiguration: return .invalidConfiguration
        }
    }

    /// A message for people.
    public var message: String {
        switch self {
        case .roundInProgress: return "a round is in progress; stop it first (game.stop)"
        case .notRunning: return "no round is running"
        case .nothingToRestart: return "no round has been started yet"
        case .emptyDeck(let d): return "deck \(d) has no prompts"
        case .deckUnavailable(let d, let r): return "deck \(d) is unavailable: \(r)"
        case .invalidRoundLength(let s): return "round length \(s) s is outside 1…3600 s"
        case .invalidConfiguration(let f, let r): return "\(f) \(r)"
        }
    }

    /// Same as `message`.
    public var description: String { message }
}

/// The tilt game: prompts appear, the wearer answers by tilting the head down (correct) or up
/// (skip), and a round ends when its time is up or the deck is used up.
///
/// A plain value with no clocks and no I/O: time comes only from the attitudes' timestamps (and
/// from the times the daemon passes with commands, which should be its latest sample time), so
/// replaying the same attitudes gives the same events. `update` runs at the sample rate; it does
/// no allocation unless something happens.
///
/// States: `idle` → (start) `waitingForNeutral` → (head held in the neutral zone) `prompt` →
/// (head held in a decision zone) `correct`/`skip` event → `waitingForNeutral` → next `prompt` …
/// → (timer or deck runs out, or stop) `idle`. See docs/game.md for the rules in full.
public struct TiltGame: Sendable {
    /// Where the game is.
    public enum Phase: String, Sendable, CaseIterable {
        /// No round is running.
        case idle
        /// A round runs and waits for the head to come back to (and hold) the neutral zone:
        /// at round start and after each answer.
        case waitingForNeutral = "waiting_for_neutral"
        /// A prompt is on screen, waiting for an answer.
        case prompt
    }

    /// Which band of tilt angles the head is in (with hysteresis, see `classify`).
    enum Zone: Sendable { case low, neutral, high }

    /// The running round.
    struct Round: Sendable {
        var id: Int
        var deckName: String
        var order: [String]
        var nextIndex = 0
        var startedAt: Nanoseconds
        var length: Nanoseconds
        var endsAt: Nanoseconds { startedAt + length }
        var results: [PromptResult] = []
        var score = 0
        var prompt: String?
        var shownAt: Nanoseconds = 0
    }

    /// The rules in force (change them with `setConfiguration` between rounds).
    public private(set) var configuration: Configuration
    /// Where the game is.
    public private(set) var phase: Phase = .idle
    /// The last finished (ended or stopped) round, until `reset`.
    public private(set) var lastResult: RoundResult?
    /// The captured neutral pose (relative mode), if any.
    public private(set) var neutral: NeutralPose?
    /// The time of the newest attitude seen. Older attitudes are ignored.
    public private(set) var lastT: Nanoseconds?
    /// The tilt angle (degrees) of the newest attitude seen (nil in relative mode without a
    /// neutral pose).
    public private(set) var lastTilt: Double?
    /// The id the next round gets. The daemon sets it from its history so ids stay unique
    /// across restarts.
    public var nextRoundID: Int = 1

    private var rng: SplitMix64
    private var round: Round?
    private var lastDeck: (any PromptProvider)?
    private var lastRoundLength: Double?
    private var zone: Zone?
    private var zoneSince: Nanoseconds = 0
    /// Poses before this time do not count: the round's start, the prompt's appearance, or the
    /// end of the debounce period after an answer.
    private var countFrom: Nanoseconds = 0
    private var captureOnNextSample = false

    // Durations in ns, computed once from the configuration (update runs at the sample rate).
    private var holdNs: Nanoseconds = 0
    private var neutralHoldNs: Nanoseconds = 0
    private var debounceNs: Nanoseconds = 0

    /// A game with `configuration`; `seed` fixes the order decks are shuffled in.
    public init(configuration: Configuration = Configuration(), seed: UInt64 = 0) throws(GameError) {
        try configuration.validate()
        self.configuration = configuration
        self.rng = SplitMix64(seed: seed)
        applyDurations()
    }

    /// Replaces the rules. Refused while a round runs, so a round is judged by one set of rules.
    public mutating func setConfiguration(_ c: Configuration) throws(GameError) {
        guard round == nil else { throw .roundInProgress }
        try c.validate()
        if c.mode != configuration.mode || c.backAxis != configuration.backAxis { neutral = nil }
        configuration = c
        applyDurations()
    }

    private mutating func applyDurations() {
        holdNs = Self.nanoseconds(configuration.holdSeconds)
        neutralHoldNs = Self.nanoseconds(configuration.neutralHoldSeconds)
        debounceNs = Self.nanoseconds(configuration.debounceSeconds)
    }

    static func nanoseconds(_ s: Double) -> Nanoseconds { Nanoseconds((s * 1e9).rounded()) }

    // MARK: read-only views

    /// The running round's id, or nil when idle.
    public var roundID: Int? { round?.id }
    /// The prompt on screen, if any.
    public var currentPrompt: String? { round?.prompt }
    /// Correct answers so far in the running round (0 when idle).
    public var score: Int { round?.score ?? 0 }
    /// The answers so far in the running round.
    public var currentResults: [PromptResult] { round?.results ?? [] }
    /// Time left in the running round at time `t`, or nil when idle.
    public func remaining(at t: Nanoseconds) -> Nanoseconds? {
        guard let r = round else { return nil }
        return max(0, r.endsAt - t)
    }

    // MARK: commands

    /// Starts a round at time `t` (the daemon's latest sample time) with prompts from `deck`,
    /// lasting `roundSeconds` (default: the configuration's). Throws if a round is running,
    /// the length is out of range, or the deck has no prompts.
    public mutating func start(at t: Nanoseconds, roundSeconds: Double? = nil,
                               deck: any PromptProvider) throws(GameError) -> [GameEvent] {
        guard round == nil else { throw .roundInProgress }
        let seconds = roundSeconds ?? configuration.roundSeconds
        guard seconds.isFinite, Configuration.roundSecondsRange.contains(seconds) else {
            throw .invalidRoundLength(seconds)
        }
        let prompts = try Self.distinctPrompts(from: deck)
        lastDeck = deck
        lastRoundLength = seconds
        return beginRound(at: t, seconds: seconds, deckName: deck.deckName, prompts: prompts)
    }

    /// Ends the running round now; its result is reported in a `stopped` event.
    public mutating func stop(at t: Nanoseconds) throws(GameError) -> [GameEvent] {
        guard round != nil else { throw .notRunning }
        return [endRound(at: t, reason: .stopped)]
    }

    /// Stops the running round (if any) and starts a new one with the last round's length and
    /// deck (asking the deck again, so a places deck reflects the current fix).
    public mutating func restart(at t: Nanoseconds) throws(GameError) -> [GameEvent] {
        guard let deck = lastDeck, let seconds = lastRoundLength else { throw .nothingToRestart }
        // Ask the deck before stopping, so a failing deck leaves the running round untouched.
        let prompts = try Self.distinctPrompts(from: deck)
        var events: [GameEvent] = []
        if round != nil { events.append(endRound(at: t, reason: .stopped)) }
        events += beginRound(at: t, seconds: seconds, deckName: deck.deckName, prompts: prompts)
        return events
    }

    /// Back to idle: drops the running round without a result, the last result and the neutral
    /// pose. Keeps the configuration, the round counter and the deck for `restart`.
    public mutating func reset(at t: Nanoseconds) -> [GameEvent] {
        round = nil
        phase = .idle
        lastResult = nil
        neutral = nil
        lastTilt = nil
        zone = nil
        captureOnNextSample = false
        return [makeEvent(.reset, t: t)]
    }

    /// Captures the neutral pose from `attitude` (the daemon's latest). In relative mode the
    /// tilt is measured from it at once; in absolute mode it is kept but not used. A pose whose
    /// back axis is within 20° of vertical is rejected (`neutral_rejected`), and the old one kept.
    public mutating func captureNeutral(_ attitude: Attitude) -> [GameEvent] {
        [capture(attitude)]
    }

    // MARK: samples

    /// Feeds one attitude; returns what happened (usually nothing). Attitudes older than the
    /// newest seen, or with a non-finite quaternion, are ignored.
    public mutating func update(_ a: Attitude) -> [GameEvent] {
        if let last = lastT, a.t < last { return [] }
        let q = a.q
        guard q.w.isFinite, q.x.isFinite, q.y.isFinite, q.z.isFinite else { return [] }
        lastT = a.t
        guard let r = round else {
            // Kept up to date between rounds too, so a client can show a tilt meter before play.
            lastTilt = measure(q)
            return []
        }

        // The timer comes first: a pose at or after the final instant does not count.
        if a.t >= r.endsAt { return [endRound(at: a.t, reason: .timeout)] }

        var events: [GameEvent] = []
        if captureOnNextSample { events.append(capture(a)) }
        guard let tilt = measure(q) else { return events }
        lastTilt = tilt

        let z = classify(tilt)
        if z != zone { zone = z; zoneSince = a.t }
        let heldFor = a.t - max(zoneSince, countFrom)

        switch phase {
        case .waitingForNeutral:
            if z == .neutral, heldFor >= neutralHoldNs {
                var e = makeEvent(.neutral, t: a.t)
                e.tiltDeg = tilt
                events.append(e)
                events.append(showNextPrompt(at: a.t))
            }
        case .prompt:
            if z != .neutral, heldFor >= holdNs {
                let low = z == .low
                let d: Decision = low != configuration.swapSides ? .correct : .skip
                events.append(contentsOf: decide(d, at: a.t, enteredAt: max(zoneSince, countFrom), tilt: tilt))
            }
        case .idle:
            break
        }
        return events
    }

    // MARK: internals

    /// The tilt angle in degrees, or nil in relative mode without a neutral pose.
    private func measure(_ q: Quaternion) -> Double? {
        switch configuration.mode {
        case .absolute: return TiltMeter.absoluteTilt(q)
        case .relative:
            guard let n = neutral else { return nil }
            return TiltMeter.relativeTilt(q, neutral: n)
        }
    }

    /// The zone for `tilt`, given the zone the head is in now: a zone is entered at its
    /// threshold but left only once the angle is `hysteresisDeg` back past it.
    private func classify(_ tilt: Double) -> Zone {
        let c = configuration
        let plain: Zone = tilt < c.lowThresholdDeg ? .low : (tilt > c.highThresholdDeg ? .high : .neutral)
        switch zone {
        case .low?: return tilt > c.lowThresholdDeg + c.hysteresisDeg ? plain : .low
        case .high?: return tilt < c.highThresholdDeg - c.hysteresisDeg ? plain : .high
        case .neutral?, nil: return plain
        }
    }

    private mutating func capture(_ a: Attitude) -> GameEvent {
        captureOnNextSample = false
        guard let pose = TiltMeter.neutralPose(t: a.t, q: a.q, backAxis: configuration.backAxis) else {
            var e = makeEvent(.neutralRejected, t: a.t)
            e.reason = "the back axis is within 20° of vertical (or the attitude is invalid); set back_axis to the sensor axis that points to the back of the head"
            return e
        }
        neutral = pose
        if configuration.mode == .relative, round != nil {
            // Measure from the new pose from now on: the head is, by definition, neutral.
            zone = .neutral
            zoneSince = a.t
        }
        var e = makeEvent(.neutralCaptured, t: a.t)
        e.tiltDeg = TiltMeter.absoluteTilt(a.q)
        return e
    }

    private static func distinctPrompts(from deck: any PromptProvider) throws(GameError) -> [String] {
        let raw: [String]
        do { raw = try deck.prompts() } catch {
            throw .deckUnavailable(deck: deck.deckName, reason: String(describing: error))
        }
        var seen = Set<String>()
        var out: [String] = []
        out.reserveCapacity(raw.count)
        for p in raw {
            let s = PromptDeck.trim(p)
            if !s.isEmpty, seen.insert(s).inserted { out.append(s) }
        }
        guard !out.isEmpty else { throw .emptyDeck(deck: deck.deckName) }
        return out
    }

    private mutating func beginRound(at t: Nanoseconds, seconds: Double, deckName: String, prompts: [String]) -> [GameEvent] {
        var order = prompts
        rng.shuffle(&order)
        round = Round(id: nextRoundID, deckName: deckName, order: order, startedAt: t, length: Self.nanoseconds(seconds))
        nextRoundID += 1
        phase = .waitingForNeutral
        zone = nil
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

    private mutating func showNextPrompt(at t: Nanoseconds) -> GameEvent {
        // The round ends at the last answer, so a prompt is always left here.
        let p = round!.order[round!.nextIndex]
        round!.nextIndex += 1
        round!.prompt = p
        round!.shownAt = t
        countFrom = t
        phase = .prompt
        return makeEvent(.prompt, t: t)
    }

    private mutating func decide(_ d: Decision, at t: Nanoseconds, enteredAt: Nanoseconds, tilt: Double) -> [GameEvent] {
        let shown = round!.shownAt
        let result = PromptResult(prompt: round!.prompt ?? "", decision: d, shownAt: shown, decidedAt: enteredAt, confirmedAt: t)
        round!.results.append(result)
        if d == .correct { round!.score += 1 }
        round!.prompt = nil
        phase = .waitingForNeutral
        countFrom = t + debounceNs
        var e = makeEvent(d == .correct ? .correct : .skip, t: t)
        e.prompt = result.prompt
        e.decision = result
        e.tiltDeg = tilt
        if round!.nextIndex >= round!.order.count {
            return [e, endRound(at: t, reason: .deckEmpty)]
        }
        return [e]
    }

    private mutating func endRound(at t: Nanoseconds, reason: RoundEndReason) -> GameEvent {
        let r = round!
        let result = RoundResult(round: r.id, deckName: r.deckName, roundLength: r.length, startedAt: r.startedAt,
                                 endedAt: t, reason: reason, prompts: r.results, unanswered: r.prompt)
        var e = GameEvent(kind: reason == .stopped ? .stopped : .roundEnded, t: t, round: r.id, state: .idle,
                          remaining: max(0, r.endsAt - t), score: r.score, prompt: nil)
        e.result = result
        lastResult = result
        round = nil
        phase = .idle
        zone = nil
        captureOnNextSample = false
        return e
    }

    private func makeEvent(_ kind: GameEvent.Kind, t: Nanoseconds) -> GameEvent {
        GameEvent(kind: kind, t: t, round: round?.id, state: phase, remaining: remaining(at: t),
                  score: round?.score ?? 0, prompt: round?.prompt)
    }

    // MARK: snapshot

    /// The whole current state, for the `hello` line and `status`: a client joining mid-round
    /// can draw the screen from it alone. Times are relative to the newest attitude seen.
    public var snapshot: JSONObject {
        var o = JSONObject()
        let now = max(lastT ?? round?.startedAt ?? 0, round?.startedAt ?? Int64.min)
        o["state"] = .string(phase.rawValue)
        o["t_ns"] = lastT.map { .int($0) } ?? .null
        if let r = round {
            o["round"] = .int(Int64(r.id))
            o["deck"] = .string(r.deckName)
            o["deck_size"] = .int(Int64(r.order.count))
            o["deck_left"] = .int(Int64(r.order.count - r.nextIndex))
            o["round_s"] = .number(Double(r.length) / 1e9)
            o["started_t_ns"] = .int(r.startedAt)
            o["remaining_ms"] = .int(max(0, r.endsAt - now) / 1_000_000)
            o["score"] = .int(Int64(r.score))
            o["prompt"] = r.prompt.map { .string($0) } ?? .null
            o["prompt_t_ns"] = r.prompt == nil ? .null : .int(r.shownAt)
            o["correct"] = .array(r.results.filter { $0.decision == .correct }.map { .object($0.json) })
            o["skipped"] = .array(r.results.filter { $0.decision == .skip }.map { .object($0.json) })
        } else {
            for k in ["round", "deck", "deck_size", "deck_left", "round_s", "started_t_ns", "remaining_ms"] { o[k] = .null }
            o["score"] = 0
            o["prompt"] = .null
            o["prompt_t_ns"] = .null
            o["correct"] = []
            o["skipped"] = []
        }
        o["tilt_deg"] = lastTilt.map { .number(($0 * 10).rounded() / 10) } ?? .null
        var n = JSONObject()
        n["mode"] = .string(configuration.mode.rawValue)
        n["captured"] = .bool(neutral != nil)
        n["t_ns"] = neutral.map { .int($0.t) } ?? .null
        o["neutral"] = .object(n)
        o["config"] = .object(configuration.json)
        o["last_round"] = lastResult.map { .object($0.json) } ?? .null
        return o
    }
}
