import FoundationEssentials
import Glibc
import TiltCore

/// Clients and trust: `watch`, `ping`, `help`; the `[socket]` section (limits and the default
/// rate for new connections, trust for every connection). Loop-confined (see `Component`).
final class ClientsComponent: Component {
    let context: EngineContext
    /// True when the listening socket came from systemd: `[socket] path` is then not used.
    let socketActivated: Bool

    init(context: EngineContext, socketActivated: Bool) {
        self.context = context; self.socketActivated = socketActivated
    }

    let commands = ["watch", "ping", "help"]

    func handle(_ command: Command, from client: ClientSession, reply: Reply) {
        switch command.name {
        case "watch":
            client.apply(Command.Watch(command))
            reply.ok(["watch": .object(client.watchState)])
        case "ping":
            reply.ok(["pong": true])
        default:
            guard let name = command.string("command") else {
                return reply.ok(["commands": .array(CommandCatalogue.commands.map { .object($0.json) })])
            }
            guard let spec = CommandCatalogue.spec(name) else {
                return reply.fail(
                    .badArgument,
                    "no command \"\(name.prefix(64))\"; known: \(CommandCatalogue.names.joined(separator: ", "))")
            }
            reply.ok(["commands": [.object(spec.json)]])
        }
    }

    func addStatus(to o: inout JSONObject) {
        o["clients"] = .int(Int64(context.hub.clientCount))
        o["dropped_lines"] = .int(Int64(context.hub.sessions.reduce(0) { $0 + $1.droppedTotal }))
    }

    // MARK: reload

    /// Off the loop: a new socket path cannot be taken over by a running daemon.
    static func check(_ new: Configuration, current: Configuration, socketActivated: Bool) throws(ConfigError) {
        if new.socket.path != current.socket.path && !socketActivated {
            throw new.error(
                "socket.path", "a new socket path needs a restart (systemctl restart tiltd); nothing was changed")
        }
    }

    /// On the loop: new limits and default rate for new connections; trust re-judged for every
    /// connected client, so a uid or gid taken off the lists loses its rights at once; fan-out
    /// through io_uring or write(2) from the next line on.
    func apply(_ config: Configuration, notes: inout [String]) {
        context.hub.socketConfig = config.socket
        // Idempotent: a ring in use stays; one refused at start is tried again.
        if let why = context.hub.useWriteRing(config.socket.ioURing) {
            notes.append("[socket] io_uring is unavailable (\(why)); fan-out writes with write(2)")
        }
        for s in context.hub.sessions {
            guard let creds = s.credentials else { continue }
            s.trusted = SocketTrust.isTrusted(creds, config.socket)
        }
        if socketActivated && config.socket.path != context.config.socket.path {
            notes.append("[socket] path is not used: the socket comes from systemd")
        }
    }
}

/// Who may send commands that change state.
enum SocketTrust {
    /// root, the daemon's own user, and the configured uids/gids. A gid counts whether it is the
    /// peer's primary group or one of its supplementary groups (`usermod -aG`, SO_PEERGROUPS).
    static func isTrusted(_ c: ClientSession.Credentials, _ config: Configuration.Socket) -> Bool {
        c.uid == 0 || c.uid == getuid() || config.trustedUIDs.contains(c.uid)
            || config.trustedGIDs.contains(c.gid) || c.groups.contains { config.trustedGIDs.contains($0) }
    }
}

// MARK: [socket]

extension Configuration {
    /// `[socket]`: where clients connect and who may change state.
    public struct Socket: Sendable, Equatable {
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
        /// Attitude rate of the default stream, Hz (0 = off).
        public var attitudeHz: Double = 10
        /// Lines queued per client before the oldest are dropped.
        public var queueLines = 1024
        /// Longest command line accepted, bytes.
        public var maxLineBytes = 4096
        /// Bad lines a client may send before it is disconnected.
        public var maxBadLines = 100
        /// Fan-out writes through io_uring where the kernel allows it (else write(2) per client).
        public var ioURing = true
        /// The defaults.
        public init() {}
    }

    /// A relative `path` is taken from `base`, the config file's directory.
    mutating func readSocket(_ t: inout TableReader, base: String) throws(ConfigError) {
        let path = try t.string("path", default: socket.path)
        if path.isEmpty { throw t.error("path", "must not be empty") }
        socket.path = Configuration.resolve(path, base: base)
        if socket.path.utf8.count > 107 { throw t.error("path", "longer than a Unix socket path may be (107 bytes)") }
        let mode = try t.string("mode", default: "0660")
        guard let m = UInt32(mode, radix: 8), m <= 0o777 else {
            throw t.error("mode", "expected an octal file mode like \"0660\", got \"\(mode)\"")
        }
        socket.mode = m
        socket.group = try t.optionalString("group")
        socket.trustedUIDs = (try t.ints("trusted_uids", in: 0...Int(UInt32.max - 1)) ?? []).map { UInt32($0) }
        socket.trustedGIDs = (try t.ints("trusted_gids", in: 0...Int(UInt32.max - 1)) ?? []).map { UInt32($0) }
        socket.attitudeHz = try t.double("attitude_hz", default: socket.attitudeHz, in: 0...1000)
        socket.queueLines = try t.int("queue_lines", default: socket.queueLines, in: 16...1_000_000)
        socket.maxLineBytes = try t.int("max_line_bytes", default: socket.maxLineBytes, in: 256...1_048_576)
        socket.maxBadLines = try t.int("max_bad_lines", default: socket.maxBadLines, in: 1...1_000_000)
        socket.ioURing = try t.bool("io_uring", default: socket.ioURing)
    }

    var socketTOML: String {
        let s = socket
        var out =
            "[socket]\npath = \(TOMLText.quote(s.path))\nmode = \(TOMLText.quote("0" + String(s.mode, radix: 8)))\n"
        if let g = s.group { out += "group = \(TOMLText.quote(g))\n" }
        out += "trusted_uids = \(s.trustedUIDs)\ntrusted_gids = \(s.trustedGIDs)\n"
        out += "attitude_hz = \(s.attitudeHz)\nqueue_lines = \(s.queueLines)\n"
        out += "max_line_bytes = \(s.maxLineBytes)\nmax_bad_lines = \(s.maxBadLines)\n"
        out += "io_uring = \(s.ioURing)\n"
        return out
    }
}
