// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol

/// The host's side of a room over MQTT: reads players' presence and decisions, feeds them to
/// `RoomHost`, publishes the state (retained) after every change, and says why it refused
/// anything (a log line and a reply on `<prefix>/reply`).
final class HostRoom {
    private(set) var core: RoomHost
    private let topics: Topics
    private let qos: Int32
    private let config: Configuration
    private let publish: (OutgoingMessage) -> Void
    private let subscribe: (String) -> Void
    private let unsubscribe: (String) -> Void
    private let logger: Logger
    private var watchedStatus = Set<String>()
    private var rng: SplitMix64
    /// Refusals since start, by code (in the `room.state` reply).
    private(set) var refusals: [String: Int] = [:]

    init(
        config: Configuration, topics: Topics, session: String, qos: Int32,
        publish: @escaping (OutgoingMessage) -> Void,
        subscribe: @escaping (String) -> Void, unsubscribe: @escaping (String) -> Void = { _ in }, logger: Logger
    ) throws {
        let m = config.mqtt
        core = RoomHost(room: m.room!, host: m.name, hostStatusTopic: topics.availability, session: session)
        self.topics = topics
        self.qos = qos
        self.config = config
        self.publish = publish
        self.subscribe = subscribe
        self.unsubscribe = unsubscribe
        self.logger = logger
        rng = SplitMix64(seed: m.roomSeed ?? UInt64.random(in: 0...UInt64.max))
    }

    var subscriptions: [String] { [topics.allPresence!, topics.allDecisions!] + watchedStatus.sorted() }

    /// Publishes the state as it is now (retained).
    func publishState(now: Int64) {
        core.stamp(at: now)
        publish(
            OutgoingMessage(
                topic: topics.roomState!, payload: bytes(RoomCodec.encode(core.state)), qos: qos, retain: true))
    }

    func tick(now: Int64) {
        if core.tick(at: now) == .changed {
            logger.info(
                "room \(core.state.room): round \(core.state.round) ended (\(core.state.reason?.rawValue ?? "?"))")
            publishState(now: now)
        }
    }

    /// Presence, decisions and players' device status: returns true when the topic was one of them.
    func message(topic: String, payload: [UInt8], now: Int64) -> Bool {
        if let (player, kind) = topics.roomPlayerTopic(topic) {
            tick(now: now)
            let rev = core.state.rev
            let outcome: RoomHost.Outcome
            switch kind {
            case "presence":
                if payload.isEmpty { return true }
                do {
                    outcome = core.presence(try RoomCodec.decodePresence(payload), topicPlayer: player, at: now)
                } catch {
                    outcome = .refused(error)
                }
            case "decision":
                do {
                    outcome = core.decision(try RoomCodec.decodeDecision(payload), topicPlayer: player, at: now)
                } catch {
                    outcome = .refused(error)
                }
            default:
                return false
            }
            if case .refused(let r) = outcome { refuse(r, player: player, kind: kind, payload: payload) }
            if core.state.rev != rev { publishState(now: now) }
            watchPlayers()
            return true
        }
        if watchedStatus.contains(topic), let online = RoomLink.availability(payload) {
            tick(now: now)
            if core.deviceStatus(topic: topic, online: online, at: now) == .changed { publishState(now: now) }
            return true
        }
        return false
    }

    /// Subscribes to each player's device status, to notice it dropping out: only topics the
    /// core accepted (`RoomHost.statusTopicProblem`), at most one per player of the room (so at
    /// most `RoomState.maxPlayers`), and a player gone from the room is unsubscribed.
    private func watchPlayers() {
        var wanted = Set<String>()
        for p in core.state.players where p.id != core.state.host {
            if let s = p.statusTopic, core.statusTopicProblem(s) == nil { wanted.insert(s) }
        }
        for s in wanted.subtracting(watchedStatus) { subscribe(s) }
        for s in watchedStatus.subtracting(wanted) { unsubscribe(s) }
        watchedStatus = wanted
    }

    private func refuse(_ r: RoomRefusal, player: String, kind: String, payload: [UInt8]) {
        refusals[r.code, default: 0] += 1
        logger.warning("room \(core.state.room): refused \(kind) on \(player)'s topic: \(r)")
        var reply = CommandGate.reply(id: .null, cmd: "room.\(kind)", code: .init(rawValue: r.code), r.message)
        reply["player"] = .string(player)
        if let rid = (try? JSONParser.parse(payload))?["request_id"] { reply["request_id"] = rid }
        publish(OutgoingMessage(topic: topics.reply, payload: bytes(reply), qos: qos, retain: false))
    }

    /// `room.start [round_s]`, `room.stop`, `room.restart`, `room.state` (`CommandCatalogue.roomCommands`),
    /// with their arguments checked.
    func command(_ cmd: String, id: JSONValue, fields: JSONObject, now: Int64) -> JSONObject {
        tick(now: now)
        let outcome: RoomHost.Outcome
        switch cmd {
        case "room.start", "room.restart":
            // `round_s` was checked against the catalogue's range (`CommandGate`, `Request.parse`).
            let seconds = fields["round_s"]?.doubleValue ?? config.mqtt.roomRoundSeconds
            let prompts: [String]
            do { prompts = try deck() } catch {
                return CommandGate.reply(id: id, cmd: cmd, code: .deckUnavailable, "\(error)")
            }
            if cmd == "room.restart", core.state.phase == .playing {
                _ = core.stop(at: now)
                publishState(now: now)
            }
            outcome = core.start(prompts: prompts, roundMs: Int64(saturating: seconds * 1000), at: now)
        case "room.stop":
            outcome = core.stop(at: now)
        default:
            return CommandGate.ok(
                id: id, cmd: cmd,
                [
                    "room": .object(RoomCodec.encode(core.state)),
                    "refused": .object(
                        JSONObject(refusals.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
                ])
        }
        if case .refused(let r) = outcome {
            return CommandGate.reply(id: id, cmd: cmd, code: .init(rawValue: r.code), r.message)
        }
        publishState(now: now)
        logger.info("room \(core.state.room): \(cmd) → round \(core.state.round) \(core.state.phase.rawValue)")
        return CommandGate.ok(
            id: id, cmd: cmd,
            ["round": .int(Int64(core.state.round)), "deck_size": .int(Int64(core.state.prompts.count))])
    }

    /// The prompts of a new round, shuffled: `[mqtt] room_deck`, else `[game] deck` (a file),
    /// else the built-in deck. A deck name is found in `[game] deck_dir`.
    private func deck() throws -> [String] {
        var prompts: [String]
        if let deck = config.mqtt.roomDeck ?? config.game.deck.flatMap({ $0 == "nearby" ? nil : $0 }) {
            let path = config.deckPath(deck)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            prompts = try PromptDeck(name: PathName.lastComponent(of: path), text: text).prompts()
        } else {
            prompts = BuiltInDeck.deck.prompts()
        }
        rng.shuffle(&prompts)
        return Array(prompts.prefix(RoomState.maxPrompts))
    }

    /// The host is going away: a running round ends for everyone with `host_stopped`.
    func shutdown(now: Int64) {
        if core.stop(at: now, reason: .hostStopped) == .changed { publishState(now: now) }
    }
}

extension JSONObject {
    init(_ pairs: [(String, JSONValue)]) {
        self.init()
        for (k, v) in pairs { self[k] = v }
    }
}
