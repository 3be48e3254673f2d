// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// Plays one round over recorded samples, as fast as the CPU allows, through the same steps as
/// the daemon: the sample front end (mount matrix, calibration), the attitude estimator, and
/// the game fed each attitude with its bias-corrected rate. What `tiltd judge` and the gesture
/// bench run; pure (the caller reads the file).
public struct GameJudge: Sendable {
    /// What to play.
    public struct Options: Sendable {
        /// The game's rules (its `gestures` is the vocabulary unless `gestures` is set).
        public var rules = TiltGame.Rules()
        /// The vocabulary for this round (nil = the rules').
        public var gestures: TiltGame.Rules.Gestures?
        /// Mount matrix and calibration, applied as the daemon applies them.
        public var frontEnd = SampleFrontEnd()
        /// The estimator's parameters.
        public var fusion = AttitudeEstimator.Parameters()
        /// Round length; nil = the whole recording (up to 3600 s).
        public var roundSeconds: Double?
        /// Deck shuffle seed.
        public var seed: UInt64 = 1
        /// Whether the game learns a head frame from the samples (`TiltGame.learnsHeadFrame`; off).
        public var learnsHeadFrame = false
        /// The learner to go on from (nil: a fresh one): learning across recordings of one wearer.
        public var learner: HeadFrameLearner?
        /// The limits that tell answers from everyday motion.
        public var limits = AnswerLimits()
        /// Called after each sample with the game, the rate (rad/s) and the accelerometer
        /// (m/s²) it was fed: for tracing what the game saw (bench/gestures, `GESTURE_BENCH_TRACE`).
        public var onSample: (@Sendable (TiltGame, Vector3, Vector3) -> Void)?
        /// The defaults.
        public init() {}
    }

    /// What happened, in figures.
    public struct Summary: Sendable, Equatable {
        /// Samples played.
        public var samples = 0
        /// The recording's length, seconds.
        public var seconds = 0.0
        /// Prompts shown.
        public var prompts = 0
        /// `correct` decisions.
        public var correct = 0
        /// `skip` decisions.
        public var skip = 0
        /// Decisions whose answer began less than 0.25 s after the prompt (faster than a person
        /// reacts; fixed, whatever `min_reaction_s` says, so variants compare).
        public var fasterThanReaction = 0
        /// Decisions made while the head was still all the way from the prompt to the decision.
        public var whileStill = 0
        /// Median prompt → answer time, ms (nil without decisions).
        public var medianDecisionMs: Double?
        /// Gestures the detector reported over the whole recording (outside the round's
        /// states too): the detector's own view.
        public var nodsDetected = 0
        /// Shakes the detector reported over the whole recording.
        public var shakesDetected = 0
        /// Whether the orientation check ever found the head frame suspect.
        public var orientationSuspect = false
        /// Seconds spent in each activity (`TiltGame.activity`), by its name.
        public var activitySeconds: [String: Double] = [:]
        /// All decisions.
        public var decisions: Int { correct + skip }
        /// The head-frame learner at the end (its `frame` is the learned frame, if any).
        public var learner = HeadFrameLearner()
        /// Each change of the learned frame (`head_frame`): the seconds of walking seen by then in
        /// this recording, and the learned frame after it (nil: withdrawn).
        public var learnedFrames: [LearnedFrameChange] = []
    }

    /// One change of the learned head frame during a judged recording.
    public struct LearnedFrameChange: Sendable, Equatable {
        /// Seconds the game had seen `walking` by then (in this recording).
        public var walkingSeconds: Double
        /// The learned frame from then on (nil: withdrawn).
        public var frame: HeadFrame?
    }

    /// Plays `samples` (raw, as a recording holds them). Returns every game event and the summary.
    public static func play(
        _ samples: [IMUSample], options: Options = Options()
    ) throws(GameError) -> (events: [GameEvent], summary: Summary) {
        var summary = Summary()
        guard let first = samples.first else { return ([], summary) }
        var game = try TiltGame(configuration: options.rules, seed: options.seed)
        game.setHeadFrame(options.frontEnd.calibrator.calibration.headFrame)
        game.learnsHeadFrame = options.learnsHeadFrame
        game.limits = options.limits
        if let l = options.learner { game.learner = l }
        var estimator = AttitudeEstimator(parameters: options.fusion)
        let span = Double((samples.last?.t ?? first.t) - first.t) * 1e-9
        let range = TiltGame.Rules.roundSecondsRange
        let seconds = options.roundSeconds ?? min(range.upperBound, max(range.lowerBound, span + 1))
        let deck = try! PromptDeck(name: "judge", prompts: (1...PromptDeck.maxPrompts).map { "prompt \($0)" })
        var detector = GestureDetector(parameters: options.rules.nod)
        var events: [GameEvent] = []
        var started = false
        let stillLimit = options.rules.stillDps * .pi / 180
        var lastMoving: Nanoseconds?
        var decisionTimes: [Double] = []
        var shownAt: Nanoseconds = 0
        for raw in samples {
            let s = options.frontEnd.apply(raw)
            let a = estimator.update(s)
            let rate = s.gyro - a.gyroBias
            if rate.norm >= stillLimit { lastMoving = s.t }
            // The round starts at the first attitude, as `game.start` does once samples flow.
            if !started {
                started = true
                events += try game.start(at: a.t, roundSeconds: seconds, gestures: options.gestures, deck: deck)
            }
            let frame = game.headFrame
            for g in detector.add(t: s.t, pitch: frame.pitchRate(rate), yaw: frame.yawRate(rate)) {
                if g.kind == .nod { summary.nodsDetected += 1 } else { summary.shakesDetected += 1 }
            }
            let before = game.lastT
            let new = game.update(a, rate: rate, accel: s.accel)
            options.onSample?(game, rate, s.accel)
            if let b = before, s.t > b {
                summary.activitySeconds[game.activity.rawValue, default: 0] += Double(s.t - b) * 1e-9
            }
            for e in new {
                switch e.kind {
                case .prompt: summary.prompts += 1; shownAt = e.t
                case .correct, .skip:
                    if e.kind == .correct { summary.correct += 1 } else { summary.skip += 1 }
                    if let d = e.decision {
                        decisionTimes.append(Double(d.decisionTime) / 1e6)
                        if d.decisionTime < 250_000_000 { summary.fasterThanReaction += 1 }
                    }
                    if (lastMoving ?? Int64.min) < shownAt { summary.whileStill += 1 }
                case .orientationSuspect: summary.orientationSuspect = true
                case .headFrame:
                    summary.learnedFrames.append(
                        LearnedFrameChange(
                            walkingSeconds: summary.activitySeconds[Activity.walking.rawValue] ?? 0,
                            frame: game.learnedFrame))
                default: break
                }
            }
            events += new
            if game.phase == .idle, started { break }
        }
        if game.phase != .idle, let t = game.lastT { events += (try? game.stop(at: t)) ?? [] }
        summary.samples = samples.count
        summary.learner = game.learner
        summary.seconds = span
        decisionTimes.sort()
        if !decisionTimes.isEmpty {
            let n = decisionTimes.count
            summary.medianDecisionMs =
                n % 2 == 1 ? decisionTimes[n / 2] : (decisionTimes[n / 2 - 1] + decisionTimes[n / 2]) / 2
        }
        return (events, summary)
    }
}
