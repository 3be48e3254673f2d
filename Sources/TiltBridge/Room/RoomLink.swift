// SPDX-License-Identifier: Apache-2.0
import Logging
import TiltConfig
import TiltCore
import TiltProtocol

/// This device's part in a shared room over MQTT: a member always (it follows the host's state,
/// detects the wearer's answers and sends them), and the host too when `[mqtt] room_host`.
/// The rules live in TiltCore (`RoomMember`, `RoomHost`); this class only moves messages.
/// Used only from the bridge's event loop.
final class RoomLink {
    let room: String
    let player: String
    let topics: Topics
    let qos: Int32
    private(set) var member: RoomMember
    private(set) var host: HostRoom?
    private var detector: DecisionDetector
    private let statusTopic: String
    private let publish: (OutgoingMessage) -> Void
    private let subscribe: (String) -> Void
    private let logger: Logger

    /// The host status topic the member watches (learnt from the state).
    private var watchedHostStatus: String?
    /// When the current state arrived (to count `remaining_ms` down) and when pending
    /// decisions were last sent.
    private var stateArrived: Int64 = 0
    private var lastResend: Int64 = 0
    /// Whether the daemon is streaming to us (else the player is `away`).
    private var daemonUp = false
    /// When the host's status said `offline`, if it has not said `online` since. The round is
    /// lost only when that lasts `hostLossGrace` while our own connection stays up: a broker
    /// restart makes every client look offline for a moment (Mosquitto sends the wills of the
    /// clients it drops), and the host is back as soon as it reconnects.
    private var hostOfflineSince: Int64?
    static let hostLossGrace: Int64 = 3_000_000_000
    /// Called with the member's view after every change (the bridge publishes it and shows it
    /// to the daemon's socket clients).
    var onView: ((JSONObject) -> Void)?

    init(
        config: Configuration, topics: Topics, session: String, publish: @escaping (OutgoingMessage) -> Void,
        subscribe: @escaping (String) -> Void, unsubscribe: @escaping (String) -> Void = { _ in }, logger: Logger
    ) throws {
        let m = config.mqtt
        room = m.room!
        player = m.name
        self.topics = topics
        qos = Int32(m.qos["room"] ?? 1)
        statusTopic = topics.availability
        member = RoomMember(room: room, player: player)
        detector = try DecisionDetector(rules: config.game.rules)
        self.publish = publish
        self.subscribe = subscribe
        self.logger = logger
        if m.roomHost {
            host = try HostRoom(
                config: config, topics: topics, session: session, qos: qos, publish: publish,
                subscribe: subscribe, unsubscribe: unsubscribe, logger: logger)
        }
    }

    /// Subscriptions to (re)make after every connect.
    var subscriptions: [String] {
        var s = [topics.roomState!]
        if let w = watchedHostStatus { s.append(w) }
        if let h = host { s += h.subscriptions }
        return s
    }

    /// After a (re)connect: announce ourselves again (the broker may have lost retained
    /// messages in a restart), republish the host's state, re-send undelivered decisions.
    func connected(now: Int64) {
        hostOfflineSince = nil
        announce()
        host?.publishState(now: now)
        resendPending(now: now)
    }

    private func announce() {
        let p = RoomPresence(room: room, player: player, presence: daemonUp ? .here : .away, statusTopic: statusTopic)
        publish(
            OutgoingMessage(
                topic: topics.presence(player)!, payload: bytes(RoomCodec.encode(p)), qos: qos, retain: true))
    }

