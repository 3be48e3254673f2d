import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import TiltCore
import TiltSensors

/// `tiltd run`: the whole daemon as one service — socket server, sampler, engine — with
/// systemd readiness, status and watchdog, reload on SIGHUP, and a graceful stop on SIGTERM/SIGINT.
public final class Daemon: Service, @unchecked Sendable {
    /// Where samples come from.
    public enum Input: Sendable {
        /// The configured IIO device.
        case device
        /// A recording, at `speed` (nil = as fast as possible); `holdUntilRound`: after the first
        /// sample, wait until a client starts a round (so a fast replay can be played).
        case replay(path: String, speed: Double?, holdUntilRound: Bool = false)
    }

    let initialConfig: Configuration
    let input: Input
    /// A GPX track replayed as fixes instead of gpsd, at `gpxSpeed` (nil = as fast as possible).
    let gpx: (path: String, speed: Double?)?
    let exitWhenDone: Bool
    let logger: Logger
    let inheritedFD: CInt?
    let notifier: SystemdNotifier
    let logOutput: LogOutput?

    private let pipelineBox = Mutex<SensorPipeline?>(nil)
    /// Opened by the first `game.start` when the replay is held (`--hold-until-round`).
    private let replayGate = ReplayGate()
    private let reloadQueue = DispatchQueue(label: "tiltd.reload")

    /// - Parameters:
    ///   - inheritedFD: a listening socket from systemd (socket activation), used instead of `[socket] path`.
    ///   - logOutput: flushed on the status tick so rate-limited repeats get their summary line.
    public init(config: Configuration, input: Input, gpx: (path: String, speed: Double?)? = nil, exitWhenDone: Bool, logger: Logger,
                inheritedFD: CInt? = nil, notifier: SystemdNotifier = SystemdNotifier(), logOutput: LogOutput? = nil) {
        self.initialConfig = config; self.input = input; self.gpx = gpx; self.exitWhenDone = exitWhenDone; self.logger = logger
        self.inheritedFD = inheritedFD; self.notifier = notifier; self.logOutput = logOutput
    }

    func makeSource(_ config: Configuration) throws -> any SampleSource {
        switch input {
        case .replay(let path, let speed, let hold):
            return ReplaySource(path: path, speed: speed, gate: hold ? replayGate : nil)
        case .device:
            return try DeviceSourceFactory.make(config.imu, logger: logger)
        }
    }

    public func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let hub = Hub(loop: loop)
        let store = StoreWorker(path: initialConfig.store.path, logger: logger)
        let engine = Engine(hub: hub, config: initialConfig, logger: logger, store: store)
        let gate = replayGate
        engine.onRoundStarted = { gate.openGate() }
        try engine.prepare()
        let fixSource = try makeFixSource()
        let server = SocketServer(config: initialConfig.socket, hub: hub, logger: logger)
        try server.start(inheritedFD: inheritedFD)
        let gps = fixSource.map { FixPipeline(source: $0, engine: engine) }
        gps?.start()

        let (ended, endedCont) = AsyncStream<Void>.makeStream()
        try startPipeline(initialConfig, engine: engine) { endedCont.yield() }
        let firstStatus = (try? await loop.submit { engine.statusLine() }.get()) ?? "starting"
        try? notifier.ready(status: firstStatus)

        // The status tick: STATUS= for systemctl, and the watchdog, fed only while the sampler beats.
        let watchdog = SystemdWatchdog.interval()
        let tickPeriod: TimeAmount = watchdog.map { .nanoseconds(max(100_000_000, Int64($0.components.seconds) * 250_000_000)) } ?? .seconds(1)
        let aliveWindow = UInt64(watchdog.map { Double($0.components.seconds) * 0.5e9 } ?? 5e9)
        var lastStatus = ""
        let tick = loop.scheduleRepeatedTask(initialDelay: tickPeriod, delay: tickPeriod) { [self] _ in
            let line = engine.statusLine()
            if line != lastStatus { lastStatus = line; try? notifier.status(line) }
            if watchdog != nil, pipelineBox.withLock({ $0?.isAlive(within: aliveWindow) ?? false }) {
                try? notifier.watchdog()
            }
            logOutput?.flushRepeats()
        }

