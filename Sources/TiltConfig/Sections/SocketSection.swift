// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltCore
import TiltProtocol

extension Configuration {
    /// `[socket]`: where clients connect and who may change state (see `ClientsComponent`).
    public struct Socket: Sendable, Equatable, ConfigDefaults {
        /// The Unix socket's path.
        public var path = "/run/tiltd/tiltd.sock"
        /// File mode of the socket (octal in the file, e.g. "0660").
        public var mode: UInt32 = 0o660
        /// Group owning the socket file; nil keeps the daemon's group.
        public var group: String?
        /// Peers (by SO_PEERCRED uid) allowed to send mutating commands. root is always allowed.
        public var trustedUIDs: [UInt32] = []
        /// Peers in a listed group (primary or supplementary) are trusted too.
        public var trustedGIDs: [UInt32] = []
        /// `trusted_users`: trusted peers by user name, resolved to uids when the config is read.
        public var trustedUsers = NamedIDs()
        /// `trusted_groups`: trusted groups by name, resolved to gids when the config is read.
        public var trustedGroups = NamedIDs()
        /// Attitude rate of the default stream, Hz (0 = off).
        public var attitudeHz: Double = 10
        /// Lines queued per client before the oldest are dropped.
        public var queueLines = 1024
        /// Bytes queued per client before the oldest lines are dropped (a line alone may be longer).
        public var queueBytes = 262_144
        /// Clients connected at once; more are refused with one line (`ClientSlots`).
        public var maxClients = 1000
        /// Longest command line accepted, bytes.
        public var maxLineBytes = 4096
        /// Bad lines a client may send before it is disconnected.
        public var maxBadLines = 100
        /// Fan-out writes through io_uring where the kernel allows it (else write(2) per client).
        public var ioURing = true
        /// The defaults.
        public init() {}

        /// Names in the config and the ids they stood for when it was read (a reload looks
        /// them up again, so a user or group created later counts after `systemctl reload`).
        public struct NamedIDs: Sendable, Equatable {
            /// The names, as written.
            public var names: [String] = []
            /// Their uids or gids, in the same order.
            public var ids: [UInt32] = []
            /// None.
            public init() {}
        }

        /// A list of user or group names, looked up in the system's databases (NSS) when read:
        /// an unknown name is an error naming it, so a typo does not silently trust nobody.
        static func names(
            _ name: String, _ path: WritableKeyPath<Socket, NamedIDs>, users: Bool, _ meaning: String
        ) -> ConfigKey<Socket> {
            .custom(
                name, path, type: "string array", default: "`[]`", meaning,
                read: { (t, v, _) throws(ConfigError) in
                    guard let list = try t.strings(name) else { return v }
                    var out = NamedIDs()
                    for n in list {
                        guard let id = users ? getpwnam(n)?.pointee.pw_uid : getgrnam(n)?.pointee.gr_gid else {
                            throw t.error(
                                name,
                                "no \(users ? "user" : "group") named \"\(n)\" (\(users ? "getent passwd" : "getent group") \(n))"
                            )
                        }
                        out.names.append(n); out.ids.append(id)
                    }
                    return out
                },
                render: { ["\(name) = \(TOMLText.strings($0.names))"] })
        }

        /// Every trusted uid: `trusted_uids` and those of `trusted_users`.
        public var allTrustedUIDs: [UInt32] { trustedUIDs + trustedUsers.ids }
        /// Every trusted gid: `trusted_gids` and those of `trusted_groups`.
        public var allTrustedGIDs: [UInt32] { trustedGIDs + trustedGroups.ids }

        /// A list of uids or gids.
        static func ids(
            _ name: String, _ path: WritableKeyPath<Socket, [UInt32]>, _ meaning: String
        ) -> ConfigKey<
            Socket
        > {
            .custom(
                name, path, type: "integer array", default: "`[]`", meaning,
                read: { (t, v, _) throws(ConfigError) in
                    try t.ints(name, in: 0...Int(UInt32.max - 1)).map { $0.map { UInt32($0) } } ?? v
                },
                render: { ["\(name) = \($0)"] })
        }

