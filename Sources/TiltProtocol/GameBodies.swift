// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// The game's shapes on the wire as clients read them (docs/game.md): a `game` line (`GameBody`),
/// the game's state in `hello` and the `status` reply (`GameStateBody`), and the parts both carry
/// (`HeadFrameBody`, `GameRulesBody`). The daemon encodes them in TiltCore (`GameEvent.fields`,
/// `TiltGame.snapshot`); `GameBodyTests` checks that every kind it encodes reads back here, and
/// `ProtocolSchema` describes the fields from `GameBody.schemaFields`.
///
/// Every field but `kind` is optional: a `shared` line (a room's round shown with `room.show`,
/// docs/mqtt.md) carries the room's view, not the local game's fields, and `null` on the wire
/// reads as nil like an absent field.

/// A `game` line: what happened (`kind`), the fields every local kind carries, and those of its kind.
public struct GameBody: Sendable, Equatable {
    /// What happened: `round_started`, `prompt`, `correct`, …, or `shared` (a room's round).
    public var kind: String
    /// The round it belongs to; nil outside a round.
    public var round: Int64?
    /// The game's state after the event (`idle`, `neutral`, `prompt`, …; a room's phase for `shared`).
    public var state: String?
    /// Time left in the round, ms; nil outside a round.
    public var remainingMs: Int64?
    /// Correct answers so far in this round.
    public var score: Int64?
    /// The prompt on screen (for `correct` and `skip`: the one just answered).
    public var prompt: String?
    /// The head's tilt at the event, degrees (`neutral`, `neutral_captured`, `correct`, `skip`).
    public var tiltDeg: Double?
    /// `round_started`: the round's length, s.
    public var roundSeconds: Double?
    /// `round_started`: the deck's name.
    public var deck: String?
    /// `round_started`: the deck's distinct prompts.
    public var deckSize: Int64?
    /// `neutral_rejected`, `orientation_suspect`: why.
    public var reason: String?
    /// `correct`, `skip`: ms from the prompt appearing to the answer.
    public var decisionMs: Int64?
    /// `correct`, `skip` with nod gestures: the gesture that answered (`nod`, `shake`).
    public var gesture: String?
    /// `round_ended`, `stopped`: the round's result (docs/game.md, "result").
    public var result: JSONObject?
    /// `head_frame`: the head frame now in use.
    public var orientation: HeadFrameBody?
    /// The whole line's fields (`class`, `seq`, `t_ns`, and a `shared` line's view).
    public var fields: JSONObject

    /// The wire names, declared once for the reader and the schema.
    public enum Key {
        /// The line's kind.
        public static let kind = "kind"
        /// Each of the fields every local kind carries, then those of some kinds.
        public static let round = "round", state = "state", remainingMs = "remaining_ms", score = "score"
        /// See `GameBody`'s properties.
        public static let prompt = "prompt", tiltDeg = "tilt_deg", roundSeconds = "round_s", deck = "deck"
        /// See `GameBody`'s properties.
        public static let deckSize = "deck_size", reason = "reason", decisionMs = "decision_ms"
        /// See `GameBody`'s properties.
        public static let gesture = "gesture", result = "result", orientation = "orientation"
    }

    /// Reads a game line; nil without `kind`.
    public init?(_ o: JSONObject) {
        guard let kind = o[Key.kind]?.stringValue else { return nil }
        self.kind = kind
        round = o[Key.round]?.intValue
        state = o[Key.state]?.stringValue
        remainingMs = o[Key.remainingMs]?.intValue
        score = o[Key.score]?.intValue
        prompt = o[Key.prompt]?.stringValue
        tiltDeg = o[Key.tiltDeg]?.doubleValue
        roundSeconds = o[Key.roundSeconds]?.doubleValue
        deck = o[Key.deck]?.stringValue
        deckSize = o[Key.deckSize]?.intValue
        reason = o[Key.reason]?.stringValue
        decisionMs = o[Key.decisionMs]?.intValue
        gesture = o[Key.gesture]?.stringValue
        result = o[Key.result]?.objectValue
        orientation = o[Key.orientation]?.objectValue.map(HeadFrameBody.init)
        fields = o
    }

    /// Whether the line is an answer (`correct` or `skip`): what Home Assistant's event and the
    /// bench count.
    public var isDecision: Bool { kind == "correct" || kind == "skip" }

