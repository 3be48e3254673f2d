// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltConfig
import TiltCore
import TiltProtocol

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
        let uids = config.allTrustedUIDs, gids = config.allTrustedGIDs
        return c.uid == 0 || c.uid == getuid() || uids.contains(c.uid)
            || gids.contains(c.gid) || c.groups.contains { gids.contains($0) }
    }
}
