// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltPlatform
import TiltProtocol

extension Configuration.MQTT {
    /// A device or room name's rule.
    static func idRule(_ s: String) -> String? {
        RoomState.isValidID(s) ? nil : "must be 1–64 letters, digits, '-', '_' or '.', got \"\(s)\""
    }

    /// The keys of `[mqtt]`, in the order they are read (a key's rule may need one before it).
    static var keys: [ConfigKey<Self>] {
        [
            .flag(
                "enabled", \.enabled, whenPresent: true, default: "`true` once the table is present",
                "run the bridge (`tiltd mqtt` refuses to start without an enabled `[mqtt]`)"),
            .text(
                "name", \.name, type: "1–64 of `A-Z a-z 0-9 - _ .`", default: "the host name", check: idRule,
                "this device: its player id in a room, Home Assistant node, part of the defaults below"),
            .custom(
                "broker", \.self, type: "`\"HOST[:PORT]\"`, `\"[IPv6]:PORT\"`", default: "`\"127.0.0.1:1883\"`",
                "the broker (port 1883 when omitted)",
                read: { (t, m, _) throws(ConfigError) in
                    let broker = try t.string("broker", default: "\(m.host):\(m.port)")
                    // The one HOST[:PORT] / [IPv6]:PORT parser (the platform's); MQTT's port is 1883.
                    var m = m
                    do {
                        let address = try HostPort(parsing: broker, defaultPort: 1883)
                        m.host = address.host
                        m.port = UInt16(address.port)  // 1...65535: the parser checked
                    } catch {
                        throw t.error("broker", "expected HOST[:PORT] or [IPv6]:PORT, got \"\(broker)\"")
                    }
                    return m
                },
                render: { m in
                    ["broker = \(TOMLText.quote(HostPort(host: m.host, port: Int(m.port)).text))"]
                }, same: { $0.host == $1.host && $0.port == $1.port }),
            .custom(
                "client_id", \.self, type: "string, 1–92 bytes", default: "`\"tiltd-<name>\"`", "MQTT client id",
                read: { (t, m, _) throws(ConfigError) in
                    var m = m
                    m.clientID = try t.optionalString("client_id")
                    if let c = m.clientID, c.isEmpty || c.utf8.count > 23 * 4 {
                        throw t.error("client_id", "must be 1–92 bytes")
                    }
                    return m
                }, render: { ["client_id = \(TOMLText.quote($0.effectiveClientID))"] },
                same: { $0.effectiveClientID == $1.effectiveClientID }),
            .custom(
                "topic_prefix", \.self, type: "topic levels", default: "`\"tiltd/<name>\"`",
                "where this device publishes; no wildcards or empty levels",
                read: { (t, m, _) throws(ConfigError) in
                    guard let p = try t.optionalString("topic_prefix") else { return m }
                    if p.isEmpty || p.hasPrefix("/") || p.hasSuffix("/") || p.contains("+") || p.contains("#")
                        || p.contains("//")
                    {
                        throw t.error(
                            "topic_prefix",
                            "must be topic levels without wildcards or empty levels, like \"tiltd/kitchen\", got \"\(p)\""
                        )
                    }
                    var m = m
                    m.topicPrefix = p
                    return m
                }, render: { ["topic_prefix = \(TOMLText.quote($0.prefix))"] }, same: { $0.prefix == $1.prefix }),
            .optionalText("username", \.username, "broker user"),
            .custom(
                "password_file", \.self, type: "path", default: "unset",
                "its password (first line); refused if group- or world-readable. Needs `username`",
                read: { (t, m, ctx) throws(ConfigError) in
                    guard let f = try t.optionalString("password_file") else { return m }
                    guard m.username != nil else { throw t.error("password_file", "needs username") }
                    var m = m
                    m.passwordFile = ctx.resolve(f)
                    m.passwordFileLocation = t.error("password_file", "")
                    return m
                }, render: { m in m.passwordFile.map { ["password_file = \(TOMLText.quote($0))"] } ?? [] },
                same: { $0.passwordFile == $1.passwordFile }),
            .flag(
                "tls", \.tls,
                "TLS to the broker; the broker's certificate is checked against the system's CA store (/etc/ssl/certs) unless `tls_ca_file` is given"
            ),
            .path("tls_ca_file", \.tlsCAFile, "TLS: the CA that signed the broker's certificate (turns TLS on)"),
            .path("tls_cert_file", \.tlsCertFile, "TLS client certificate (with `tls_key_file` and `tls_ca_file`)"),
            .path("tls_key_file", \.tlsKeyFile, "TLS client key (with `tls_cert_file`)"),
            .integer(
                "keepalive_s", \.keepaliveSeconds, in: 5...3600,
                "MQTT keepalive; the broker declares the bridge gone (Last Will) after 1.5× this"),
            .number(Command.Watch.Key.attitudeHz, \.attitudeHz, in: 0...50, "attitude messages per second (0: none)"),
            .integer(
                "buffer_messages", \.bufferMessages, in: 10...1_000_000,
                "QoS 1 messages kept while the broker is away; past that the oldest are dropped and counted"),
            .texts(
                "allowed_commands", \.allowedCommands, type: "array of command names",
                check: { c in
                    // room.show is the bridge's own channel to its daemon, never a remote's.
                    let known = Command.names.filter { $0 != "room.show" } + bridgeCommands
                    return known.contains(c) ? nil : "unknown command \"\(c)\"; known: \(known.joined(separator: ", "))"
                },
                "commands accepted on `<prefix>/cmd` (daemon commands, and `room.start`, `room.stop`, `room.restart`, `room.state`)"
            ),
            .integer("max_payload_bytes", \.maxPayloadBytes, in: 256...1_048_576, "largest command payload"),
            .flag(
                "discovery", \.discovery,
                "Home Assistant discovery; `false` removes the entities an earlier run announced"),
            .text("discovery_prefix", \.discoveryPrefix, "Home Assistant's discovery prefix"),
            .custom(
                "room", \.room, type: "like `name`", default: "unset", "the shared room to play in",
                read: { (t, v, _) throws(ConfigError) in
                    guard let r = try t.optionalString("room") else { return v }
                    if let why = idRule(r) { throw t.error("room", why) }
                    return r
                }, render: { r in r.map { ["room = \(TOMLText.quote($0))"] } ?? [] }),
        ] + roomKeys + [qosKey]
    }

