// SPDX-License-Identifier: Apache-2.0
import Logging
import NIOCore
import TiltConfig
import TiltCore
import TiltLogging
import TiltPlatform
import TiltProtocol
import TiltSensors
import TiltSystemd

/// The daemon's state and the only place it changes. Sensor outputs and client requests arrive
/// here on the hub's event loop, one at a time; the engine routes each to the component that
/// owns it (`Component`) and every change is published to all clients (host-authoritative).
///
/// Confined to `hub.loop`: not `Sendable`. Other threads reach it through a
/// `NIOLoopBound<Engine>` inside `EngineHandle`, so the compiler checks the confinement.
public final class Engine: RequestHandler {
    let context: EngineContext
    let services: EngineServices
    let attitude: AttitudeComponent
    let game: GameComponent
    let places: PlacesComponent
    let quests: QuestsComponent
    let credits: CreditsComponent
    let gps: GPSComponent
    let clients: ClientsComponent
    let sharedRound: SharedRoundComponent
    let calibration: CalibrationComponent
    /// Command name → the component that answers it, built from each component's `commands`.
    private var routes: [String: any Component] = [:]
    /// Called on every sample (on the loop).
    public var onSample: (() -> Void)?
    /// Called (on the loop) when `game.start` starts a round; a held replay goes on from there.
    public var onRoundStarted: (() -> Void)? {
        get { game.onRoundStarted }
        set { game.onRoundStarted = newValue }
    }
    /// Runs a `reload` (the daemon's `Reloader`); the callback gets the reply's fields or why
    /// it was refused, on the loop, before the `config` status line the reload sends every
    /// client. Nil when there is no config file to reload.
    public var onReload: ((@escaping (Result<JSONObject, ConfigError>) -> Void) -> Void)?

    /// - Parameters:
    ///   - store: where rounds, visits, credits and quests go (nil: none, every write fails).
    ///   - services: the long-running services a reload reconfigures (none in unit tests).
    public init(
        hub: Hub, config: Configuration, logger: Logger, store: StoreWorker? = nil,
        services: EngineServices = EngineServices()
    ) {
        context = EngineContext(
            hub: hub, store: store ?? StoreWorker(path: nil, logger: logger), logger: logger, config: config)
        self.services = services
        attitude = AttitudeComponent(context: context, sampler: services.sampler)
        game = GameComponent(context: context)
        places = PlacesComponent(context: context)
        quests = QuestsComponent(context: context)
        credits = CreditsComponent(context: context)
        gps = GPSComponent(context: context, control: services.fixes)
        clients = ClientsComponent(context: context, socketActivated: services.socketActivated)
        sharedRound = SharedRoundComponent(context: context)
        calibration = CalibrationComponent(context: context, sampler: services.sampler)
        for c in [attitude, game, places, quests, credits, gps, clients, sharedRound, calibration] as [any Component] {
            for name in c.commands {
                precondition(CommandCatalogue.spec(name) != nil, "\(name) is not in CommandCatalogue")
                precondition(routes[name] == nil, "\(name) has two handlers")
                routes[name] = c
            }
        }
        game.nearbyPrompts = { [places] in places.nearbyPrompts() }
        attitude.headFrame = { [game] in game.game.headFrame }
        hub.handler = self
    }

    /// The configuration in force.
    public var config: Configuration { context.config }
    /// The latest attitude.
    public var lastAttitude: Attitude? { context.lastAttitude }
    /// The latest fix (after the course filter).
    public var lastFix: Fix? { places.lastFix }
    var hub: Hub { context.hub }

    // MARK: start

    /// What the engine starts from, loaded off the loop: the places file and the store's
    /// history (round ids, credit cooldowns, quest cells).
    public struct Startup: Sendable {
        let places: PlacesComponent.Staged
        let seeds: StoreWorker.Seeds
        /// The head frame learned from wear in an earlier run, or why the kept one is ignored.
        var keptHeadFrame: (frame: HeadFrame?, problem: String?) = (nil, nil)
    }

    /// Loads the `Startup` for `config` (file and database I/O: call off the loop).
    public static func load(_ config: Configuration, store: StoreWorker) throws(ConfigError) -> Startup {
        Startup(
            places: try PlacesComponent.stage(config), seeds: store.seeds(cellSize: config.quests.options.cellSize),
            keptHeadFrame: store.path.map { KeptHeadFrame.load(KeptHeadFrame.path(storePath: $0)) } ?? (nil, nil))
    }

    /// Takes up `startup`, before serving. On the loop.
    public func start(_ startup: Startup) {
        places.apply(startup.places, config: config)
        credits.prepare(lastCredits: startup.seeds.lastCredits)
        quests.prepare(cells: startup.seeds.questCells)
        game.prepare(
            lastRound: startup.seeds.lastRound, neutral: config.calibration.neutral, kept: startup.keptHeadFrame)
    }

