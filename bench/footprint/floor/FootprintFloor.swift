// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ResidentMemory
import ServiceLifecycle

/// The floor under tiltd's footprint (bench/footprint/run): an empty daemon on the stack tiltd is
/// built on — ArgumentParser, swift-log, ServiceLifecycle, a NIO event loop ticking at `--hz`,
/// FoundationEssentials (one JSON encode per tick) and the static Swift runtime — with none of
/// tiltd's own code, and giving back its startup pages as tiltd does. Its stripped size and idle RSS are what any daemon of this shape costs here.
@main
struct FootprintFloor: AsyncParsableCommand {
    @Option(help: "Ticks per second.")
    var hz: Int = 60

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "floor")
        let ticker = Ticker(hz: hz)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: ticker)], gracefulShutdownSignals: [.sigterm], logger: logger))
        logger.info("ticking at \(hz) Hz")
        try await group.run()
    }
}

/// One event loop; every tick encodes a small value as JSON, as the daemon encodes a sample.
struct Ticker: Service {
    let hz: Int

    func run() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let count = NIOLockedValueBox(0)
        let task = loop.scheduleRepeatedTask(initialDelay: .zero, delay: .nanoseconds(Int64(1_000_000_000 / hz))) { _ in
            let n = count.withLockedValue {
                $0 += 1; return $0
            }
            _ = try? JSONEncoder().encode(["tick": n])
        }
        // As tiltd does once it is ready (`StartupPages`).
        _ = StartupPages.release()
        try? await gracefulShutdown()
        task.cancel()
    }
}
