// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltProtocol

extension Configuration {
    /// `[mqtt]`: the `tiltd mqtt` bridge (docs/mqtt.md). The daemon only validates it.
    public struct MQTT: Sendable, Equatable, ConfigDefaults {
        /// The event classes the bridge publishes, each on `<prefix>/<class>`.
        public static let classes = ["status", "attitude", "game", "fix", "place", "quest", "credit"]
        /// Commands the bridge handles itself (the room's), next to the daemon's.
        public static let bridgeCommands = CommandCatalogue.roomCommands.map(\.name)

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
        /// `tls`: TLS on; without `tls_ca_file` the broker is verified against the system's CA
        /// store (`systemCAPath`).
        public var tls = false
        /// Where Debian keeps the system's CA certificates (ca-certificates), hashed for OpenSSL.
        public static let systemCAPath = "/etc/ssl/certs"
        /// Whether the bridge talks TLS to the broker: `tls`, or a CA file given.
        public var usesTLS: Bool { tls || tlsCAFile != nil }
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
        /// The hosted rounds' deck (as `[game] deck`; default: `[game] deck` if it is a file, else the
        /// built-in deck). `Configuration.deckPath(_:)` finds its file.
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
}