    /// The fields' JSON Schema properties (`ProtocolSchema`). Types admit null where the daemon
    /// writes null, and a `shared` line's view (docs/mqtt.md) meets them too.
    public static var schemaFields: JSONObject {
        func typed(_ types: [String], _ description: String) -> JSONValue {
            ["type": .array(types.map { .string($0) }), "description": .string(description)]
        }
        return [
            Key.kind: typed(["string"], "what happened (docs/game.md): round_started, prompt, correct, …, or shared"),
            Key.round: typed(["integer", "null"], "the round; null outside a round"),
            Key.state: typed(["string"], "the game's state after the event (a room's phase for shared)"),
            Key.remainingMs: typed(["integer", "null"], "time left in the round, ms"),
            Key.score: typed(["integer"], "correct answers so far"),
            Key.prompt: typed(["string", "null"], "the prompt on screen (for correct and skip: the one answered)"),
            Key.tiltDeg: typed(["number", "null"], "the head's tilt at the event, degrees"),
            Key.roundSeconds: typed(["number"], "round_started: the round's length, s"),
            Key.deck: typed(["string"], "round_started: the deck's name"),
            Key.deckSize: typed(["integer"], "round_started: the deck's distinct prompts"),
            Key.reason: typed(
                ["string", "null"], "neutral_rejected, orientation_suspect: why (shared: why the round ended)"),
            Key.decisionMs: typed(["integer", "null"], "correct, skip: ms from the prompt to the answer"),
            Key.gesture: typed(["string"], "correct, skip with nod gestures: the gesture that answered"),
            Key.result: typed(["object", "null"], "round_ended, stopped: the round's result"),
            Key.orientation: typed(["object", "null"], "head_frame: the head frame now in use"),
        ]
    }
}

/// The game's whole state, as `hello`'s and the `status` reply's `game` (`TiltGame.snapshot`): a
/// client joining mid-round can draw the screen from it alone.
public struct GameStateBody: Sendable, Equatable {
    /// The game's state (`idle`, `neutral`, `prompt`, …).
    public var state: String
    /// The newest attitude's time the snapshot is relative to; nil before any.
    public var tNs: Nanoseconds?
    /// The running round, nil when none.
    public var round: Int64?
    /// Time left in the round, ms.
    public var remainingMs: Int64?
    /// Correct answers so far.
    public var score: Int64?
    /// The prompt on screen.
    public var prompt: String?
    /// The head's latest tilt, degrees.
    public var tiltDeg: Double?
    /// The head frame in use, and whether the rotation seen makes it suspect.
    public var orientation: HeadFrameBody?
    /// The rules in force.
    public var config: GameRulesBody?
    /// The whole object (`deck`, `correct`, `neutral`, `last_round`, …).
    public var fields: JSONObject

    /// Reads a game state; nil without `state`.
    public init?(_ o: JSONObject) {
        guard let state = o[GameBody.Key.state]?.stringValue else { return nil }
        self.state = state
        tNs = o["t_ns"]?.intValue
        round = o[GameBody.Key.round]?.intValue
        remainingMs = o[GameBody.Key.remainingMs]?.intValue
        score = o[GameBody.Key.score]?.intValue
        prompt = o[GameBody.Key.prompt]?.stringValue
        tiltDeg = o[GameBody.Key.tiltDeg]?.doubleValue
        orientation = o[GameBody.Key.orientation]?.objectValue.map(HeadFrameBody.init)
        config = o["config"]?.objectValue.map(GameRulesBody.init)
        fields = o
    }
}

/// A head frame as the game reports it (`orientation`): where it came from and, in a game
/// state, whether the rotation seen makes it suspect.
public struct HeadFrameBody: Sendable, Equatable {
    /// `default`, `configured`, `calibrated`, `learned`, ….
    public var source: String?
    /// Whether the rotation seen says the frame cannot be right (game state only).
    public var suspect: Bool?
    /// The frame's axes, as sent.
    public var forward: Triple?, up: Triple?

    /// Reads an orientation object.
    public init(_ o: JSONObject) {
        source = o["source"]?.stringValue
        suspect = o["suspect"]?.boolValue
        forward = Triple(o["forward"])
        up = Triple(o["up"])
    }
}

/// The game's rules in force as the game state reports them (`config`, `TiltGame.Rules.json`):
/// what a client needs to draw the gauge.
public struct GameRulesBody: Sendable, Equatable {
    /// `absolute` or `relative`.
    public var mode: String?
    /// The thresholds of the decision zones, degrees.
    public var lowThresholdDeg: Double?, highThresholdDeg: Double?
    /// What the low side answers: `correct` or `skip`.
    public var lowSide: String?
    /// `tilt` or `nod`.
    public var gestures: String?
    /// The round length, s.
    public var roundSeconds: Double?

    /// Reads a rules object.
    public init(_ o: JSONObject) {
        mode = o["mode"]?.stringValue
        lowThresholdDeg = o["low_threshold_deg"]?.doubleValue
        highThresholdDeg = o["high_threshold_deg"]?.doubleValue
        lowSide = o["low_side"]?.stringValue
        gestures = o["gestures"]?.stringValue
        roundSeconds = o["round_s"]?.doubleValue
    }
}