        // SIGHUP: reload the config; a bad one is refused and the old one kept.
        signal(SIGHUP, SIG_IGN)
        let hup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: reloadQueue)
        hup.setEventHandler { [self] in reload(engine: engine, endedCont: endedCont) }
        hup.resume()

        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try? await gracefulShutdown() }
            if exitWhenDone {
                tasks.addTask {
                    for await _ in ended { break }
                    // Let the loop deliver what the sampler queued before the clients are closed.
                    try? await loop.submit {}.get()
                }
            }
            await tasks.next()
            tasks.cancelAll()
        }

        logger.info("stopping")
        try? notifier.stopping()
        hup.cancel()
        tick.cancel()
        pipelineBox.withLock { $0 }?.shutdown()
        gps?.shutdown()
        server.stop()
        store.drain()
        if inheritedFD == nil { try? FileManager.default.removeItem(atPath: initialConfig.socket.path) }
        logOutput?.flushRepeats()
        try await group.shutdownGracefully()
    }

    func makeFixSource() throws -> (any FixSource)? {
        if let gpx {
            guard let data = FileManager.default.contents(atPath: gpx.path) else {
                throw ConfigError(file: gpx.path, line: nil, key: "", message: "cannot read the GPX file")
            }
            let fixes: [Fix]
            do { fixes = try GPX.parseFixes(Array(data)) } catch {
                throw ConfigError(file: gpx.path, line: nil, key: "", message: "\(error)")
            }
            return FixReplaySource(fixes: fixes, name: (gpx.path as NSString).lastPathComponent,
                                   pace: gpx.speed.map { .realTime(factor: $0) } ?? .asFastAsPossible)
        }
        guard initialConfig.gps.enabled else { return nil }
        return GPSDSource(config: GPSDConfig(host: initialConfig.gps.host, port: Int(initialConfig.gps.port)))
    }

    private func startPipeline(_ config: Configuration, engine: Engine, onEnd: @escaping @Sendable () -> Void) throws {
        // Only a live device teaches a bias worth keeping; a replay's belongs to another sensor.
        var persister: BiasPersister?
        if case .device = input { persister = BiasPersister.make(config: config, logger: logger) }
        let pipeline = SensorPipeline(source: try makeSource(config), engine: engine, calibration: config.calibration,
                                      mount: config.imu.mountMatrix, persister: persister, logger: logger)
        pipelineBox.withLock { $0 = pipeline }
        pipeline.start(onEnd: onEnd)
    }

    /// Reloads the config file (on `reloadQueue`). Clients stay connected; the sampler restarts
    /// only when its settings ([imu], [calibration]) changed.
    func reload(engine: Engine, endedCont: AsyncStream<Void>.Continuation) {
        guard let path = initialConfig.sourceFile else {
            logger.warning("SIGHUP: no config file to reload")
            return
        }
        try? notifier.reloading()
        defer { try? notifier.ready(status: "reloaded") }
        let new: Configuration
        do {
            new = try Configuration.load(path: path)
        } catch {
            logger.error("reload refused, keeping the running config: \(error)")
            engine.hub.publishSoon(Event(.status, t: nil, fields: [
                "source": "config", "state": "error", "message": .string("reload refused: \(error.description)"),
            ]))
            return
        }
        let old = engine.hub.loop.submit { engine.config }
        guard let current = try? old.wait() else { return }
        var notes: [String] = []
        if new.socket.path != current.socket.path { notes.append("[socket] path changes need a restart") }
        if new.imu != current.imu || new.calibration != current.calibration {
            pipelineBox.withLock { $0 }?.shutdown()
            do {
                try startPipeline(new, engine: engine) { endedCont.yield() }
                notes.append("sampler restarted")
            } catch {
                logger.error("reload: cannot restart the sampler: \(error)")
            }
        }
        engine.hub.loop.execute { engine.apply(new) }
        let message = "reloaded \(path)" + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))")
        logger.notice("\(message)")
        engine.hub.publishSoon(Event(.status, t: nil, fields: ["source": "config", "state": "loaded", "message": .string(message)]))
    }
}

/// Runs a fix source (gpsd, a GPX replay) on its own thread and hands fixes to the engine.
final class FixPipeline: Sendable {
    let source: any FixSource
    let engine: Engine
    let thread = SourceThread(name: "tiltd-gps")

    init(source: any FixSource, engine: Engine) {
        self.source = source; self.engine = engine
    }

    func start() {
        let (source, engine) = (self.source, self.engine)
        let loop = engine.hub.loop
        thread.start { stop in
            do {
                try source.run(stop: stop) { output in
                    switch output {
                    case .fix(let f): loop.execute { engine.ingest(fix: f) }
                    case .status(let st): loop.execute { engine.ingest(status: st) }
                    }
                }
            } catch {
                let st = SourceStatus(source: "gps", state: .finished, message: "\(error)")
                loop.execute { engine.ingest(status: st) }
            }
        }
    }

    func shutdown() { thread.shutdown() }
}

/// Chooses the live sample source for `[imu]`. Kept apart so the daemon does not depend on
/// how devices are opened.
public enum DeviceSourceFactory {
    public static func make(_ imu: Configuration.IMU, logger: Logger) throws -> any SampleSource {
        // The config's mount matrix replaces the kernel's: the device reports in its own frame
        // (identity) and the sampler's front end applies the config's matrix, for replays too.
        IIOSource(configuration: .init(device: imu.device, rateHz: imu.rateHz, mountMatrix: imu.mountMatrix.map { _ in .identity },
                                       bufferSamples: imu.bufferSamples),
                  logger: logger)
    }
}
