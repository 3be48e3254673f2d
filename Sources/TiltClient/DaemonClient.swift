// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOPosix
import TiltPlatform
import TiltProtocol

/// The one client of the daemon's socket protocol (docs/protocol.md) in this package: `tiltd web`,
/// `tiltd mqtt`, `tiltd monitor`, `tiltd reload` and the tests use it. It frames lines (`LineFramer`,
/// bounded, through `LineFrameDecoder`), matches replies to requests by id, sends the client's
/// `watch` on every connection, reconnects with backoff, bounds every wait with a timeout, and
/// hands every other line to `onEvent` typed (`DaemonLine`), in order, on one event loop.
///
/// All its state lives on that loop in a `NIOLoopBoundBox`: the public methods hop there, so the
/// compiler (not a convention) keeps the state confined.
public final class DaemonClient: Sendable {
    /// How to reach the daemon and how patient to be with it.
    public struct Options: Sendable {
        /// The daemon's Unix socket (`[socket] path`).
        public var socketPath: String
        /// Ids of this client's requests start with this, so its replies are told apart.
        public var idPrefix: String
        /// The `watch` fields (without `cmd` and `id`) sent after every connect; nil sends none.
        public var watch: JSONObject?
        /// Seconds a request waits for its reply unless it says otherwise.
        public var requestTimeout: Double = 10
        /// Seconds one connection attempt may take.
        public var connectTimeout: Double = 5
        /// Whether to reconnect after a failed attempt or a lost connection.
        public var reconnect = true
        /// Backoff between attempts: `minRetry` doubling up to `maxRetry` seconds (as the daemon
        /// itself retries its sources).
        public var minRetry = 0.5
        /// The longest wait between attempts, seconds.
        public var maxRetry = 10.0
        /// Longest line accepted: a `status` reply with a full game state is a few KB; anything
        /// beyond this is not the daemon speaking, and closes the connection.
        public var maxLineBytes = 1 << 20

        /// Options for `socketPath`; the rest keep their defaults.
        public init(socketPath: String, idPrefix: String = "client-", watch: JSONObject? = nil) {
            self.socketPath = socketPath; self.idPrefix = idPrefix; self.watch = watch
        }
    }

    /// What the client reports, in order.
    public enum Event: Sendable {
        /// A connection is up (the `watch`, if any, has been sent).
        case connected
        /// One line from the daemon that is not the reply to one of this client's requests.
        case line(DaemonLine)
        /// A line that is not a JSON object (the daemon never sends one), as received.
        case unparsable(String)
        /// An attempt failed or the connection ended; `retryIn` seconds to the next attempt, or nil
        /// when the client does not retry (closed, or `reconnect` off).
        case disconnected(reason: String, retryIn: Double?)
    }

    /// Why a request got no reply.
    public enum Failure: Error, CustomStringConvertible, Equatable {
        /// No connection is up.
        case notConnected
        /// No reply within the timeout, seconds.
        case timedOut(Double)
        /// The connection ended before the reply.
        case connectionLost
        /// `close()` was called.
        case closed
        /// The connection could not be made, and the client does not retry.
        case cannotConnect(String)

        /// Why, in a sentence (for logs and error replies).
        public var description: String {
            switch self {
            case .notConnected: "the daemon is not connected"
            case .timedOut(let s): "the daemon did not reply within \(s) s"
            case .connectionLost: "the connection to the daemon was lost before its reply"
            case .closed: "the client was closed"
            case .cannotConnect(let why): why
            }
        }
    }

    struct State {
        var channel: (any Channel)?
        var pending: [String: (promise: EventLoopPromise<ReplyBody>, timer: Scheduled<Void>)] = [:]
        var connectWaiters: [EventLoopPromise<Void>] = []
        var nextID: UInt64 = 1
        var retry: Double
        var started = false
        var closed = false
        /// Why the client stopped trying (`reconnect` off, or closed).
        var gaveUp: Failure?
        var retryTimer: Scheduled<Void>?
    }

