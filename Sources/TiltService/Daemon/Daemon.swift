// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import TiltConfig
import TiltCore
import TiltLogging
import TiltSensors
import TiltSystemd

/// `tiltd run`: builds the daemon — event loop, hub, engine, socket server, sampler, GPS,
/// store, systemd status — and hands its long-running parts to one `ServiceGroup` as services.
///
/// Start order is the order of `services()`; a graceful stop (SIGTERM/SIGINT, or the end of
/// a recording with `exitWhenDone`) runs in reverse: status (STOPPING=1, no more reloads) →
/// sampler → GPS → socket (queued lines delivered, then clients closed) → store (queued writes
/// committed) → event loop.
public struct Daemon: Sendable {
    /// Where samples come from.
    public typealias Input = SamplerService.Input

    let config: Configuration
    let input: Input
    /// A GPX track replayed as fixes instead of gpsd, at `speed` (nil = as fast as possible).
    let gpx: (path: String, speed: Double?)?
    let exitWhenDone: Bool
    let logger: Logger
    let inheritedFD: CInt?
    let notifier: SystemdNotifier
    let logOutput: LogOutput?

    /// - Parameters:
    ///   - inheritedFD: a listening socket from systemd (socket activation), used instead of `[socket] path`.
    ///   - logOutput: flushed on the status tick; its level follows `[log] level` on reload.
    public init(
        config: Configuration, input: Input, gpx: (path: String, speed: Double?)? = nil, exitWhenDone: Bool,
        logger: Logger,
        inheritedFD: CInt? = nil, notifier: SystemdNotifier = SystemdNotifier(), logOutput: LogOutput? = nil
    ) {
        self.config = config; self.input = input; self.gpx = gpx; self.exitWhenDone = exitWhenDone; self.logger = logger
        self.inheritedFD = inheritedFD; self.notifier = notifier; self.logOutput = logOutput
    }

    /// Loads what the engine starts from and returns the services in start order. Throws
    /// `ConfigError` before anything runs; the group's run throws `SocketServer.StartError`.
    public func services() async throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            return try await services(group: group)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private func services(
        group: MultiThreadedEventLoopGroup
    ) async throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let loop = group.next()
        let hub = HubHandle(loop: loop)
        let handle = EngineHandle(loop: loop)
        let store = StoreWorker(path: config.store.path, logger: logger)
        store.maxQueuedReads = config.store.maxQueuedReads
        // File and database reads happen here, before the loop serves anyone.
        let startup = try Engine.load(config, store: store)
        if let failure = startup.seeds.failure { throw StoreStartError(description: failure) }
        let sampler = SamplerService(input: input, engine: handle, exitWhenDone: exitWhenDone, logger: logger)
        let first = try sampler.prepare(config)
        sampler.firstPipeline.withLock { $0 = first }
        let firstFixSource = try FixSourceService.makeFirst(gps: config.gps, gpx: gpx)
        let fixes = FixSourceService(first: firstFixSource, isReplay: gpx != nil, engine: handle)
        var applyLog: (@Sendable (Configuration.Log) -> Void)?
        if let output = logOutput {
            applyLog = { log in
                output.levelOverride = Logger.Level(rawValue: log.level)
                output.style = LogOutputStyle(setting: log.style)
            }
        }
        let services = EngineServices(
            sampler: sampler, fixes: fixes, socketActivated: inheritedFD != nil, applyLog: applyLog)
        let reloader = Reloader(
            path: config.sourceFile, engine: handle, store: store, services: services, notifier: notifier,
            logger: logger)
        let (config, logger) = (self.config, self.logger)
        try await hub.submit { hub in
            if let why = hub.useWriteRing(config.socket.ioURing) {
                logger.info("fan-out writes with write(2), one system call per client: no io_uring (\(why))")
            }
            hub.onWriteRingFailure = { why in
                logger.warning("io_uring failed (\(why)); fan-out writes with write(2) from now on")
            }
            let engine = Engine(hub: hub, config: config, logger: logger, store: store, services: services)
            engine.start(startup)
            let gate = sampler.replayGate
            engine.onRoundStarted = { gate.openGate() }
            // Under socket activation the client that started the daemon is already queued and is
            // accepted at once: its hello must list the sources, not "sources":[].
            engine.ingest(
                status: SourceStatus(source: "imu", state: .starting, message: "opening \(first.source.summary)"))
            if let f = firstFixSource {
                engine.ingest(status: SourceStatus(source: "gps", state: .starting, message: "starting \(f.summary)"))
            }
            engine.onReload = { done in
                let done = NIOLoopBound(done, eventLoop: loop)
                reloader.reload { result in done.value(result) }
            }
            handle.attach(engine)
        }.get()
        let socket = SocketService(
            server: SocketServer(config: config.socket, hub: hub, logger: logger), loop: loop,
            inheritedFD: inheritedFD)

        func service(_ s: any Service) -> ServiceGroupConfiguration.ServiceConfiguration {
            // A service that fails (a socket path that is not a socket) stops the others in
            // order too, the event loop last: the sampler thread must not hand a sample to a
            // loop that is already gone.
            .init(
                service: s, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup)
        }
        return [
            service(EventLoopService(group: group)),
            service(StoreService(store: store)),
            service(socket),
            service(fixes),
            service(sampler),
            service(
                StatusService(
                    engine: handle, sampler: sampler, socket: socket, reloader: reloader, notifier: notifier,
                    logOutput: logOutput)),
        ]
    }
}

/// The store's file exists but its state (round ids, credit cooldowns, quest cells) could not be
/// read: the daemon does not start without it (`StoreWorker.Seeds.failure`).
public struct StoreStartError: Error, CustomStringConvertible {
    /// Why, with the file.
    public var description: String
}
