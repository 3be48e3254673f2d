import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import TiltCore
import TiltSensors

/// `tiltd run`: the whole daemon as one service — socket server, sampler, engine — with a
/// graceful stop on SIGTERM/SIGINT.
public final class Daemon: Service, @unchecked Sendable {
    /// Where samples come from.
    public enum Input: Sendable {
        /// The configured IIO device.
        case device
        /// A recording, at `speed` (nil = as fast as possible).
        case replay(path: String, speed: Double?)
    }

    public let config: Configuration
    let input: Input
    let exitWhenDone: Bool
    let logger: Logger

    public init(config: Configuration, input: Input, exitWhenDone: Bool, logger: Logger) {
        self.config = config; self.input = input; self.exitWhenDone = exitWhenDone; self.logger = logger
    }

    func makeSource() throws -> any SampleSource {
        switch input {
        case .replay(let path, let speed):
            return ReplaySource(path: path, speed: speed)
        case .device:
            return try DeviceSourceFactory.make(config.imu, logger: logger)
        }
    }

    public func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let hub = Hub(loop: loop)
        let engine = Engine(hub: hub, config: config, logger: logger)
        let server = SocketServer(config: config.socket, hub: hub, logger: logger)
        try server.start()

        let pipeline = SensorPipeline(source: try makeSource(), engine: engine, calibration: config.calibration, logger: logger)
        let (ended, endedCont) = AsyncStream<Void>.makeStream()
        pipeline.start { endedCont.yield(); endedCont.finish() }

        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try? await gracefulShutdown() }
            if exitWhenDone {
                tasks.addTask {
                    for await _ in ended { break }
                    // Let the loop deliver what the sampler queued before we close the clients.
                    try? await loop.submit {}.get()
                }
            }
            await tasks.next()
            tasks.cancelAll()
        }

        logger.info("stopping")
        pipeline.shutdown()
        server.stop()
        try? FileManager.default.removeItem(atPath: config.socket.path)
        try await group.shutdownGracefully()
    }
}

/// Chooses the live sample source for `[imu]`. Kept apart so the daemon does not depend on
/// how devices are opened.
public enum DeviceSourceFactory {
    public static func make(_ imu: Configuration.IMU, logger: Logger) throws -> any SampleSource {
        throw NoDeviceSupport()
    }

    struct NoDeviceSupport: Error, CustomStringConvertible {
        var description: String { "this build has no IIO device support" }
    }
}