        /// The keys of `[socket]`.
        static var keys: [ConfigKey<Socket>] {
            [
                .custom(
                    "path", \.path, type: "path", default: "`\"/run/tiltd/tiltd.sock\"`", reload: .needsRestart,
                    "the Unix socket (a relative path is taken from the config file's directory). A stale socket file is replaced; a live one (another tiltd answers) is an error; a non-socket is never removed. Under systemd socket activation the socket unit's socket is used.",
                    read: { (t, v, ctx) throws(ConfigError) in
                        let p = try t.string("path", default: v)
                        if p.isEmpty { throw t.error("path", "must not be empty") }
                        let resolved = ctx.resolve(p)
                        if resolved.utf8.count > 107 {
                            throw t.error("path", "longer than a Unix socket path may be (107 bytes)")
                        }
                        return resolved
                    },
                    render: { ["path = \(TOMLText.quote($0))"] }),
                .custom(
                    "mode", \.mode, type: "octal string", default: "`\"0660\"`", "the socket file's mode",
                    read: { (t, v, _) throws(ConfigError) in
                        let mode = try t.string("mode", default: "0" + String(v, radix: 8))
                        guard let m = UInt32(mode, radix: 8), m <= 0o777 else {
                            throw t.error("mode", "expected an octal file mode like \"0660\", got \"\(mode)\"")
                        }
                        return m
                    },
                    render: { ["mode = \(TOMLText.quote("0" + String($0, radix: 8)))"] }),
                // Looked up when read, as `trusted_groups`: a group this machine lacks was accepted by
                // check-config and then stopped the daemon at start ("group #: No such file").
                .optionalText(
                    "group", \.group,
                    check: { g in getgrnam(g) == nil ? "no group named \"\(g)\" (getent group \(g))" : nil },
                    "the socket file's group"),
                ids(
                    "trusted_uids", \.trustedUIDs,
                    "peers allowed to send commands that change state, by uid (SO_PEERCRED). root and the daemon's own user always are. Others may watch."
                ),
                ids(
                    "trusted_gids", \.trustedGIDs,
                    "… or by group: the peer's primary group or any of its supplementary groups (`usermod -aG`), as the kernel reports them when it connects (SO_PEERCRED, SO_PEERGROUPS; a group joined later counts after the user logs in again)."
                ),
                names(
                    "trusted_users", \.trustedUsers, users: true,
                    "`trusted_uids` by name, e.g. `[\"tiltd-web\", \"tiltd-mqtt\"]`: each is looked up when the config is read (and again on reload); an unknown name is an error"
                ),
                names(
                    "trusted_groups", \.trustedGroups, users: false,
                    "`trusted_gids` by name, e.g. `[\"tiltd\"]` (every member of the group may send commands): looked up as `trusted_users` are"
                ),
                .number(
                    Command.Watch.Key.attitudeHz, \.attitudeHz, in: 0...1000,
                    "attitude rate of the default stream (0 = none); each client may change its own with `watch`"),
                .integer(
                    "queue_lines", \.queueLines, in: 16...1_000_000,
                    "lines held for a client that does not read; past that its oldest are dropped and it gets a `gap` event"
                ),
                .integer(
                    "queue_bytes", \.queueBytes, in: 4096...1_073_741_824,
                    "bytes held for a client that does not read, as `queue_lines` counts lines: past either bound its oldest lines are dropped (a single longer line is still sent whole). With `max_clients` it bounds the memory all clients' queues can take (1000 × 256 KiB by default)"
                ),
                .integer(
                    "max_clients", \.maxClients, in: 1...100_000,
                    "clients connected at once; one more gets one line, a reply with `unavailable` and no id, and is closed. The daemon also keeps a quarter of its descriptors (`LimitNOFILE`), at least 256, free of clients for the store, the IMU and gpsd, and says so in its log when that lowers the cap"
                ),
                .integer(
                    "max_line_bytes", \.maxLineBytes, in: 256...1_048_576,
                    "longest command line, but for `room.show`, whose line may always be as long as its view allows (64 KiB and the command around it)"
                ),
                .integer(
                    "max_bad_lines", \.maxBadLines, in: 1...1_000_000,
                    "bad lines a client may send before it is disconnected"),
                .flag(
                    "io_uring", \.ioURing,
                    "fan-out writes through io_uring: each event-loop turn's writes to all clients go to the kernel with one system call per 256 clients, where `false` makes one `write(2)` per client. Where io_uring is unavailable (an old kernel, `kernel.io_uring_disabled`, a seccomp filter) the daemon logs why once and uses `write(2)`; `stats` says which (`fanout_writes`). Set `false` to keep io_uring out of the daemon's kernel surface; a reload applies it."
                ),
            ]
        }
    }

    static var socketTable: ConfigTable {
        .table(
            "socket",
            onReload:
                "limits and `attitude_hz` apply to new connections; `trusted_uids`/`trusted_gids`/`trusted_users`/`trusted_groups` are re-judged for every connected client too. A new `path` needs a restart and is refused (under socket activation the path is not used and a change is noted)",
            keys: Socket.keys.map { $0.lifted(\.socket) })
    }
}
