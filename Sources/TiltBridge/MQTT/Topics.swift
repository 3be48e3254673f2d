// SPDX-License-Identifier: Apache-2.0
import TiltConfig

/// Every topic the bridge uses, from the config: defined once (docs/mqtt.md lists them).
public struct Topics: Sendable {
    /// `<prefix>`, e.g. `tiltd/kitchen`.
    public let prefix: String
    /// `<room_topic>/<room>` when in a room.
    public let roomRoot: String?

    /// The topics of the bridge configured by `m`.
    public init(_ m: Configuration.MQTT) {
        prefix = m.prefix
        roomRoot = m.room.map { "\(m.roomTopic)/\($0)" }
    }

    /// `online` / `offline` (retained; the Last Will says `offline`).
    public var availability: String { "\(prefix)/status" }
    /// The latest `status` line of one source (`imu`, `magnetometer`, `gps`, `store`, `config`, `game`, `mqtt`),
    /// retained.
    public func status(source: String) -> String { "\(prefix)/status/\(source)" }
    /// The socket's lines of class `cls` (`attitude`, `game`, `fix`, `place`, `quest`, `credit`).
    public func events(_ cls: String) -> String { "\(prefix)/\(cls)" }
    /// Commands in, replies out.
    public var command: String { "\(prefix)/cmd" }
    /// Where replies to commands (and the host's refusals) go.
    public var reply: String { "\(prefix)/reply" }
    /// `{"age_s":…}`: seconds since the bridge last received a fix (retained).
    public var fixAge: String { "\(prefix)/fix_age" }
    /// Home Assistant event entities' payloads (`event_type` added).
    public var gameDecisionEvent: String { "\(prefix)/event/game" }
    /// Home Assistant's place event entity's topic.
    public var placeEvent: String { "\(prefix)/event/place" }
    /// This device's view of the shared round (retained): what its socket clients see.
    public var roomView: String { "\(prefix)/room" }

    /// The room's state, published by the host only (retained).
    public var roomState: String? { roomRoot.map { "\($0)/state" } }
    /// A player's presence (retained) and decisions (QoS 1).
    public func presence(_ player: String) -> String? { roomRoot.map { "\($0)/player/\(player)/presence" } }
    /// Player `player`'s decisions (QoS 1, not retained).
    public func decision(_ player: String) -> String? { roomRoot.map { "\($0)/player/\(player)/decision" } }
    /// Subscriptions the host makes for every player's presence and decisions.
    public var allPresence: String? { roomRoot.map { "\($0)/player/+/presence" } }
    /// The host's subscription to every player's decisions.
    public var allDecisions: String? { roomRoot.map { "\($0)/player/+/decision" } }

    /// The player named by a room player topic (`…/player/<id>/<kind>`), and the kind.
    public func roomPlayerTopic(_ topic: String) -> (player: String, kind: String)? {
        guard let root = roomRoot, topic.hasPrefix(root + "/player/") else { return nil }
        let rest = topic.dropFirst(root.count + "/player/".count).split(
            separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 2 else { return nil }
        return (String(rest[0]), String(rest[1]))
    }
}