    // MARK: sensor input (on the loop)

    /// A calibrated sample and the attitude computed from it.
    public func ingest(sample: IMUSample, attitude a: Attitude) {
        attitude.ingest(sample: sample, attitude: a)
        game.ingest(a, sample: sample)
        onSample?()
    }

    /// The sampler skipped `n` samples because this loop was behind.
    public func ingest(skipped n: Int) { attitude.ingest(skipped: n) }

    /// A source's status changed.
    public func ingest(status: SourceStatus) {
        context.ingest(status: status)
        // A replay that ran out ends the round: its clock is the samples', so it never would.
        if status.source == "imu", status.state == .finished { game.recordingEnded() }
    }

    /// A GPS fix: places (course, snooze, geofences), the heading (course and declination, from
    /// the filtered fix, snoozed or not), then credits for the visits and quests.
    public func ingest(fix: Fix) {
        let result = places.ingest(fix)
        if let filtered = places.lastFix { attitude.ingest(fix: filtered) }
        guard let (positioned, visits) = result else { return }
        credits.record(visits)
        quests.ingest(positioned)
    }

    // MARK: requests (on the loop)

    /// Routes a request to the component that owns its command (`status`, `stats` and `reload` are the engine's own). On the loop.
    public func handle(_ request: Request, from client: ClientSession) {
        let reply = Reply(client: client, id: request.id, cmd: request.command.name)
        switch request.command.name {
        case "status": reply.ok(statusFields())
        case "stats": reply.ok(statsFields())
        case "reload":
            guard let onReload else { return reply.fail(.unavailable, "this daemon has no config file to reload") }
            onReload { result in
                switch result {
                case .success(let fields): reply.ok(fields)
                case .failure(let e): reply.fail(.reloadRefused, e.description)
                }
            }
        default:
            guard let owner = routes[request.command.name] else {
                return reply.fail(.internalError, "\(request.command.name) is in the catalogue but has no handler")
            }
            owner.handle(request.command, from: client, reply: reply)
        }
    }

    /// The `hello` line's state: sources, game, latest fix, the client's watch. On the loop.
    public func helloFields(for client: ClientSession) -> JSONObject {
        var o = JSONObject()
        o["sources"] = context.sourcesJSON
        o["game"] = .object(game.snapshot)
        if let f = places.lastFix { o["fix"] = .object(Event.fixFields(f)) }
        o["watch"] = .object(client.watchState)
        return o
    }

    /// The body of a `status` reply.
    public func statusFields() -> JSONObject {
        var o = JSONObject()
        o["version"] = .string(TiltdVersion.string)
        o["sources"] = context.sourcesJSON
        attitude.addStatus(to: &o)
        clients.addStatus(to: &o)
        o["samples_skipped"] = .int(Int64(attitude.samplesSkipped))
        game.addStatus(to: &o)
        places.addStatus(to: &o)
        sharedRound.addStatus(to: &o)
        return o
    }

    /// One line for systemd's STATUS= and logs: "60 Hz from mpu6050, 3 clients, gpsd ok".
    public func statusLine() -> String {
        var parts: [String] = []
        if let imu = context.statuses["imu"] {
            if imu.state == .streaming, let r = attitude.rateHz {
                parts.append("\(Int(saturating: r.rounded())) Hz from \(imu.device ?? "imu")")
            } else {
                parts.append("imu \(imu.state.rawValue): \(imu.message)")
            }
        }
        parts.append("\(hub.clientCount) client\(hub.clientCount == 1 ? "" : "s")")
        if let gps = context.statuses["gps"] {
            parts.append("gpsd \(gps.state == .streaming ? "ok" : gps.state.rawValue)")
        }
        return parts.joined(separator: ", ")
    }
}

/// The long-running services a reload reconfigures, as the engine sees them.
public struct EngineServices: Sendable {
    /// The sampler (`[imu]`, `[calibration]`).
    public var sampler: (any SamplerControl)?
    /// The GPS fix source (`[gps]`).
    public var fixes: (any FixSourceControl)?
    /// True when the listening socket came from systemd.
    public var socketActivated = false
    /// Applies a new `[log]` (level and style) to every logger.
    public var applyLog: (@Sendable (Configuration.Log) -> Void)?

    /// No services (unit tests).
    public init(
        sampler: (any SamplerControl)? = nil, fixes: (any FixSourceControl)? = nil, socketActivated: Bool = false,
        applyLog: (@Sendable (Configuration.Log) -> Void)? = nil
    ) {
        self.sampler = sampler; self.fixes = fixes; self.socketActivated = socketActivated;
        self.applyLog = applyLog
    }
}
