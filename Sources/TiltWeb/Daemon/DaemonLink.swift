import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOExtras
import NIOPosix
import ServiceLifecycle
import TiltCore
import TiltService

/// The web process's connection to the daemon's Unix socket. It is an ordinary client of the
/// socket protocol (docs/protocol.md): it reconnects with backoff whenever the daemon goes away,
/// hands every line it receives to `onLine`, and sends commands with its own ids, matching each
/// reply to its request.
public final class DaemonLink: Service, Sendable {
    /// What the link is doing; the page shows it ("reconnecting") and /metrics exports it.
    public enum State: Sendable, Equatable {
        case connecting
        case connected
        case reconnecting(retryInSeconds: Double, reason: String)
    }

    /// Why a request got no reply.
    public enum RequestError: Error, CustomStringConvertible, Equatable {
        case notConnected
        case timedOut(Double)
        case connectionLost
        /// Why, in a sentence (for logs and error replies).
        public var description: String {
            switch self {
            case .notConnected: return "the daemon is not connected"
            case .timedOut(let s): return "the daemon did not reply within \(s) s"
            case .connectionLost: return "the connection to the daemon was lost before its reply"
            }
        }
    }

    /// How to reach the daemon and how patient to be with it.
    public struct Options: Sendable {
        /// The daemon's Unix socket (`[socket] path`).
        public var socketPath: String
        /// Attitude lines per second asked of the daemon (its `watch` `attitude_hz`).
        public var attitudeHz: Double
        /// Seconds a request waits for its reply before `RequestError.timedOut`.
        public var commandTimeout: Double
        /// Backoff between attempts: `minRetry` doubling up to `maxRetry` seconds (as the daemon
        /// itself retries its sources).
        public var minRetry = 0.5
        /// The longest wait between attempts, seconds.
        public var maxRetry = 10.0
        /// Options for `socketPath`; `commandTimeout` in seconds; the backoff keeps its defaults.
        public init(socketPath: String, attitudeHz: Double, commandTimeout: Double) {
            self.socketPath = socketPath; self.attitudeHz = attitudeHz; self.commandTimeout = commandTimeout
        }
    }

    private struct Inner {
        var writer: NIOAsyncChannelOutboundWriter<ByteBuffer>?
        var pending: [String: CheckedContinuation<JSONValue, any Error>] = [:]
        var nextID: UInt64 = 1
        var state: State = .connecting
        var connects = 0
    }

    /// How the link connects, as given at init.
    public let options: Options
    private let logger: Logger
    private let onLine: @Sendable (DaemonLine) -> Void
    private let onState: @Sendable (State) -> Void
    private let inner = NIOLockedValueBox(Inner())
    /// Ids of this process's requests start with this, so its replies are told apart.
    static let idPrefix = "web-"

    /// A link calling `onLine` for every daemon line and `onState` on each state change, both from
    /// the link's `run` task: keep them quick.
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
        // A graceful shutdown cancels the loop: that is how it ends, not an error.
        do { try await cancelWhenGracefulShutdown { try await self.loop() } } catch is CancellationError {}
    }

    private func loop() async throws {
        var retry = options.minRetry
        while !Task.isCancelled {
            let reason: String
            do {
                try await connectAndServe { retry = self.options.minRetry }
                reason = "the daemon closed the connection"
            } catch is CancellationError {
                return
            } catch {
                reason = "\(options.socketPath): \(ConnectErrorText.describe(error))"
            }
            failPending(.connectionLost)
            if Task.isCancelled { return }
            setState(.reconnecting(retryInSeconds: retry, reason: reason))
            logger.warning("daemon link: \(reason); retrying in \(retry) s")
            try await Task.sleep(for: .milliseconds(Int(retry * 1000)))
            retry = min(retry * 2, options.maxRetry)
        }
    }

    private func connectAndServe(onConnected: () -> Void) async throws {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .connect(unixDomainSocketPath: options.socketPath) { ch in
                ch.eventLoop.makeCompletedFuture {
                    try ch.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineBasedFrameDecoder()))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: ch)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            inner.withLockedValue {
                $0.writer = outbound; $0.connects += 1
            }
            defer { inner.withLockedValue { $0.writer = nil } }
            onConnected()
            setState(.connected)
            logger.info("daemon link: connected to \(options.socketPath)")
            // The default stream has every class the pages draw; only the attitude rate is ours.
            let watch: JSONObject = [
                "cmd": "watch", "id": .string(Self.idPrefix + "watch"), "attitude_hz": .number(options.attitudeHz),
            ]
            try await outbound.write(ByteBuffer(string: jsonText(.object(watch)) + "\n"))
            for try await buffer in inbound {
                let text = String(buffer: buffer)
                guard let line = DaemonLine(text: text) else {
                    logger.warning("daemon link: ignoring a line that is not a JSON object: \(text.prefix(120))")
                    continue
                }
                if line.cls == "reply", let id = line.value["id"]?.stringValue, id.hasPrefix(Self.idPrefix) {
                    let waiter = inner.withLockedValue { $0.pending.removeValue(forKey: id) }
                    waiter?.resume(returning: line.value)
                    continue
                }
                onLine(line)
            }
        }
    }

    /// Sends a command (its fields without `id`) and returns the daemon's reply line.
    public func request(_ command: JSONObject, timeout: Double? = nil) async throws -> JSONValue {
        let timeout = timeout ?? options.commandTimeout
        let (id, writer): (String, NIOAsyncChannelOutboundWriter<ByteBuffer>?) = inner.withLockedValue { s in
            defer { s.nextID += 1 }
            return (Self.idPrefix + String(s.nextID), s.writer)
        }
        guard let writer else { throw RequestError.notConnected }
        var fields = command
        fields["id"] = .string(id)
        let line = ByteBuffer(string: jsonText(.object(fields)) + "\n")
        // The timer fails the request if no reply came; whichever resumes first removes the entry.
        let timer = Task { [inner] in
            try await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
            inner.withLockedValue { $0.pending.removeValue(forKey: id) }?.resume(
                throwing: RequestError.timedOut(timeout))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { (c: CheckedContinuation<JSONValue, any Error>) in
            inner.withLockedValue { $0.pending[id] = c }
            Task {
                do { try await writer.write(line) } catch {
                    inner.withLockedValue { $0.pending.removeValue(forKey: id) }?.resume(
                        throwing: RequestError.connectionLost)
                }
            }
        }
    }

    private func failPending(_ error: RequestError) {
        let waiters = inner.withLockedValue { s -> [CheckedContinuation<JSONValue, any Error>] in
            defer { s.pending = [:] }
            return Array(s.pending.values)
        }
        for w in waiters { w.resume(throwing: error) }
    }

    private func setState(_ s: State) {
        inner.withLockedValue { $0.state = s }
        onState(s)
    }
}