    /// How the client connects, as given at init.
    public let options: Options
    /// The loop all of the client's state and callbacks are on.
    public let eventLoop: any EventLoop
    let state: NIOLoopBoundBox<State>
    let onEvent: @Sendable (Event) -> Void

    /// A client calling `onEvent` for every event, on `eventLoop` (keep it quick). Call `start()`.
    public init(
        options: Options, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.options = options
        self.onEvent = onEvent
        eventLoop = group.next()
        state = .makeBoxSendingValue(State(retry: options.minRetry), eventLoop: eventLoop)
    }

    /// A client whose events are an `AsyncStream` (finished when the client is closed).
    public static func makeStream(
        options: Options, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) -> (DaemonClient, AsyncStream<Event>) {
        let (stream, sink) = AsyncStream.makeStream(of: Event.self)
        let client = DaemonClient(options: options, group: group) { e in
            sink.yield(e)
            if case .disconnected(_, nil) = e { sink.finish() }
        }
        return (client, stream)
    }

    /// Starts connecting (and, with `reconnect`, keeps connected until `close()`).
    public func start() {
        eventLoop.execute {
            guard !self.state.value.started, !self.state.value.closed else { return }
            self.state.value.started = true
            self.connect()
        }
    }

    /// Succeeds once a connection is up (at once if it is), fails after `timeout` seconds or when
    /// the client stops trying.
    public func connected(timeout: Double) -> EventLoopFuture<Void> {
        eventLoop.flatSubmit {
            if self.state.value.channel != nil { return self.eventLoop.makeSucceededVoidFuture() }
            if let why = self.state.value.gaveUp { return self.eventLoop.makeFailedFuture(why) }
            if self.state.value.closed { return self.eventLoop.makeFailedFuture(Failure.closed) }
            let p = self.eventLoop.makePromise(of: Void.self)
            self.state.value.connectWaiters.append(p)
            let timer = self.eventLoop.scheduleTask(in: .nanoseconds(Int64(saturating: timeout * 1e9))) {
                p.fail(Failure.timedOut(timeout))
            }
            p.futureResult.whenComplete { _ in timer.cancel() }
            return p.futureResult
        }
    }

    /// Sends a command (`fields` holds `cmd` and its arguments; the client adds `id`) and returns
    /// the daemon's reply, or fails with `Failure` (`notConnected`, `timedOut`, `connectionLost`).
    public func request(_ fields: JSONObject, timeout: Double? = nil) -> EventLoopFuture<ReplyBody> {
        eventLoop.flatSubmit {
            let id = self.options.idPrefix + String(self.state.value.nextID)
            self.state.value.nextID += 1
            return self.request(fields, id: id, timeout: timeout ?? self.options.requestTimeout)
        }
    }

    /// Sends a command line as it is (its `id`, if any, is the caller's: the reply comes as a
    /// line). Dropped when no connection is up.
    public func send(_ fields: JSONObject) {
        eventLoop.execute {
            guard let ch = self.state.value.channel else { return }
            ch.writeAndFlush(Self.encode(fields, allocator: ch.allocator), promise: nil)
        }
    }

    /// Stops: no more attempts, the connection closed, pending requests failed with `closed`;
    /// then a last `.disconnected(…, retryIn: nil)`.
    public func close() {
        eventLoop.execute {
            guard !self.state.value.closed else { return }
            self.state.value.closed = true
            self.state.value.retryTimer?.cancel()
            if let ch = self.state.value.channel {
                ch.close(promise: nil)  // `channelInactive` reports it
            } else {
                self.lost("closed", failing: .closed)
            }
        }
    }

    static func encode(_ fields: JSONObject, allocator: ByteBufferAllocator) -> ByteBuffer {
        let text = JSONValue.object(fields).jsonText
        var buf = allocator.buffer(capacity: text.utf8.count + 1)
        buf.writeString(text)
        buf.writeInteger(UInt8(ascii: "\n"))
        return buf
    }
}
