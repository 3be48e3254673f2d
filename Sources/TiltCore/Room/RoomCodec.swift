// SPDX-License-Identifier: Apache-2.0
import TiltProtocol

/// Why a room message was refused. `code` is stable; `message` is for people (and logs).
public struct RoomRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// `invalid_json`, `bad_argument`, `payload_too_large`, `wrong_room`, `forged`,
    /// `unknown_player`, `not_running`, `wrong_round`, `out_of_order`, `stale`, `room_full`.
    public var code: String
    /// What was wrong, for people and logs.
    public var message: String
    /// A refusal with `code` and `message`.
    public init(_ code: String, _ message: String) { self.code = code; self.message = message }
    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}

/// JSON for the room's three messages (state, decision, presence), defined once for the host,
/// the players, the tests and docs/mqtt.md.
public enum RoomCodec {
    /// Largest room message accepted, bytes (a 500-prompt state of 200-character prompts fits).
    public static let maxPayloadBytes = 128 * 1024

    // MARK: state

    /// The state as the host publishes it.
    public static func encode(_ s: RoomState) -> JSONObject {
        var o: JSONObject = ["room": .string(s.room), "host": .string(s.host)]
        o["host_status"] = s.hostStatusTopic.map { .string($0) } ?? .null
        o["session"] = .string(s.session)
        o["rev"] = .int(Int64(s.rev))
        o["state"] = .string(s.phase.rawValue)
        o["round"] = .int(Int64(s.round))
        o["round_ms"] = .int(s.roundMs)
        o["remaining_ms"] = .int(s.remainingMs)
        o["reason"] = s.reason.map { .string($0.rawValue) } ?? .null
        o["prompts"] = .array(s.prompts.map { .string($0) })
        o["players"] = .array(
            s.players.map { p in
                var po: JSONObject = ["player": .string(p.id), "presence": .string(p.presence.rawValue)]
                po["index"] = .int(Int64(p.index))
                po["score"] = .int(Int64(p.score))
                po["status_topic"] = p.statusTopic.map { .string($0) } ?? .null
                return .object(po)
            })
        return o
    }

    /// Reads a state a host published.
    public static func decodeState(_ bytes: [UInt8]) throws(RoomRefusal) -> RoomState {
        let o = try object(bytes)
        var s = RoomState(
            room: try id(o, "room"), host: try id(o, "host"), hostStatusTopic: o["host_status"]?.stringValue)
        s.session = o["session"]?.stringValue ?? ""
        s.rev = try int(o, "rev", 0...Int.max)
        guard let ph = o["state"]?.stringValue.flatMap(RoomState.Phase.init(rawValue:)) else {
            throw RoomRefusal("bad_argument", "\"state\" must be idle, playing or ended")
        }
        s.phase = ph
        s.round = try int(o, "round", 0...Int.max)
        s.roundMs = Int64(try int(o, "round_ms", 0...Int(Int32.max)))
        s.remainingMs = Int64(try int(o, "remaining_ms", 0...Int(Int32.max)))
        if let r = o["reason"]?.stringValue { s.reason = RoomState.EndReason(rawValue: r) }
        guard let ps = o["prompts"]?.arrayValue, ps.count <= RoomState.maxPrompts else {
            throw RoomRefusal("bad_argument", "\"prompts\" must be an array of at most \(RoomState.maxPrompts) strings")
        }
        s.prompts = try ps.map { v throws(RoomRefusal) in
            guard let p = v.stringValue else { throw RoomRefusal("bad_argument", "\"prompts\" must hold strings") }
            return p
        }
        guard let pl = o["players"]?.arrayValue, pl.count <= RoomState.maxPlayers else {
            throw RoomRefusal("bad_argument", "\"players\" must be an array of at most \(RoomState.maxPlayers) players")
        }
        for v in pl {
            guard let po = v.objectValue else { throw RoomRefusal("bad_argument", "\"players\" must hold objects") }
            guard let pr = po["presence"]?.stringValue.flatMap(RoomState.Player.Presence.init(rawValue:)) else {
                throw RoomRefusal("bad_argument", "a player's \"presence\" must be here, away or left")
            }
            var p = RoomState.Player(
                id: try id(po, "player"), presence: pr, statusTopic: po["status_topic"]?.stringValue)
            p.index = try int(po, "index", 0...RoomState.maxPrompts)
            p.score = try int(po, "score", 0...RoomState.maxPrompts)
            s.players.append(p)
        }
        return s
    }

