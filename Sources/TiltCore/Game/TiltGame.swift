// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// The game: prompts appear, the wearer answers — in the `tilt` vocabulary by tilting the head
/// down (correct) or up (skip) and holding it, in the `nod` vocabulary by nodding (correct) or
/// shaking the head (skip) — and a round ends when its time is up or the deck is used up.
///
/// A plain value with no clocks and no I/O: time comes only from the attitudes' timestamps (and
/// from the times the daemon passes with commands, which should be its latest sample time), so
/// replaying the same samples gives the same events. `update` runs at the sample rate; it does
/// no allocation unless something happens.
///
/// States: `idle` → (start) `waitingForNeutral` → (head still, and in the neutral zone, for
/// `neutral_hold_s`) `prompt` → (an answer) `correct`/`skip` event → `waitingForNeutral` → next
/// `prompt` … → (timer or deck runs out, or stop) `idle`. See docs/game.md for the rules in full.
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
        var gestures: Rules.Gestures
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
    public internal(set) var configuration: Rules
    /// Where the game is.
    public internal(set) var phase: Phase = .idle
    /// The last finished (ended or stopped) round, until `reset`.
    public internal(set) var lastResult: RoundResult?
    /// The captured neutral pose (relative mode), if any.
    public internal(set) var neutral: NeutralPose? {
        // The frame is built once per capture, not per sample (bench/pipeline).
        didSet { neutralFrame = neutral.flatMap { HeadFrame(up: $0.up, forward: -$0.back, source: .assumed) } }
    }
    /// The head frame `neutral` defines, if it defines one.
    private var neutralFrame: HeadFrame?
    /// The time of the newest attitude seen. Older attitudes are ignored.
    public internal(set) var lastT: Nanoseconds?
    /// The tilt angle (degrees) of the newest attitude seen (nil in relative mode without a
    /// neutral pose).
    public internal(set) var lastTilt: Double?
    /// The id the next round gets. The daemon sets it from its history so ids stay unique
    /// across restarts.
    public var nextRoundID: Int = 1
    /// Whether the IMU has a gyroscope. The daemon clears it for accelerometer-only devices;
    /// then a round with the `nod` vocabulary is refused (`needs_gyro`), and stillness is
    /// judged from the change of attitude.
    public var gyroAvailable = true
    /// The head frame learnt by `tiltd calibrate neutral`, or nil (the convention is assumed).
    public internal(set) var calibratedFrame: HeadFrame?
    /// The head frame learned from wear (`HeadFrameLearner`), once confident; used only while
    /// no calibrated frame is set.
    public internal(set) var learnedFrame: HeadFrame?
    /// True while `learnedFrame` is one kept from an earlier run (`restoreLearnedFrame`) that
    /// this run's learner has not yet confirmed or replaced: a learner that has seen nothing yet
    /// has no frame, which must not withdraw the kept one.
    public internal(set) var learnedFrameRestored = false
    /// Whether the game learns a head frame from wear while none is calibrated (off: the
    /// assumed convention stays). Off here (a game judged on a recording learns nothing unless
    /// asked); the daemon sets it from `[game] head_frame` (default `learn`). Set it with
    /// `setLearnsHeadFrame` to hear of a learned frame given up.
    public var learnsHeadFrame = false
    /// True while the rotation seen says the head frame in use cannot be right (see
    /// `OrientationCheck`); no prompt appears meanwhile.
    public var orientationSuspect: Bool { check.suspect }
    /// What the wearer is doing (walking, not wearing the device, …; see `ActivityTracker`).
    public var activity: Activity { activityTracker.activity }
    /// After the device was put back on, nothing counts for this long (it is being put on).
    static let wornSettleNs: Nanoseconds = 2_000_000_000
    /// The learned frame in use follows the learner's once the two are this far apart, degrees:
    /// well under the 15° a frame may be off and still play (docs/game-everyday.md), so the game
    /// is never far behind, and over the ~1° the frame wanders from window to window, so a
    /// settled frame does not announce itself every 2 s.
    static let learnedFrameRefreshDeg = 3.0

    /// Limits that tell answers from everyday head motion (see `AnswerLimits`).
    public var limits = AnswerLimits()
    /// A tilt held long enough, waiting for `limits.bodyWait` to pass without a whole-body move.
    var pendingTilt: PendingTilt?
    /// The tilt at which the head last rested short of a threshold (tilt vocabulary).
    var restTilt: Double?
    var rng: SplitMix64
    var round: Round?
    var lastDeck: (any PromptProvider)?
    var lastRoundLength: Double?
    var lastGestures: Rules.Gestures?
    var zone: Zone?
    var zoneSince: Nanoseconds = 0
    /// The decision zone the tilt is past the threshold of (not counting hysteresis), and since when.
    var beyond: Zone?
    var beyondSince: Nanoseconds = 0
    /// The last sample at which the head turned about the vertical axis faster than `maxTurnDuringTilt`.
    var lastTurn: Nanoseconds?
    /// Poses and gestures before this time do not count: the round's start, the prompt's
    /// appearance plus the minimum reaction time, or the end of the debounce after an answer.
    var countFrom: Nanoseconds = 0
    /// The last candidate the classifier scored during this prompt (`AnswerLimits.classifierRunAccept`).
    var lastScored: (kind: HeadGesture.Kind, runStart: Nanoseconds, cycle: Int, probability: Double)?
    var captureOnNextSample = false
    var motion: HeadRateTracker
    var activityTracker = ActivityTracker()
    /// The head's recent rates about the nod and shake axes (gestures while walking).
    var gaitBackground = GaitBackground()
    /// When the gesture reader last reported a nod or shake cycle (`gaitSettled`).
    var lastGestureRead: Nanoseconds?
    /// What the head-frame learner has seen (settable: a game can go on from an earlier one's).
    public var learner = HeadFrameLearner()
    var check = OrientationCheck()
    /// Nods and shakes, about the frame's axes or, without one, about up and the horizontal.
    var reader: GestureReader
    /// Gentle and ordinary nods and shakes with their features, for `limits.classifier`.
    var candidates = GestureCandidates()
    /// Whether the last sample's nods and shakes were read without a head frame (`GestureReader`).
    public internal(set) var readsGesturesWithoutFrame = false
    /// The assumed frame follows the board's side (y up or y down), chosen from gravity.
    var assumedFrame = HeadFrame.assumed
    /// Relative mode with a configured `back_axis` before any capture: the frame that axis and
    /// the current gravity define (nil when not in use).
    var backAxisFrame: HeadFrame?

    // Durations in ns, computed once from the configuration (update runs at the sample rate).
    var holdNs: Nanoseconds = 0
    var neutralHoldNs: Nanoseconds = 0
    var debounceNs: Nanoseconds = 0
    var minReactionNs: Nanoseconds = 0

    /// A game with `configuration`; `seed` fixes the order decks are shuffled in.
    public init(configuration: Rules = Rules(), seed: UInt64 = 0) throws(GameError) {
        try configuration.validate()
        self.configuration = configuration
        self.rng = SplitMix64(seed: seed)
        self.motion = HeadRateTracker(stillDps: configuration.stillDps)
        self.reader = GestureReader(parameters: configuration.nod)
        applyDurations()
    }

    /// Replaces the rules. Refused while a round runs, so a round is judged by one set of rules.
    /// A new mode or `back_axis` is a new head frame: the orientation check starts over, and
    /// when it was suspect the returned `orientation_ok` says so (at the newest sample's time).
    @discardableResult
    public mutating func setConfiguration(_ c: Rules) throws(GameError) -> [GameEvent] {
        guard round == nil else { throw .roundInProgress }
        try c.validate()
        var events: [GameEvent] = []
        if c.mode != configuration.mode || c.backAxis != configuration.backAxis {
            neutral = nil; backAxisFrame = nil
            events = restartCheck(at: lastT ?? 0)
        }
        configuration = c
        motion.stillLimit = c.stillDps * .pi / 180
        if c.nod != reader.parameters { reader = GestureReader(parameters: c.nod) }
        applyDurations()
        return events
    }

    /// Uses `frame` (from the calibration file) for both vocabularies and modes; nil goes back
    /// to the assumed convention. Returns `orientation_ok` when the old frame was suspect (at
    /// the newest sample's time): the check starts over with the new frame.
    @discardableResult
    public mutating func setHeadFrame(_ frame: HeadFrame?) -> [GameEvent] {
        calibratedFrame = frame
        return restartCheck(at: lastT ?? 0)
    }

    /// Turns learning from wear on or off. Off drops a learned frame (back to the assumed
    /// convention: `head_frame`, and `orientation_ok` when it was suspect) and what was learned;
    /// on starts from nothing.
    @discardableResult
    public mutating func setLearnsHeadFrame(_ on: Bool) -> [GameEvent] {
        guard on != learnsHeadFrame else { return [] }
        learnsHeadFrame = on
        learner = HeadFrameLearner()
        learnedFrameRestored = false
        guard learnedFrame != nil else { return [] }
        learnedFrame = nil
        let t = lastT ?? 0
        return restartCheck(at: t) + [headFrameEvent(at: t)]
    }

    /// Uses `frame`, learned from wear in an earlier run and kept (the daemon keeps it under the
    /// store's directory), as the learned frame until this run's learner gives one of its own:
    /// a restart need not walk and look down again before nods are read about the right axis.
    /// The learner's frame replaces it once it is `learnedFrameRefreshDeg` away (the frame is
    /// re-checked by the wear itself), and the orientation check judges it as any other.
    /// Ignored while a calibrated frame is set or learning is off. Returns `head_frame`.
    public mutating func restoreLearnedFrame(_ frame: HeadFrame) -> [GameEvent] {
        guard calibratedFrame == nil, learnsHeadFrame, learnedFrame == nil else { return [] }
        var f = frame
        f.source = .learned
        learnedFrame = f
        learnedFrameRestored = true
        let t = lastT ?? 0
        return restartCheck(at: t) + [headFrameEvent(at: t)]
    }

    /// `head_frame`: the frame now in use.
    func headFrameEvent(at t: Nanoseconds) -> GameEvent {
        var e = makeEvent(.headFrame, t: t)
        e.headFrame = headFrame
        return e
    }

    mutating func applyDurations() {
        holdNs = Self.nanoseconds(configuration.holdSeconds)
        neutralHoldNs = Self.nanoseconds(configuration.neutralHoldSeconds)
        debounceNs = Self.nanoseconds(configuration.debounceSeconds)
        minReactionNs = Self.nanoseconds(configuration.minReactionSeconds)
    }

    static func nanoseconds(_ s: Double) -> Nanoseconds { Nanoseconds(saturating: (s * 1e9).rounded()) }

    // MARK: read-only views

    /// The running round's id, or nil when idle.
    public var roundID: Int? { round?.id }
    /// The prompt on screen, if any.
    public var currentPrompt: String? { round?.prompt }
    /// Correct answers so far in the running round (0 when idle).
    public var score: Int { round?.score ?? 0 }
    /// The answers so far in the running round.
    public var currentResults: [PromptResult] { round?.results ?? [] }
    /// The running round's vocabulary, or the configured one when idle.
    public var gestures: Rules.Gestures { round?.gestures ?? configuration.gestures }
    /// Time left in the running round at time `t`, or nil when idle.
    public func remaining(at t: Nanoseconds) -> Nanoseconds? {
        guard let r = round else { return nil }
        return max(0, r.endsAt - t)
    }
    /// The head frame in use: the calibrated one; else the learned one (once confident); else, in relative mode with a captured pose,
    /// the one that pose and `back_axis` define; else, in relative mode with a `back_axis` other
    /// than the convention's, the one it and the current gravity define; else the assumed
    /// convention.
    public var headFrame: HeadFrame {
        if let f = calibratedFrame { return f }
        if let f = learnedFrame { return f }
        if configuration.mode == .relative, let f = neutralFrame ?? backAxisFrame { return f }
        return assumedFrame
    }

    /// The convention's back axis (+z); another `back_axis` describes a board mounted otherwise.
    static let conventionBackAxis = Vector3(0, 0, 1)
}
