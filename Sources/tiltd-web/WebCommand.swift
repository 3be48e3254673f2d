// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import Logging
import ResidentMemory
import ServiceLifecycle
import TiltCommandLine
import TiltConfig
import TiltLogging
import TiltProtocol
import TiltSystemd
import TiltWeb

/// `tiltd web` (this executable, `tiltd-web`, which `tiltd web` runs): the players' screen, a
/// separate process that is a client of the daemon's socket.
@main
struct Web: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiltd-web",
        abstract: "Serve the game screen, the live view and /metrics over HTTP and WebSocket.",
        discussion: """
            Connects to the daemon's socket ([socket] path) as a client, reconnecting with backoff \
            when the daemon restarts, and serves [web] listen (default 127.0.0.1:8080): / (the game \
            screen), /live, /plots, /metrics. Commands from a browser need the pairing code printed \
            at start (or [web] pairing_code). See docs/web.md.
            """,
        version: TiltdVersion.string)

    @OptionGroup var options: ConfigOptions

    @Option(help: "Listen on HOST:PORT instead of [web] listen (port 0 picks a free one; the chosen port is printed).")
    var listen: String?

    func run() async throws {
        var config = try options.load()
        if let listen {
            let parts = listen.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count >= 2, let port = UInt16(parts.last!) else {
                throw ValidationFailure(message: "tiltd web: --listen expects HOST:PORT, got \"\(listen)\"")
            }
            config.web.host = parts.dropLast().joined(separator: ":").trimmingCharacters(
                in: CharacterSet(charactersIn: "[]"))
            config.web.port = port
        }
        let level = Logger.Level(rawValue: config.log.level) ?? .info
        _ = TiltLogHandler.bootstrap(
            output: .standardError(style: LogOutputStyle(setting: config.log.style)), level: level)
        let logger = makeLogger("tiltd-web", level: config.log.level)
        let server = WebServer(config: config, logger: logger)
        let notifier = SystemdNotifier()
        let code = server.pairing.code, fixed = server.pairing.isFixed, host = config.web.host
        let made: (services: [any Service], link: DaemonLink, hub: BrowserHub)
        do {
            made = try server.makeServices { port in
                // On stdout for a person at a terminal (and tests); STATUS= for `systemctl status`.
                FileHandle.standardOutput.write(
                    Data("tiltd web: listening on http://\(host):\(port)/ — pairing code \(code)\n".utf8))
                logger.notice(
                    "listening on \(host):\(port); pairing code \(code)\(fixed ? " (from [web] pairing_code)" : "")")
                try? notifier.ready(status: "pairing code \(code); listening on \(host):\(port)")
                // Startup is over: give back the code pages only it ran (see `StartupPages`).
                let pages = StartupPages.release()
                if let failure = pages.failure { logger.warning("could not release startup pages: \(failure)") }
            }
        } catch let e as ConfigError {
            throw ValidationFailure(message: "tiltd web: \(e)")
        }
        let status = StatusLine(notifier: notifier, code: code, link: made.link, hub: made.hub)
        let group = ServiceGroup(
            configuration: .init(
                services: made.services.map { .init(service: $0) } + [
                    .init(service: status, successTerminationBehavior: .ignore)
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        do {
            try await group.run()
        } catch {
            throw ValidationFailure(message: "tiltd web: \(error)")
        }
    }
}

/// Keeps `systemctl status tiltd-web` current: the pairing code, the daemon link, browsers.
struct StatusLine: Service {
    let notifier: SystemdNotifier
    let code: String
    let link: DaemonLink
    let hub: BrowserHub

    func run() async throws {
        guard notifier.isEnabled else { return }
        try? await cancelWhenGracefulShutdown {
            var last = ""
            while !Task.isCancelled {
                let state: String
                switch link.state {
                case .connected: state = "daemon connected"
                case .connecting: state = "connecting to the daemon"
                case .reconnecting(let s, _): state = "daemon unreachable, retrying in \(s) s"
                }
                let text = "pairing code \(code); \(state); \(hub.count) browser\(hub.count == 1 ? "" : "s")"
                if text != last { try? notifier.status(text); last = text }
                try await Task.sleep(for: .seconds(2))
            }
        }
    }
}