    /// The keys of a room, shown only when `room` is set.
    static var roomKeys: [ConfigKey<Self>] {
        let keys: [ConfigKey<Self>] = [
            .custom(
                "room_host", \.roomHost, type: "bool", default: "`false`", "this device hosts `room` (one per room)",
                read: { (t, m, _) throws(ConfigError) in try t.bool("room_host", default: m) },
                render: { ["room_host = \($0)"] }),
            .text("room_topic", \.roomTopic, type: "topic levels", "room topics are under `<room_topic>/<room>/`"),
            .number(
                "room_round_s", \.roomRoundSeconds, in: TiltGame.Rules.roundSecondsRange,
                "a hosted round's length (`room.start` may give `round_s`)"),
            .deck(
                "room_deck", \.roomDeck, orNearby: false, default: "`[game] deck` if a file, else built-in",
                "the hosted rounds' prompts (as `[game] deck`: a name in `[game] deck_dir`, or a path)"),
            .seed("room_seed", \.roomSeed, default: "random", "seeds the hosted rounds' shuffle"),
        ]
        return keys.map { k in
            ConfigKey(
                name: k.name, type: k.type, defaultText: k.defaultText, meaning: k.meaning, reload: k.reload,
                read: { (t, m, ctx) throws(ConfigError) in
                    try k.read(&t, &m, ctx)
                    if k.name == "room_host" && m.roomHost && m.room == nil { throw t.error("room_host", "needs room") }
                },
                render: { m in m.room == nil ? [] : k.render(m) }, same: k.same)
        }
    }

    /// `[mqtt.qos]`: a sub-table, shown last.
    static var qosKey: ConfigKey<Self> {
        let names = classes + ["room"]
        return .custom(
            "qos", \.qos,
            type: "table `[mqtt.qos]`: " + names.map { "`\($0)`" }.joined(separator: ", ") + ", each 0 or 1",
            default: "0 for `attitude` and `fix`, else 1", "QoS per topic class",
            read: { (t, v, _) throws(ConfigError) in
                guard var q = try t.table("qos") else { return v }
                var v = v
                for c in names { v[c] = try q.int(c, default: v[c] ?? 1, in: 0...1) }
                try q.finish()
                return v
            },
            render: { q in ["[mqtt.qos]"] + names.map { "\($0) = \(q[$0] ?? 1)" } })
    }
}

extension Configuration {
    static var mqttTable: ConfigTable {
        .table(
            "mqtt", onReload: "ignored by the daemon; `systemctl restart tiltd-mqtt` applies it",
            keys: MQTT.keys.map { $0.reloading(.otherProcess).lifted(\.mqtt) },
            check: { (t, c) throws(ConfigError) in
                let m = c.mqtt
                if (m.tlsCertFile == nil) != (m.tlsKeyFile == nil) {
                    throw t.error("tls_cert_file", "tls_cert_file and tls_key_file go together")
                }
                if m.tlsCertFile != nil && !m.usesTLS {
                    throw t.error("tls_cert_file", "a client certificate needs TLS (tls = true or tls_ca_file)")
                }
                // A device whose own topics hold the rooms' (name "room": tiltd/room/…) could write
                // every room's state with the ACL's per-device pattern (config/mosquitto/tiltd.acl).
                let prefix = m.prefix
                if prefix == m.roomTopic || m.roomTopic.hasPrefix(prefix + "/") || prefix.hasPrefix(m.roomTopic + "/") {
                    throw t.error(
                        m.topicPrefix == nil ? "name" : "topic_prefix",
                        "this device's topics (\(prefix)/…) would overlap the rooms' (room_topic \(m.roomTopic)/…): choose another name"
                    )
                }
            },
            // Shown when the table is present (enabled or changed from the defaults).
            shown: { $0.mqtt.enabled || $0.mqtt != MQTT() })
    }
}
