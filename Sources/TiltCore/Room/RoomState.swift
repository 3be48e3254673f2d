// SPDX-License-Identifier: Apache-2.0
/// The shared round of a room, as the host publishes it (retained) after every change: the one
/// authoritative copy every device shows. Wire format in docs/mqtt.md ("Room protocol").
///
/// Each player races through the same prompts in the same order; the host counts every
/// player's answers (`index` = prompts answered) and correct ones (`score`).
public struct RoomState: Sendable, Equatable {
    /// Where the room is.
    public enum Phase: String, Sendable {
        /// No round has run since the host started.
        case idle
        /// A round runs: decisions count.
        case playing
        /// The last round is over (`reason` says why); its scores stay until the next start.
        case ended
    }

    /// A player as the host sees it.
    public struct Player: Sendable, Equatable {
        /// How the player is connected.
        public enum Presence: String, Sendable {
            /// Connected and streaming: its decisions come in.
            case here
            /// Dropped out (its bridge or its daemon went away); keeps its place and score.
            case away
            /// Left the room on purpose; dropped at the next round start.
            case left
        }
        /// The player's id: the device's name, the last level of its room topics.
        public var id: String
        /// Here, away or left.
        public var presence: Presence
        /// Prompts answered in this round (the next prompt to show is `prompts[index]`).
        public var index: Int = 0
        /// Correct answers in this round.
        public var score: Int = 0
        /// The player's device status topic (its `<prefix>/status`): the host watches it to
        /// notice the player dropping out.
        public var statusTopic: String?

        /// A player who just joined.
        public init(id: String, presence: Presence = .here, statusTopic: String? = nil) {
            self.id = id; self.presence = presence; self.statusTopic = statusTopic
        }
    }

    /// Why a round ended.
    public enum EndReason: String, Sendable {
        /// The round's time ran out (host clock).
        case timeout
        /// Every player present answered every prompt.
        case deckEmpty = "deck_empty"
        /// The host stopped it.
        case stopped
        /// The host shut down cleanly during the round.
        case hostStopped = "host_stopped"
        /// The host vanished (its Last Will said `offline`): decided by each player, never sent by the host.
        case hostLost = "host_lost"
    }

    /// The room's name.
    public var room: String
    /// The host's player id.
    public var host: String
    /// The host's status topic: players watch it to notice the host vanishing.
    public var hostStatusTopic: String?
    /// Names one run of the host (it changes when the host restarts, and `rev` starts again).
    public var session: String = ""
    /// Grows by one with every change within a session; players ignore an older state.
    public var rev: Int = 0
    /// Idle, playing or ended.
    public var phase: Phase = .idle
    /// The round number (0 before the first).
    public var round: Int = 0
    /// The round's length, milliseconds.
    public var roundMs: Int64 = 0
    /// Time left when this state was made, milliseconds (host clock).
    public var remainingMs: Int64 = 0
    /// The prompts, in the order every player gets them.
    public var prompts: [String] = []
    /// Why the last round ended (nil while playing or idle).
    public var reason: EndReason?
    /// Players, in the order they first joined.
    public var players: [Player] = []

    /// An empty room hosted by `host`.
    public init(room: String, host: String, hostStatusTopic: String? = nil) {
        self.room = room; self.host = host; self.hostStatusTopic = hostStatusTopic
    }

    /// The player with `id`, if in the room.
    public func player(_ id: String) -> Player? { players.first { $0.id == id } }

    /// Most prompts a round may have, and most players a room takes: the state stays a few
    /// tens of kilobytes, well under a broker's usual message limits.
    public static let maxPrompts = 500
    /// Most players a room takes.
    public static let maxPlayers = 64
    /// Longest room, player or request id, in bytes (topic levels and ids stay short).
    public static let maxIDBytes = 64

    /// Whether `s` may be a room or player id: 1–64 bytes of letters, digits, `-`, `_`, `.`
    /// (so it is a valid, wildcard-free MQTT topic level).
    public static func isValidID(_ s: String) -> Bool {
        guard !s.isEmpty, s.utf8.count <= maxIDBytes else { return false }
        return s.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F
                || c == 0x2E
        }
    }
}

/// A player's answer to one prompt, sent to the host. `requestID` is `"<round>-<index>"`, so a
/// redelivered or re-sent decision carries the same id and is applied once.
public struct RoomDecision: Sendable, Equatable {
    /// The room it is for.
    public var room: String
    /// The player answering (must be the player of the topic it comes on).
    public var player: String
    /// The round it answers in.
    public var round: Int
    /// Which prompt (position in `RoomState.prompts`) this answers.
    public var index: Int
    /// Correct or skip.
    public var decision: Decision
    /// Names this answer: the same on every re-send, so the host applies it once.
    public var requestID: String

    /// A decision with the canonical request id.
    public init(room: String, player: String, round: Int, index: Int, decision: Decision) {
        self.room = room; self.player = player; self.round = round; self.index = index; self.decision = decision
        self.requestID = "\(round)-\(index)"
    }
}

/// A player announcing itself (or that it is away or leaving), retained on its presence topic.
public struct RoomPresence: Sendable, Equatable {
    /// The room.
    public var room: String
    /// The player announcing itself.
    public var player: String
    /// Here, away or left.
    public var presence: RoomState.Player.Presence
    /// The player's device status topic (`<prefix>/status`).
    public var statusTopic: String?

    /// An announcement.
    public init(room: String, player: String, presence: RoomState.Player.Presence, statusTopic: String?) {
        self.room = room; self.player = player; self.presence = presence; self.statusTopic = statusTopic
    }
}
