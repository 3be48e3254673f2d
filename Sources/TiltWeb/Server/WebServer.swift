// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import TiltConfig
import TiltCore
import TiltPlatform

/// `tiltd web`: the daemon link, the relay and the HTTP/WebSocket server, run as one service
/// group. Built from the same configuration file as the daemon (`[socket] path`, `[web]`, and
/// `[game]`/`[places]`/`[quests]` for what the pages draw).
public struct WebServer: Sendable {
    /// The whole configuration file; `[web]` and `[socket]` decide what is served and where.
    public let config: Configuration
    /// The pairing code and sessions shared by the form and the WebSocket handshake.
    public let pairing: Pairing
    /// Where the web process logs.
    public let logger: Logger

    /// A server for `config`; the pairing code is `[web] pairing_code` or a random one.
    public init(config: Configuration, logger: Logger) {
        self.config = config
        self.logger = logger
        pairing = Pairing(fixedCode: config.web.pairingCode)
    }

    /// The services to run, and the link (for the caller's status line).
    public func makeServices(
        onListening: @escaping @Sendable (Int) async -> Void
    ) throws -> (services: [any Service], link: DaemonLink, hub: BrowserHub) {
        let web = config.web
        let hub = BrowserHub(capacity: web.maxClients)
        let map = try loadMap()
        let relay = LiveRelay(hub: hub, map: map, logger: logger)
        let link = DaemonLink(
            options: .init(
                socketPath: config.socket.path, attitudeHz: web.attitudeHz, commandTimeout: web.commandTimeout),
            logger: logger, onLine: { relay.receive($0) }, onState: { relay.linkChanged($0) })
        relay.attach(link)
        let origins = OriginPolicy(allowed: web.allowedOrigins)
        let metrics = MetricsExporter()

        let router = Router(context: WebContext.self)
        router.add(middleware: HostCheck(origins: origins))
        PageRoutes.add(to: router)
        PairRoutes.add(to: router, pairing: pairing, origins: origins)
        PlotRoutes(directory: web.recordings, calibration: config.calibration, rules: config.game.rules).add(to: router)
        router.get("/metrics") { _, _ -> Response in
            let text = await metrics.scrape(link: link, hub: hub, relay: relay)
            var h = HTTPFields()
            h[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: h, body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        BrowserSocket(
            relay: relay, pairing: pairing, origins: origins, maxMessageBytes: web.maxMessageBytes,
            messagesPerSecond: web.maxMessagesPerSecond
        ).add(to: router)

        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(
                webSocketRouter: router,
                configuration: .init(
                    // Silent connections are closed: 128 of them (max_connections) locked the page.
                    http1: .init(idleTimeout: .nanoseconds(nanoseconds(ofSeconds: web.idleTimeoutSeconds))),
                    ws: .init(maxFrameSize: web.maxMessageBytes)),
                firstRequestTimeout: .nanoseconds(nanoseconds(ofSeconds: web.idleTimeoutSeconds))),
            configuration: .init(
                address: .hostname(web.host, port: Int(web.port)), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(web.maxConnections)),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? Int(web.port)) },
            logger: logger)
        return ([link, relay, app], link, hub)
    }

    /// The places and quest grid the live view draws, from the daemon's own config keys.
    func loadMap() throws -> NearbyMap? {
        var places: [Place] = []
        if let path = config.places.file {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigError(file: path, line: nil, key: "", message: "cannot read the places file")
            }
            do { places = try PlacesFile.parse(Array(data)).places } catch {
                throw ConfigError(file: path, line: nil, key: "", message: "\(error)")
            }
        }
        return NearbyMap(places: places, questCellSize: config.quests.enabled ? config.quests.options.cellSize : nil)
    }
}
