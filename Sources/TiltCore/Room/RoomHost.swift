// SPDX-License-Identifier: Apache-2.0
import TiltProtocol

/// The host's side of a shared round: the only code that changes a room's state. Pure: no I/O,
/// no clock — every input carries the host's monotonic time `t` (ns). The caller calls `tick`
/// before each input and on a timer, and publishes `state` (retained) whenever a call returns
/// `changed` (a decision that arrives after the round's end also ends it: publish after
/// `not_running` too when `state.rev` moved).
///
/// Exactly once: a decision is applied only if it answers the player's next prompt
/// (`index == player.index`) in the running round; its request id is remembered per player and
/// round, so a redelivered or re-sent copy is a `duplicate` and changes nothing.
public struct RoomHost: Sendable {
    /// What became of an input.
    public enum Outcome: Sendable, Equatable {
        /// The state changed: publish it.
        case changed
        /// Nothing to do (a repeat of something already applied, or no change).
        case unchanged
        /// A decision already applied (same player and request id): ignored.
        case duplicate
        /// Refused: nothing changed; tell the sender or log it.
        case refused(RoomRefusal)
    }

    /// The room as it stands (publish it after every `changed`).
    public private(set) var state: RoomState
    private var endsAt: Int64 = 0
    /// Request ids applied in the running round, per player.
    private var applied: [String: Set<String>] = [:]
    /// What each player last said of itself (presence messages) and whose device status topic
    /// last said `offline`. A player is `here` only when both agree: its device may be online
    /// while its daemon is gone (it says `away`), or offline while its last word was `here`.
    private var declared: [String: RoomState.Player.Presence] = [:]
    private var offline = Set<String>()

    /// A host for `room`, itself player `host` (with its device status topic); `session` must
    /// differ from any earlier run's (the bridge uses its start time).
    public init(room: String, host: String, hostStatusTopic: String?, session: String) {
        state = RoomState(room: room, host: host, hostStatusTopic: hostStatusTopic)
        state.session = session
        state.players = [RoomState.Player(id: host, statusTopic: hostStatusTopic)]
    }

    // MARK: round control (the host's own commands)

    /// Starts a round of `roundMs` with `prompts` (in play order) at `t`; every player starts
    /// from prompt 0 with score 0, and players who left are dropped.
    public mutating func start(prompts: [String], roundMs: Int64, at t: Int64) -> Outcome {
        if state.phase == .playing {
            return .refused(RoomRefusal("round_in_progress", "a round is running; stop it first (room.stop)"))
        }
        guard !prompts.isEmpty, prompts.count <= RoomState.maxPrompts else {
            return .refused(
                RoomRefusal("bad_argument", "a round needs 1–\(RoomState.maxPrompts) prompts, got \(prompts.count)"))
        }
        let range = CommandCatalogue.roundSecondsRange
        guard Double(roundMs) >= range.lowerBound * 1000, Double(roundMs) <= range.upperBound * 1000 else {
            return .refused(
                RoomRefusal("invalid_round_length", "round length must be \(CommandCatalogue.roundSecondsText) s"))
        }
        for p in state.players where p.presence == .left { declared[p.id] = nil; offline.remove(p.id) }
        state.players.removeAll { $0.presence == .left }
        for i in state.players.indices { state.players[i].index = 0; state.players[i].score = 0 }
        applied = [:]
        state.round += 1
        state.phase = .playing
        state.prompts = prompts
        state.roundMs = roundMs
        state.remainingMs = roundMs
        state.reason = nil
        endsAt = t + roundMs * 1_000_000
        return bump()
    }

    /// Ends the running round now (`stopped`, or `host_stopped` when the host is shutting down).
    public mutating func stop(at t: Int64, reason: RoomState.EndReason = .stopped) -> Outcome {
        guard state.phase == .playing else { return .refused(RoomRefusal("not_running", "no round is running")) }
        end(at: t, reason)
        return bump()
    }

    /// Ends the round when its time is up; call it periodically and before every input.
    public mutating func tick(at t: Int64) -> Outcome {
        guard state.phase == .playing, t >= endsAt else { return .unchanged }
        end(at: t, .timeout)
        return bump()
    }

    /// Time left in the running round at `t`, ms (0 when not playing).
    public func remainingMs(at t: Int64) -> Int64 {
        state.phase == .playing ? max(0, (endsAt - t) / 1_000_000) : 0
    }

    /// Refreshes `remainingMs` for publishing at `t` (not a change: `rev` stays).
    public mutating func stamp(at t: Int64) { state.remainingMs = remainingMs(at: t) }

    // MARK: players

