// SPDX-License-Identifier: Apache-2.0
import TiltClient
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol

/// The daemon's lines as MQTT messages: which topic each class goes to, which are retained, and
/// the Home Assistant event payloads; the shared round shown back to the daemon's clients.
extension Bridge {
    /// One line from the daemon (replies to the bridge's own requests come as their results).
    func line(_ l: DaemonLine, now: Int64) {
        guard let cls = l.cls else { return }  // a newer daemon's class: not published
        let raw = Array(l.text.utf8)
        let name = cls.rawValue
        switch cls {
        case .hello:
            // The sources' current states, as the status lines a subscriber would have seen.
            guard case .hello(let hello) = l.body else { return }
            for source in hello.sources where RoomState.isValidID(source.source) {
                let name = source.source
                var line: JSONObject = ["class": "status"]
                if let t = l.tNs { line["t_ns"] = .int(t) }
                for (k, v) in source.object.entries { line[k] = v }
                send(
                    OutgoingMessage(
                        topic: topics.status(source: name), payload: bytes(line), qos: qos("status"), retain: true))
            }
            room?.daemon(up: true, now: now)
        case .attitude:
            room?.attitude(l, now: now)
            guard m.attitudeHz > 0, now - lastAttitudeAt >= nanoseconds(ofSeconds: 1 / m.attitudeHz) else { return }
            lastAttitudeAt = now
            send(OutgoingMessage(topic: topics.events(name), payload: raw, qos: qos(name), retain: true))
        case .status:
            let source = if case .status(let s) = l.body { s.source } else { "daemon" }
            send(
                OutgoingMessage(
                    topic: topics.status(source: RoomState.isValidID(source) ? source : "daemon"), payload: raw,
                    qos: qos(name), retain: true))
        case .fix:
            fixAge.fixArrived(at: now)
            send(OutgoingMessage(topic: topics.events(name), payload: raw, qos: qos(name), retain: true))
        case .game, .place, .quest, .credit:
            // Credit and the game's score are states for Home Assistant's sensors: retained.
            send(
                OutgoingMessage(
                    topic: topics.events(name), payload: raw, qos: qos(name), retain: cls == .credit || cls == .game))
            if let (isGame, payload) = Discovery.eventPayload(l) {
                send(
                    OutgoingMessage(
                        topic: isGame ? topics.gameDecisionEvent : topics.placeEvent, payload: payload, qos: qos(name),
                        retain: false))
            }
        case .sample, .reply, .gap:
            break
        }
    }

    /// The shared round as this device sees it: retained on `<prefix>/room`, and shown to the
    /// daemon's socket clients (`room.show`, a `game` line of kind `shared`).
    func showRoom(_ view: JSONObject) {
        roomView = view
        var o: JSONObject = ["class": "game"]
        for (k, v) in view.entries { o[k] = v }
        send(OutgoingMessage(topic: topics.roomView, payload: bytes(o), qos: qos("room"), retain: true))
        showRoomToDaemon()
    }

    func showRoomToDaemon() {
        guard daemonUp, let v = roomView else { return }
        let logger = self.logger
        link.request(["cmd": "room.show", "view": .object(v)]).whenSuccess { reply in
            guard !reply.ok else { return }
            logger.warning(
                "the daemon refused room.show: \(reply.error?.message ?? "?") (is this bridge's user in [socket] trusted_uids/trusted_gids?)"
            )
        }
    }
}
