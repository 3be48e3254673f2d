// SPDX-License-Identifier: Apache-2.0
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import TiltClient
import TiltCore
import TiltProtocol

/// The web process's connection to the daemon's socket, as a service of its group: a
/// `DaemonClient` (framing, id-matched replies, `watch`, reconnect with backoff) whose events
/// become the page's link state (shown as "reconnecting", exported by /metrics) and its lines.
public final class DaemonLink: Service, Sendable {
    /// What the link is doing; the page shows it ("reconnecting") and /metrics exports it.
    public enum State: Sendable, Equatable {
        case connecting
        case connected
        case reconnecting(retryInSeconds: Double, reason: String)
    }

    /// Why a request got no reply.
    public typealias RequestError = DaemonClient.Failure

    /// How to reach the daemon and how patient to be with it.
    public struct Options: Sendable {
        /// The daemon's Unix socket (`[socket] path`).
        public var socketPath: String
        /// Attitude lines per second asked of the daemon (its `watch` `attitude_hz`).
        public var attitudeHz: Double
        /// Seconds a request waits for its reply before `RequestError.timedOut`.
        public var commandTimeout: Double
        /// Backoff between attempts: `minRetry` doubling up to `maxRetry` seconds.
        public var minRetry = 0.5
        /// The longest wait between attempts, seconds.
        public var maxRetry = 10.0
        /// Options for `socketPath`; `commandTimeout` in seconds; the backoff keeps its defaults.
        public init(socketPath: String, attitudeHz: Double, commandTimeout: Double) {
            self.socketPath = socketPath; self.attitudeHz = attitudeHz; self.commandTimeout = commandTimeout
        }
    }

    private struct Inner {
        var state: State = .connecting
        var connects = 0
    }

    /// How the link connects, as given at init.
    public let options: Options
    private let logger: Logger
    private let inner = NIOLockedValueBox(Inner())
    private let client: NIOLockedValueBox<DaemonClient?> = NIOLockedValueBox(nil)
    private let onLine: @Sendable (DaemonLine) -> Void
    private let onState: @Sendable (State) -> Void

    /// A link calling `onLine` for every daemon line and `onState` on each state change, both from
    /// the client's event loop: keep them quick.
    public init(
        options: Options, logger: Logger, onLine: @escaping @Sendable (DaemonLine) -> Void,
        onState: @escaping @Sendable (State) -> Void
    ) {
        self.options = options; self.logger = logger; self.onLine = onLine; self.onState = onState
    }

    /// The link's current state (safe from any thread).
    public var state: State { inner.withLockedValue { $0.state } }
    /// Successful connections so far (the first one included).
    public var connects: Int { inner.withLockedValue { $0.connects } }

    /// Connects and reconnects until the service group shuts down gracefully.
    public func run() async throws {
        // The default stream has every class the pages draw; only the attitude rate is ours.
        var o = DaemonClient.Options(
            socketPath: options.socketPath, idPrefix: "web-",
            watch: Command.Watch(attitudeHz: options.attitudeHz).fields)
        o.requestTimeout = options.commandTimeout
        o.minRetry = options.minRetry
        o.maxRetry = options.maxRetry
        let (client, events) = DaemonClient.makeStream(options: o)
        self.client.withLockedValue { $0 = client }
        client.start()
        // A graceful shutdown ends the stream: the client closes, its last event finishes it.
        await withGracefulShutdownHandler {
            for await e in events { handle(e) }
        } onGracefulShutdown: {
            client.close()
        }
        client.close()
    }

    private func handle(_ e: DaemonClient.Event) {
        switch e {
        case .connected:
            inner.withLockedValue { $0.connects += 1 }
            setState(.connected)
            logger.info("daemon link: connected to \(options.socketPath)")
        case .line(let line):
            onLine(line)
        case .unparsable(let text):
            logger.warning("daemon link: ignoring a line that is not a JSON object: \(text.prefix(120))")
        case .disconnected(let reason, let retryIn):
            guard let retryIn else { return }
            setState(.reconnecting(retryInSeconds: retryIn, reason: reason))
            logger.warning("daemon link: \(reason); retrying in \(retryIn) s")
        }
    }

    /// Sends a command (its fields without `id`) and returns the daemon's reply line.
    public func request(_ command: JSONObject, timeout: Double? = nil) async throws -> ReplyBody {
        guard let client = client.withLockedValue({ $0 }) else { throw RequestError.notConnected }
        return try await client.request(command, timeout: timeout ?? options.commandTimeout).get()
    }

    private func setState(_ s: State) {
        inner.withLockedValue { $0.state = s }
        onState(s)
    }
}
