import FoundationEssentials
import Glibc
import TiltCore
import TiltSensors

extension Configuration {
    /// `[mqtt]`: the `tiltd mqtt` bridge (docs/mqtt.md). The daemon only validates it.
    public struct MQTT: Sendable, Equatable {
        /// The event classes the bridge publishes, each on `<prefix>/<class>`.
        public static let classes = ["status", "attitude", "game", "fix", "place", "quest", "credit"]
        /// Commands the bridge handles itself (the room's), next to the daemon's.
        public static let bridgeCommands = ["room.start", "room.stop", "room.restart", "room.state"]

        /// False when the table is absent or says `enabled = false`.
        public var enabled = false
        /// This device's name: the player id in a room, Home Assistant's node id, part of the
        /// default prefix and client id. Default: the host name.
        public var name = MQTT.defaultName
        /// The broker's host name or address.
        public var host = "127.0.0.1"
        /// The broker's TCP port.
        public var port: UInt16 = 1883
        /// Default `tiltd-<name>`.
        public var clientID: String?
        /// Broker user name, if the broker wants one.
        public var username: String?
        /// A file holding the password (first line); must not be group- or world-readable.
        public var passwordFile: String?
        /// Where `password_file` is set, to name it in errors found when the bridge reads it.
        public var passwordFileLocation: ConfigError?
        /// TLS: the CA file that verifies the broker (TLS is on when set).
        public var tlsCAFile: String?
        /// TLS client certificate.
        public var tlsCertFile: String?
        /// TLS client key.
        public var tlsKeyFile: String?
        /// Default `tiltd/<name>`.
        public var topicPrefix: String?
        /// MQTT keepalive, seconds.
        public var keepaliveSeconds = 30
        /// QoS per class (`status`, `attitude`, … and `room`).
        public var qos: [String: Int] = [
            "status": 1, "attitude": 0, "game": 1, "fix": 0, "place": 1, "quest": 1, "credit": 1, "room": 1,
        ]
        /// Attitude messages per second (0 = none).
        public var attitudeHz = 2.0
        /// QoS 1 messages held while the broker is away; past that the oldest are dropped and counted.
        public var bufferMessages = 1000
        /// Commands accepted on `<prefix>/cmd` (default none).
        public var allowedCommands: [String] = []
        /// Largest command payload accepted on `<prefix>/cmd`, bytes.
        public var maxPayloadBytes = 4096
        /// Home Assistant discovery on or off (off removes what an earlier run published).
        public var discovery = true
        /// Home Assistant's discovery prefix.
        public var discoveryPrefix = "homeassistant"
        /// The shared room to join, if any.
        public var room: String?
        /// Whether this device hosts `room`.
        public var roomHost = false
        /// Room topics live under `<room_topic>/<room>/`.
        public var roomTopic = "tiltd/room"
        /// A hosted round's length, seconds.
        public var roomRoundSeconds = 60.0
        /// The hosted rounds' deck file (default: `[game] deck` if it is a file, else the built-in deck).
        public var roomDeck: String?
        /// Shuffles the hosted rounds' prompts; nil = different each round.
        public var roomSeed: UInt64?

        /// The defaults (as if the table were empty).
        public init() {}

        /// The effective prefix and client id.
        public var prefix: String { topicPrefix ?? "tiltd/\(name)" }
        /// `client_id`, or `tiltd-<name>`.
        public var effectiveClientID: String { clientID ?? "tiltd-\(name)" }

        /// The host name as a valid device name (letters, digits, `-`, `_`, `.`).
        public static var defaultName: String {
            var buf = [CChar](repeating: 0, count: 256)
            gethostname(&buf, buf.count - 1)
            let raw = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let clean = String(raw.map { RoomState.isValidID(String($0)) ? $0 : "-" }.prefix(RoomState.maxIDBytes))
            return clean.isEmpty ? "tiltd" : clean
        }
    }

