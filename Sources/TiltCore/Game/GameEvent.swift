// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol

/// A player's answer to one prompt.
public enum Decision: String, Sendable, CaseIterable {
    /// The prompt was guessed (by default: head tilted down).
    case correct
    /// The prompt was passed over (by default: head tilted up).
    case skip
}

/// What happened to one prompt of a round.
public struct PromptResult: Sendable, Equatable {
    /// The prompt text.
    public var prompt: String
    /// The answer.
    public var decision: Decision
    /// Sample time the prompt appeared.
    public var shownAt: Nanoseconds
    /// Sample time the head entered the decision zone: the moment the player answered.
    public var decidedAt: Nanoseconds
    /// Sample time the answer was confirmed (after the hold time); the decision event's time.
    public var confirmedAt: Nanoseconds

    /// Creates a result.
    public init(
        prompt: String, decision: Decision, shownAt: Nanoseconds, decidedAt: Nanoseconds, confirmedAt: Nanoseconds
    ) {
        self.prompt = prompt; self.decision = decision
        self.shownAt = shownAt; self.decidedAt = decidedAt; self.confirmedAt = confirmedAt
    }

    /// How long the player took to answer, from the prompt appearing to the head entering the zone.
    public var decisionTime: Nanoseconds { decidedAt - shownAt }

    /// `{"prompt","decision","shown_t_ns","decided_t_ns","decision_ms"}`.
    public var json: JSONObject {
        var o = JSONObject()
        o["prompt"] = .string(prompt)
        o["decision"] = .string(decision.rawValue)
        o["shown_t_ns"] = .int(shownAt)
        o["decided_t_ns"] = .int(decidedAt)
        o["decision_ms"] = .int(decisionTime / 1_000_000)
        return o
    }
}

/// Why a round ended.
public enum RoundEndReason: String, Sendable, CaseIterable {
    /// The round's time ran out.
    case timeout
    /// Every prompt of the deck was answered.
    case deckEmpty = "deck_empty"
    /// A `stop` or `restart` command cut the round short.
    case stopped
    /// The recording being replayed ran out (`tiltd run --replay`): the round's clock is the
    /// samples', so without them its time could never run out.
    case recordingEnded = "recording_ended"
}

/// The outcome of a finished round: what the history store keeps.
public struct RoundResult: Sendable, Equatable {
    /// The round's id (counts up from `TiltGame.nextRoundID`).
    public var round: Int
    /// The deck's name.
    public var deckName: String
    /// Planned length.
    public var roundLength: Nanoseconds
    /// Sample time the round started.
    public var startedAt: Nanoseconds
    /// Sample time the round ended.
    public var endedAt: Nanoseconds
    /// Why it ended.
    public var reason: RoundEndReason
    /// Every answered prompt, in the order played.
    public var prompts: [PromptResult]
    /// The prompt on screen when the round ended, if any.
    public var unanswered: String?

    /// The number of correct answers.
    public var score: Int { prompts.reduce(0) { $0 + ($1.decision == .correct ? 1 : 0) } }
    /// The correct answers, in order.
    public var correct: [PromptResult] { prompts.filter { $0.decision == .correct } }
    /// The skipped prompts, in order.
    public var skipped: [PromptResult] { prompts.filter { $0.decision == .skip } }

    /// The round as JSON (see docs/game.md, "result").
    public var json: JSONObject {
        var o = JSONObject()
        o["round"] = .int(Int64(round))
        o["deck"] = .string(deckName)
        o["reason"] = .string(reason.rawValue)
        o["started_t_ns"] = .int(startedAt)
        o["ended_t_ns"] = .int(endedAt)
        o["round_s"] = .number(Double(roundLength) / 1e9)
        o["score"] = .int(Int64(score))
        o["correct"] = .array(correct.map { .object($0.json) })
        o["skipped"] = .array(skipped.map { .object($0.json) })
        o["unanswered"] = unanswered.map { .string($0) } ?? .null
        return o
    }
}

