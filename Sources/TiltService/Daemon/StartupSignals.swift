import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// SIGTERM or SIGINT that arrive while the daemon starts: after the socket serves, before the
/// `ServiceGroup` has its own signal handling. Without this, such a signal (a `systemctl stop`
/// right after a socket-activated start, a client that asks and stops at once) kills the process
/// by its default action: exit by signal, no STOPPING=1, no flushed store.
public enum StartupSignals {
    private static let received = Atomic<Int32>(0)

    /// Catches the two signals until the service group takes them over. Call before starting.
    public static func install() {
        _ = received.load(ordering: .relaxed)  // initialise the static here, not in the handler
        let handler: @convention(c) (Int32) -> Void = { signal in StartupSignals.received.store(signal, ordering: .relaxed) }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
    }

    /// A service that stops the group at once if a signal came during start-up; otherwise it just
    /// waits for the group's graceful shutdown.
    public static func service(logger: Logger) -> ServiceGroupConfiguration.ServiceConfiguration {
        .init(service: StartupStop(logger: logger), successTerminationBehavior: .gracefullyShutdownGroup)
    }

    struct StartupStop: Service {
        let logger: Logger
        func run() async throws {
            let signal = StartupSignals.received.load(ordering: .relaxed)
            if signal != 0 {
                logger.notice("signal \(signal) during start-up: stopping")
                return
            }
            try? await gracefulShutdown()
        }
    }
}