    // MARK: decision

    /// A decision as a player publishes it.
    public static func encode(_ d: RoomDecision) -> JSONObject {
        [
            "room": .string(d.room), "player": .string(d.player), "round": .int(Int64(d.round)),
            "index": .int(Int64(d.index)), "decision": .string(d.decision.rawValue), "request_id": .string(d.requestID),
        ]
    }

    /// Reads a decision. Checks its form only; the host checks it against the round.
    public static func decodeDecision(_ bytes: [UInt8]) throws(RoomRefusal) -> RoomDecision {
        let o = try object(bytes)
        guard let dv = o["decision"]?.stringValue, let dec = Decision(rawValue: dv) else {
            throw RoomRefusal("bad_argument", "\"decision\" must be \"correct\" or \"skip\"")
        }
        var d = RoomDecision(
            room: try id(o, "room"), player: try id(o, "player"), round: try int(o, "round", 1...Int.max),
            index: try int(o, "index", 0...RoomState.maxPrompts), decision: dec)
        d.requestID = try id(o, "request_id")
        return d
    }

    // MARK: presence

    /// A presence announcement as a player publishes it.
    public static func encode(_ p: RoomPresence) -> JSONObject {
        var o: JSONObject = [
            "room": .string(p.room), "player": .string(p.player), "presence": .string(p.presence.rawValue),
        ]
        o["status_topic"] = p.statusTopic.map { .string($0) } ?? .null
        return o
    }

    /// Reads a presence announcement.
    public static func decodePresence(_ bytes: [UInt8]) throws(RoomRefusal) -> RoomPresence {
        let o = try object(bytes)
        guard let pr = o["presence"]?.stringValue.flatMap(RoomState.Player.Presence.init(rawValue:)) else {
            throw RoomRefusal("bad_argument", "\"presence\" must be here, away or left")
        }
        return RoomPresence(
            room: try id(o, "room"), player: try id(o, "player"), presence: pr,
            statusTopic: o["status_topic"]?.stringValue)
    }

    // MARK: helpers

    static func object(_ bytes: [UInt8]) throws(RoomRefusal) -> JSONObject {
        guard bytes.count <= maxPayloadBytes else {
            throw RoomRefusal("payload_too_large", "\(bytes.count) bytes, more than \(maxPayloadBytes)")
        }
        let v: JSONValue
        do { v = try JSONParser.parse(bytes) } catch {
            throw RoomRefusal(ProtocolError.Code.invalidJSON.rawValue, error.description)
        }
        guard let o = v.objectValue else {
            throw RoomRefusal(ProtocolError.Code.invalidJSON.rawValue, "expected a JSON object, got \(v.typeName)")
        }
        return o
    }

    static func id(_ o: JSONObject, _ key: String) throws(RoomRefusal) -> String {
        guard let s = o[key]?.stringValue, RoomState.isValidID(s) else {
            throw RoomRefusal(
                "bad_argument", "\"\(key)\" must be 1–\(RoomState.maxIDBytes) letters, digits, '-', '_' or '.'")
        }
        return s
    }

    static func int(_ o: JSONObject, _ key: String, _ range: ClosedRange<Int>) throws(RoomRefusal) -> Int {
        guard let i = o[key]?.intValue, i >= Int64(range.lowerBound), i <= Int64(range.upperBound) else {
            throw RoomRefusal(
                "bad_argument", "\"\(key)\" must be an integer in \(range.lowerBound)…\(range.upperBound)")
        }
        return Int(i)
    }
}