    /// A player announced itself here, away or leaving. `topicPlayer` is the player named by
    /// the topic it came on (the broker's ACL lets each device write only its own), which the
    /// payload must match.
    public mutating func presence(_ p: RoomPresence, topicPlayer: String, at t: Int64) -> Outcome {
        if let r = checkSender(room: p.room, player: p.player, topicPlayer: topicPlayer) { return .refused(r) }
        if p.player == state.host { return .unchanged }
        if let s = p.statusTopic, let why = statusTopicProblem(s) {
            return .refused(RoomRefusal("bad_argument", "status_topic \(why)"))
        }
        if let i = state.players.firstIndex(where: { $0.id == p.player }) {
            declared[p.player] = p.presence
            if let s = p.statusTopic { state.players[i].statusTopic = s }
            return update(i)
        }
        // A newcomer joins here or away (its device is up, its daemon not yet); leaving before
        // joining is nothing.
        if p.presence == .left { return .unchanged }
        guard state.players.count < RoomState.maxPlayers else {
            return .refused(RoomRefusal("room_full", "the room has \(RoomState.maxPlayers) players"))
        }
        declared[p.player] = p.presence
        state.players.append(RoomState.Player(id: p.player, statusTopic: p.statusTopic))
        return update(state.players.count - 1, force: true)
    }

    /// Why the host must not subscribe to a player's `status_topic`, or nil. The host subscribes
    /// to it as sent: `#` once gave a player's presence all of the broker's topics under the
    /// host's ACL. A status topic is one topic (no `#`, `+` or NUL), at most 256 bytes, a
    /// device's `<prefix>/status` under the same first level as the host's own (`tiltd/…`).
    public func statusTopicProblem(_ s: String) -> String? {
        if s.utf8.contains(where: { $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "+") || $0 == 0 }) {
            return "must be one topic, without the wildcards # and +"
        }
        if s.utf8.count > 256 { return "is longer than 256 bytes" }
        guard s.hasSuffix("/status") else { return "must be a device's <prefix>/status" }
        if let host = state.hostStatusTopic, let root = host.split(separator: "/").first,
            !s.hasPrefix(root + "/")
        {
            return "must be under \(root)/ as the host's is"
        }
        return nil
    }

    /// The device status topic `topic` said `online` or `offline`: a player whose device went
    /// offline is `away` (its score kept), and `here` again when it is back.
    public mutating func deviceStatus(topic: String, online: Bool, at t: Int64) -> Outcome {
        var changed = false
        for i in state.players.indices where state.players[i].statusTopic == topic && state.players[i].id != state.host
        {
            if online { offline.remove(state.players[i].id) } else { offline.insert(state.players[i].id) }
            if update(i) == .changed { changed = true }
        }
        return changed ? .changed : .unchanged
    }

    /// Recomputes player `i`'s presence from what it said and its device's status.
    private mutating func update(_ i: Int, force: Bool = false) -> Outcome {
        let id = state.players[i].id
        let d = declared[id] ?? .here
        let p: RoomState.Player.Presence = d == .left ? .left : (offline.contains(id) ? .away : d)
        guard force || p != state.players[i].presence else { return .unchanged }
        state.players[i].presence = p
        return bump()
    }

    // MARK: decisions

    /// A decision arrived on `topicPlayer`'s decision topic.
    public mutating func decision(_ d: RoomDecision, topicPlayer: String, at t: Int64) -> Outcome {
        // A decision arriving after the round's end must not count, even if no tick came since.
        if tick(at: t) == .changed {
            return .refused(RoomRefusal("not_running", "the round ended before this decision arrived"))
        }
        if let r = checkSender(room: d.room, player: d.player, topicPlayer: topicPlayer) { return .refused(r) }
        guard let i = state.players.firstIndex(where: { $0.id == d.player }) else {
            return .refused(RoomRefusal("unknown_player", "\(d.player) has not joined room \(state.room)"))
        }
        if applied[d.player]?.contains(d.requestID) == true, d.round == state.round { return .duplicate }
        guard state.phase == .playing else { return .refused(RoomRefusal("not_running", "no round is running")) }
        guard d.round == state.round else {
            return .refused(
                RoomRefusal("wrong_round", "decision for round \(d.round); round \(state.round) is running"))
        }
        let p = state.players[i]
        if d.index < p.index { return .refused(RoomRefusal("stale", "\(d.player) already answered prompt \(d.index)")) }
        guard d.index == p.index, d.index < state.prompts.count else {
            return .refused(RoomRefusal("out_of_order", "\(d.player)'s next prompt is \(p.index), not \(d.index)"))
        }
        applied[d.player, default: []].insert(d.requestID)
        state.players[i].index += 1
        if d.decision == .correct { state.players[i].score += 1 }
        // Everyone still in the game has run through the deck: nothing more can happen.
        let active = state.players.filter { $0.presence == .here }
        if !active.isEmpty, active.allSatisfy({ $0.index >= state.prompts.count }) { end(at: t, .deckEmpty) }
        return bump()
    }

    // MARK: internals

    /// A message must be for this room, and name the player whose topic it came on.
    private func checkSender(room: String, player: String, topicPlayer: String) -> RoomRefusal? {
        if room != state.room {
            return RoomRefusal("wrong_room", "message for room \(room) on room \(state.room)'s topic")
        }
        if player != topicPlayer {
            return RoomRefusal("forged", "message names player \(player) but came on \(topicPlayer)'s topic")
        }
        return nil
    }

    private mutating func end(at t: Int64, _ reason: RoomState.EndReason) {
        state.phase = .ended
        state.reason = reason
        state.remainingMs = remainingMs(at: t)
        endsAt = t
    }

    private mutating func bump() -> Outcome {
        state.rev += 1
        return .changed
    }
}