    /// A message on any topic: returns true when it was the room's.
    func message(topic: String, payload: [UInt8], now: Int64) -> Bool {
        if topic == topics.roomState {
            if payload.isEmpty { return true }
            do {
                let s = try RoomCodec.decodeState(payload)
                if member.receive(s) {
                    stateArrived = now
                    if let h = s.hostStatusTopic, h != watchedHostStatus {
                        watchedHostStatus = h
                        subscribe(h)
                    }
                    changed(now: now)
                }
            } catch {
                logger.warning("room \(room): ignoring a state that does not parse: \(error)")
            }
            return true
        }
        var handled = false
        if topic == watchedHostStatus, let online = Self.availability(payload) {
            if online {
                hostOfflineSince = nil
                if member.hostStatus(online: true) {
                    logger.info("room \(room): the host is back")
                    resendPending(now: now)
                    changed(now: now)
                }
            } else if hostOfflineSince == nil && member.hostOnline {
                hostOfflineSince = now
            }
            handled = true
        }
        if let h = host, h.message(topic: topic, payload: payload, now: now) { handled = true }
        return handled
    }

    /// One attitude line from the daemon: the wearer's head, for the decision detector.
    func attitude(_ line: DaemonLine, now: Int64) {
        guard member.isPlaying, let a = DecisionDetector.attitude(from: line) else { return }
        guard let d = detector.update(a) else {
            if detector.promptChanged { changed(now: now) }
            return
        }
        guard let msg = member.decide(d) else { return }
        lastResend = now
        publish(
            OutgoingMessage(
                topic: topics.decision(player)!, payload: bytes(RoomCodec.encode(msg)), qos: qos, retain: false))
        logger.debug("room \(room): \(player) answered prompt \(msg.index) \(d.rawValue)")
        changed(now: now)
    }

    /// The daemon connection came up (`hello`) or went down: the player is here or away. A
    /// restarted daemon's sample clock starts again, so the detector starts afresh.
    func daemon(up: Bool, now: Int64) {
        daemonUp = up
        detector.reset()
        announce()
        changed(now: now)
    }

    /// Periodic work: a host that stayed offline is lost; the host's timer; decisions the host has not counted after 2 s are sent
    /// again (they carry the same request id, so the host applies each once).
    func tick(now: Int64, brokerUp: Bool) {
        if !brokerUp { hostOfflineSince = nil }
        if let since = hostOfflineSince, now - since >= Self.hostLossGrace {
            hostOfflineSince = nil
            if member.hostStatus(online: false) {
                logger.warning(
                    "room \(room): the host has been offline for \(Self.hostLossGrace / 1_000_000_000) s; the round is over for this device"
                )
                changed(now: now)
            }
        }
        host?.tick(now: now)
        if !member.pending.isEmpty, now - lastResend > 2_000_000_000 { resendPending(now: now) }
    }

    private func resendPending(now: Int64) {
        guard !member.pending.isEmpty else { return }
        lastResend = now
        for d in member.pending {
            publish(
                OutgoingMessage(
                    topic: topics.decision(player)!, payload: bytes(RoomCodec.encode(d)), qos: qos, retain: false))
        }
    }

    /// `room.start`, `room.stop`, `room.restart`, `room.state` from `<prefix>/cmd`.
    func command(_ cmd: String, id: JSONValue, fields: JSONObject, now: Int64) -> JSONObject {
        guard let h = host else {
            return CommandGate.reply(
                id: id, cmd: cmd, code: .forbidden, "this device does not host room \(room) ([mqtt] room_host)")
        }
        return h.command(cmd, id: id, fields: fields, now: now)
    }

    /// Shutting down: a hosted round ends (`host_stopped`) so players are not left waiting.
    func shutdown(now: Int64) { host?.shutdown(now: now) }

    /// Re-aligns the detector with the host's count and reports the new view.
    private func changed(now: Int64) {
        if member.isPlaying, let i = member.nextIndex, let s = member.state, daemonUp {
            detector.follow(round: s.round, index: i, promptsLeft: s.prompts.count - i)
        } else {
            detector.reset()
        }
        var v = member.view(elapsedMs: max(0, now - stateArrived) / 1_000_000)
        v["shown"] = .bool(detector.promptShown)
        onView?(v)
    }

    static func availability(_ payload: [UInt8]) -> Bool? {
        switch String(decoding: payload, as: UTF8.self) {
        case "online": return true
        case "offline": return false
        default: return nil
        }
    }
}

func bytes(_ o: JSONObject) -> [UInt8] { Array(JSONValue.object(o).jsonText.utf8) }