/// One change of the game's state, as broadcast to clients in a `game` line.
///
/// Every event carries the common fields (kind, time, round, state, remaining time, score,
/// prompt); the optional fields below are filled only for the kinds that name them.
public struct GameEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable, CaseIterable {
        /// A round began (fills `roundSeconds`, `deckName`, `deckSize`).
        case roundStarted = "round_started"
        /// A neutral pose was captured (fills `tiltDeg` = the pose's absolute tilt).
        case neutralCaptured = "neutral_captured"
        /// A neutral pose could not be captured (fills `reason`).
        case neutralRejected = "neutral_rejected"
        /// The head reached and held the neutral zone (fills `tiltDeg`); a `prompt` follows.
        case neutral
        /// A new prompt is on screen (`prompt`).
        case prompt
        /// The prompt was answered correct (fills `decision`, `tiltDeg`).
        case correct
        /// The prompt was skipped (fills `decision`, `tiltDeg`).
        case skip
        /// The round ran to its end, by timeout or an empty deck (fills `result`).
        case roundEnded = "round_ended"
        /// A command cut the round short (fills `result`, reason `stopped`).
        case stopped
        /// The game went back to idle and forgot its last result and neutral pose.
        case reset
        /// The rotation seen says the head frame in use cannot be right (fills `reason`); no
        /// prompt appears until `orientation_ok`.
        case orientationSuspect = "orientation_suspect"
        /// The head frame looks right again after `orientation_suspect`.
        case orientationOK = "orientation_ok"
        /// The head frame in use changed without a command: one learned from wear was adopted
        /// or refined, or withdrawn (fills `headFrame`: the frame now in use).
        case headFrame = "head_frame"
    }

    /// What happened.
    public var kind: Kind
    /// Sample time (ns) of the attitude, or the command's time, that caused it.
    public var t: Nanoseconds
    /// The round it belongs to (nil outside a round, except for the round's own end).
    public var round: Int?
    /// The game's state after the event.
    public var state: TiltGame.Phase
    /// Time left in the round (nil outside a round).
    public var remaining: Nanoseconds?
    /// Correct answers so far in this round (or in the round that just ended).
    public var score: Int
    /// The prompt on screen (for correct/skip: the prompt just answered).
    public var prompt: String?
    /// The tilt angle (degrees) at the event, for `neutral`, `correct`, `skip`, `neutral_captured`.
    public var tiltDeg: Double?
    /// For `correct` and `skip`.
    public var decision: PromptResult?
    /// For `round_ended` and `stopped`.
    public var result: RoundResult?
    /// For `round_started`: the round length in seconds.
    public var roundSeconds: Double?
    /// For `round_started`: the deck's name.
    public var deckName: String?
    /// For `round_started`: the number of distinct prompts in the deck.
    public var deckSize: Int?
    /// For `neutral_rejected` and `orientation_suspect`: why.
    public var reason: String?
    /// For `correct` and `skip` in the `nod` vocabulary: the gesture that answered.
    public var gesture: HeadGesture.Kind?
    /// For `head_frame`: the head frame now in use (as the game state's `orientation`).
    public var headFrame: HeadFrame?

    /// Creates an event with only the common fields set.
    public init(
        kind: Kind, t: Nanoseconds, round: Int?, state: TiltGame.Phase, remaining: Nanoseconds?,
        score: Int, prompt: String?
    ) {
        self.kind = kind; self.t = t; self.round = round; self.state = state
        self.remaining = remaining; self.score = score; self.prompt = prompt
    }

    /// The event's fields without its time, in the order documented in docs/game.md;
    /// `Event.encode` adds `class`, `seq` and `t_ns` in front.
    public var fields: JSONObject {
        var o = JSONObject()
        o["kind"] = .string(kind.rawValue)
        o["round"] = round.map { .int(Int64($0)) } ?? .null
        o["state"] = .string(state.rawValue)
        o["remaining_ms"] = remaining.map { .int($0 / 1_000_000) } ?? .null
        o["score"] = .int(Int64(score))
        o["prompt"] = prompt.map { .string($0) } ?? .null
        switch kind {
        case .roundStarted:
            o["round_s"] = .number(roundSeconds ?? 0)
            o["deck"] = .string(deckName ?? "")
            o["deck_size"] = .int(Int64(deckSize ?? 0))
        case .neutralCaptured, .neutral:
            o["tilt_deg"] = tiltJSON
        case .neutralRejected, .orientationSuspect:
            o["reason"] = .string(reason ?? "")
        case .correct, .skip:
            o["tilt_deg"] = tiltJSON
            o["decision_ms"] = decision.map { .int($0.decisionTime / 1_000_000) } ?? .null
            if let g = gesture { o["gesture"] = .string(g.rawValue) }
        case .roundEnded, .stopped:
            o["result"] = result.map { .object($0.json) } ?? .null
        case .headFrame:
            o["orientation"] = headFrame.map { .object($0.json) } ?? .null
        case .prompt, .reset, .orientationOK:
            break
        }
        return o
    }

    /// The event as one JSON object with its time: `{"kind":…,"t_ns":…,…}`.
    public var json: JSONObject {
        var o = JSONObject()
        let f = fields
        for (i, e) in f.entries.enumerated() {
            o[e.key] = e.value
            if i == 0 { o["t_ns"] = .int(t) }
        }
        return o
    }

    /// The event ready for the hub: class `game`, time `t`.
    public var event: Event { Event(.game, t: t, fields: fields) }

    private var tiltJSON: JSONValue {
        guard let d = tiltDeg else { return .null }
        return .number((d * 10).rounded() / 10)
    }
}
