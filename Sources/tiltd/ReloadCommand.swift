// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import TiltClient
import TiltCommandLine
import TiltConfig
import TiltCore
import TiltProtocol
import TiltService

/// `--socket PATH | --config F`: how a client subcommand finds the daemon's socket.
struct SocketPathOptions: ParsableArguments {
    @Option(help: "The daemon's socket (default: [socket] path from the config).")
    var socket: String?

    @Option(help: "Configuration file to take the socket path from (default: \(Configuration.defaultPath) if present).")
    var config: String?

    func validate() throws {
        if socket != nil && config != nil { throw ValidationError("give either --socket or --config, not both") }
    }

    /// `--socket`, else `[socket] path` of `--config` (or of the default file when it exists),
    /// else the default path.
    func socketPath() throws -> String {
        if let socket { return socket }
        let file = config ?? Configuration.defaultPath
        if config == nil && !FileManager.default.fileExists(atPath: file) { return Configuration.Socket().path }
        do {
            return try Configuration.load(path: file).socket.path
        } catch {
            throw ValidationFailure(message: error.description)
        }
    }
}

/// `tiltd reload`: asks the running daemon to reload its config and says whether it did.
struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask the running daemon to reload its config; exit 0 only if it was applied.",
        discussion: """
            Sends the `reload` command over the socket and waits for the reply. A config the daemon \
            refuses (the reason names file, line and key) exits 1 and the daemon keeps running \
            with its old config; so does a daemon that cannot be reached or does not answer in time. \
            systemd's ExecReload= runs this, so `systemctl reload tiltd` fails visibly on a bad edit.
            """)

    @OptionGroup var target: SocketPathOptions

    @Option(help: "Seconds to wait for the daemon's reply.")
    var timeout: Double = 30

    func run() throws {
        let path = try target.socketPath()
        let reply: ReplyBody
        do {
            reply = try DaemonClient.exchange(
                ["cmd": "reload"], socket: path, timeout: timeout, idPrefix: "tiltd-reload-")
        } catch {
            throw ValidationFailure(message: "tiltd reload: \(Self.describe(error, path: path, timeout: timeout))")
        }
        guard let result = ReloadReplyBody(reply) else {
            let message = reply.error?.message ?? JSONValue.object(reply.fields).jsonText
            throw ValidationFailure(message: "tiltd reload: refused, the daemon keeps its running config: \(message)")
        }
        let file = result.file ?? "the config"
        let changed = result.changed, notes = result.notes
        var line =
            "reloaded \(file): " + (changed.isEmpty ? "nothing changed" : "changed \(changed.joined(separator: ", "))")
        if !notes.isEmpty { line += " (\(notes.joined(separator: "; ")))" }
        print(line)
    }

    /// The failed exchange in the words the old blocking client used (the reload tests read them).
    static func describe(_ error: any Error, path: String, timeout: Double) -> String {
        switch error {
        case DaemonClient.Failure.timedOut: "no reply from the daemon at \(path) within \(timeout) s"
        case DaemonClient.Failure.connectionLost: "the daemon at \(path) closed the connection before replying"
        default: "\(error)"
        }
    }
}