    /// Reads `[mqtt]`.
    static func readMQTT(_ t: inout TableReader, base: String) throws(ConfigError) -> MQTT {
        var m = MQTT()
        m.enabled = try t.bool("enabled", default: true)
        m.name = try t.string("name", default: m.name)
        if !RoomState.isValidID(m.name) {
            throw t.error("name", "must be 1–64 letters, digits, '-', '_' or '.', got \"\(m.name)\"")
        }
        let broker = try t.string("broker", default: "\(m.host):\(m.port)")
        // The one HOST[:PORT] / [IPv6]:PORT parser (gpsd's client's); MQTT's port is 1883.
        do {
            let g = try GPSDConfig(server: broker)
            m.host = g.host
            m.port = broker.trimmingWhitespace(newlines: false).hasSuffix(":\(g.port)") ? UInt16(g.port) : 1883
        } catch {
            throw t.error("broker", "expected HOST[:PORT] or [IPv6]:PORT, got \"\(broker)\"")
        }
        m.clientID = try t.optionalString("client_id")
        if let c = m.clientID, c.isEmpty || c.utf8.count > 23 * 4 { throw t.error("client_id", "must be 1–92 bytes") }
        m.username = try t.optionalString("username")
        if let f = try t.optionalString("password_file") {
            guard m.username != nil else { throw t.error("password_file", "needs username") }
            m.passwordFile = resolve(f, base: base)
            m.passwordFileLocation = t.error("password_file", "")
        }
        m.tlsCAFile = try t.optionalString("tls_ca_file").map { resolve($0, base: base) }
        m.tlsCertFile = try t.optionalString("tls_cert_file").map { resolve($0, base: base) }
        m.tlsKeyFile = try t.optionalString("tls_key_file").map { resolve($0, base: base) }
        if (m.tlsCertFile == nil) != (m.tlsKeyFile == nil) {
            throw t.error("tls_cert_file", "tls_cert_file and tls_key_file go together")
        }
        if m.tlsCertFile != nil && m.tlsCAFile == nil {
            throw t.error("tls_cert_file", "a client certificate needs tls_ca_file")
        }
        if let p = try t.optionalString("topic_prefix") {
            if p.isEmpty || p.hasPrefix("/") || p.hasSuffix("/") || p.contains("+") || p.contains("#")
                || p.contains("//")
            {
                throw t.error(
                    "topic_prefix",
                    "must be topic levels without wildcards or empty levels, like \"tiltd/kitchen\", got \"\(p)\"")
            }
            m.topicPrefix = p
        }
        m.keepaliveSeconds = try t.int("keepalive_s", default: m.keepaliveSeconds, in: 5...3600)
        if var q = try t.table("qos") {
            for c in MQTT.classes + ["room"] { m.qos[c] = try q.int(c, default: m.qos[c] ?? 1, in: 0...1) }
            try q.finish()
        }
        m.attitudeHz = try t.double("attitude_hz", default: m.attitudeHz, in: 0...50)
        m.bufferMessages = try t.int("buffer_messages", default: m.bufferMessages, in: 10...1_000_000)
        m.allowedCommands = try t.strings("allowed_commands") ?? []
        // room.show is the bridge's own channel to its daemon, never a remote's.
        let known = Command.names.filter { $0 != "room.show" } + MQTT.bridgeCommands
        for c in m.allowedCommands where !known.contains(c) {
            throw t.error("allowed_commands", "unknown command \"\(c)\"; known: \(known.joined(separator: ", "))")
        }
        m.maxPayloadBytes = try t.int("max_payload_bytes", default: m.maxPayloadBytes, in: 256...1_048_576)
        m.discovery = try t.bool("discovery", default: m.discovery)
        m.discoveryPrefix = try t.string("discovery_prefix", default: m.discoveryPrefix)
        if let r = try t.optionalString("room") {
            guard RoomState.isValidID(r) else {
                throw t.error("room", "must be 1–64 letters, digits, '-', '_' or '.', got \"\(r)\"")
            }
            m.room = r
        }
        m.roomHost = try t.bool("room_host", default: false)
        if m.roomHost && m.room == nil { throw t.error("room_host", "needs room") }
        m.roomTopic = try t.string("room_topic", default: m.roomTopic)
        m.roomRoundSeconds = try t.double("room_round_s", default: m.roomRoundSeconds, in: 5...3600)
        m.roomDeck = try t.optionalString("room_deck").map { resolve($0, base: base) }
        if t.has("room_seed") { m.roomSeed = UInt64(try t.int("room_seed", default: 0, in: 0...Int.max)) }
        try t.finish()
        return m
    }

    /// `[mqtt]` as `tiltd check-config` prints it (nothing when the table is absent).
    var mqttTOML: String {
        let m = mqtt
        guard m.enabled || m != MQTT() else { return "" }
        func q(_ s: String) -> String { TOMLText.quote(s) }
        let host = m.host.contains(":") ? "[\(m.host)]" : m.host
        var o = "[mqtt]\nenabled = \(m.enabled)\nname = \(q(m.name))\nbroker = \(q("\(host):\(m.port)"))\n"
        o += "client_id = \(q(m.effectiveClientID))\ntopic_prefix = \(q(m.prefix))\n"
        if let u = m.username { o += "username = \(q(u))\n" }
        if let f = m.passwordFile { o += "password_file = \(q(f))\n" }
        for (k, v) in [("tls_ca_file", m.tlsCAFile), ("tls_cert_file", m.tlsCertFile), ("tls_key_file", m.tlsKeyFile)] {
            if let v { o += "\(k) = \(q(v))\n" }
        }
        o +=
            "keepalive_s = \(m.keepaliveSeconds)\nattitude_hz = \(m.attitudeHz)\nbuffer_messages = \(m.bufferMessages)\n"
        o +=
            "allowed_commands = [\(m.allowedCommands.map(q).joined(separator: ", "))]\nmax_payload_bytes = \(m.maxPayloadBytes)\n"
        o += "discovery = \(m.discovery)\ndiscovery_prefix = \(q(m.discoveryPrefix))\n"
        if let r = m.room {
            o +=
                "room = \(q(r))\nroom_host = \(m.roomHost)\nroom_topic = \(q(m.roomTopic))\nroom_round_s = \(m.roomRoundSeconds)\n"
            if let d = m.roomDeck { o += "room_deck = \(q(d))\n" }
            if let s = m.roomSeed { o += "room_seed = \(s)\n" }
        }
        o += "[mqtt.qos]\n" + (MQTT.classes + ["room"]).map { "\($0) = \(m.qos[$0] ?? 1)\n" }.joined()
        return o
    }
}
