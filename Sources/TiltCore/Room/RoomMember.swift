// SPDX-License-Identifier: Apache-2.0
import TiltProtocol

/// A player's side of a shared round (the host's own device is a member too). Pure: it never
/// changes the round, it follows the host's state and turns the wearer's local decisions into
/// `RoomDecision`s, keeping those the host has not yet shown as `pending` so they can be sent
/// again after a reconnect (the host applies each request id once).
public struct RoomMember: Sendable {
    /// The room and this player's id.
    public let room: String
    /// This device's player id.
    public let player: String
    /// The newest host state seen.
    public private(set) var state: RoomState?
    /// Whether the host's device status topic last said `online` (assumed until told otherwise).
    public private(set) var hostOnline = true
    /// Decisions sent and not yet counted in `state`, oldest first (consecutive prompts).
    public private(set) var pending: [RoomDecision] = []

    /// A member `player` of `room`, knowing nothing yet.
    public init(room: String, player: String) { self.room = room; self.player = player }

    /// Takes a state the host published. Returns false (and keeps the old one) for another
    /// room's, or an older one from the same host session.
    public mutating func receive(_ s: RoomState) -> Bool {
        guard s.room == room else { return false }
        if let cur = state, cur.session == s.session, s.rev <= cur.rev { return false }
        // A new session means the host restarted, so it is there. Within one session a state
        // proves nothing: a retained one may arrive after the host's `offline` status.
        if let cur = state, cur.session != s.session { hostOnline = true }
        state = s
        if s.phase != .playing { pending = [] }
        let counted = s.player(player)?.index ?? 0
        pending.removeAll { $0.round != s.round || $0.index < counted }
        return true
    }

    /// The host's device status topic said `online` or `offline` (the caller decides when an
    /// `offline` is final: see RoomLink). Returns whether that changed. Pending decisions are
    /// kept: if the same host session comes back, they are sent again and still count.
    public mutating func hostStatus(online: Bool) -> Bool {
        guard online != hostOnline else { return false }
        hostOnline = online
        return true
    }

    /// The round as this device shows it: the host's phase, except that a round whose host
    /// vanished is over (`host_lost`).
    public var phase: RoomState.Phase {
        guard let s = state else { return .idle }
        return s.phase == .playing && !hostOnline ? .ended : s.phase
    }

    /// Why the round shown is over (nil while it runs).
    public var reason: RoomState.EndReason? {
        guard let s = state else { return nil }
        return s.phase == .playing && !hostOnline ? .hostLost : s.reason
    }

    /// Whether this player's decisions count now: a round runs, the host is there, and the
    /// host has this player in the room with prompts left.
    public var isPlaying: Bool {
        guard phase == .playing, let s = state, s.player(player) != nil, let i = nextIndex else { return false }
        return i < s.prompts.count
    }

    /// This player's next prompt position: answered in the host's state plus pending ones.
    public var nextIndex: Int? {
        guard let s = state, let me = s.player(player) else { return nil }
        return me.index + pending.count
    }

    /// The prompt to show now, if this player is playing.
    public var prompt: String? {
        guard isPlaying, let s = state, let i = nextIndex else { return nil }
        return s.prompts[i]
    }

    /// The wearer answered the prompt on screen: the message to send to the host (nil when
    /// not playing). It stays pending until the host's state counts it.
    public mutating func decide(_ d: Decision) -> RoomDecision? {
        guard isPlaying, let s = state, let i = nextIndex else { return nil }
        let msg = RoomDecision(room: room, player: player, round: s.round, index: i, decision: d)
        pending.append(msg)
        return msg
    }

    /// The shared round as a `game` line's fields (`kind` "shared"), for the device's socket
    /// clients: the round, this player's prompt and score, and every player's score.
    /// `elapsedMs` is the time since `state` arrived, to count `remaining_ms` down.
    public func view(elapsedMs: Int64 = 0) -> JSONObject {
        var o: JSONObject = ["kind": "shared", "room": .string(room), "player": .string(player)]
        guard let s = state else {
            o["state"] = "idle"
            return o
        }
        o["host"] = .string(s.host)
        o["round"] = s.round > 0 ? .int(Int64(s.round)) : .null
        o["state"] = .string(phase.rawValue)
        o["reason"] = reason.map { .string($0.rawValue) } ?? .null
        o["remaining_ms"] = phase == .playing ? .int(max(0, s.remainingMs - elapsedMs)) : .int(0)
        o["prompt"] = prompt.map { .string($0) } ?? .null
        o["index"] = nextIndex.map { .int(Int64($0)) } ?? .null
        o["deck_size"] = .int(Int64(s.prompts.count))
        o["score"] = .int(Int64(s.player(player)?.score ?? 0))
        o["pending"] = .int(Int64(pending.count))
        o["players"] = .array(
            s.players.map { p in
                .object([
                    "player": .string(p.id), "presence": .string(p.presence.rawValue),
                    "index": .int(Int64(p.index)), "score": .int(Int64(p.score)),
                ])
            })
        return o
    }
}
