import DequeModule
import NIOCore
import TiltCore

/// One connected client: what it watches, its bounded outgoing queue, and its credentials.
///
/// Lines go straight to the channel while it is writable; once the socket's send buffer and
/// NIO's (small, see SocketServer) water mark are full they wait here, at most `queueLimit` of
/// them. Past that the oldest are dropped and counted, and the client gets a `gap` event with the
/// count before its next line, so a stalled reader never holds more than a fixed amount of memory
/// and never slows the sampler or other clients.
///
/// `@unchecked`: no lock guards the state; like the `Hub` that owns it, a session is confined to
/// the hub's loop (its channel's), and only its `id` and credentials are read elsewhere.
public final class ClientSession: @unchecked Sendable {
    /// Peer credentials from SO_PEERCRED, and its supplementary groups from SO_PEERGROUPS.
    public struct Credentials: Sendable, Equatable {
        /// The peer's process id.
        public var pid: Int32
        /// The peer's user id.
        public var uid: UInt32
        /// The peer's primary group id.
        public var gid: UInt32
        /// Supplementary groups at connect time (empty when the kernel could not say).
        public var groups: [UInt32] = []
    }

    /// The connection's number (1, 2, … since start), in `hello` and logs.
    public let id: Int
    /// SO_PEERCRED of the peer, when the kernel gave it.
    public let credentials: Credentials?
    /// Whether this peer may send mutating commands (re-judged when a reload changes trust).
    public internal(set) var trusted: Bool

    // What the client watches.
    /// The event classes this client receives (`watch classes`).
    public private(set) var classes: Set<EventClass>
    /// This client's attitude rate, Hz (0 = none).
    public private(set) var attitudeHz: Double
    /// Whether this client receives every calibrated sample.
    public private(set) var samples = false
    private var nextAttitudeDue: Nanoseconds = .min

    // Outgoing.
    let context: ChannelHandlerContext
    let queueLimit: Int
    private var queue = Deque<ByteBuffer>()
    private var dropped = 0
    /// Lines written to the channel since its last flush; the hub flushes once per loop turn.
    private var needsFlush = false
    /// Lines dropped for this client since it connected (its queue was full).
    public private(set) var droppedTotal = 0
    /// Lines handed to the socket for this client since it connected.
    public private(set) var sentTotal = 0
    unowned let hub: Hub

    // Incoming.
    var badLines = 0

    init(id: Int, context: ChannelHandlerContext, hub: Hub, credentials: Credentials?, trusted: Bool,
         attitudeHz: Double, queueLimit: Int) {
        self.id = id; self.context = context; self.hub = hub; self.credentials = credentials
        self.trusted = trusted; self.attitudeHz = attitudeHz; self.queueLimit = queueLimit
        self.classes = EventClass.defaultStream
    }

    /// The `client` object of `hello`: id, credentials, trusted.
    public var summary: JSONObject {
        var o = JSONObject()
        o["id"] = .int(Int64(id))
        if let c = credentials {
            o["uid"] = .int(Int64(c.uid)); o["gid"] = .int(Int64(c.gid)); o["pid"] = .int(Int64(c.pid))
        }
        o["trusted"] = .bool(trusted)
        return o
    }

    /// The client's current watch settings, as echoed in the `watch` reply.
    public var watchState: JSONObject {
        var o = JSONObject()
        o["classes"] = .array(EventClass.allCases.filter { classes.contains($0) }.map { .string($0.rawValue) })
        o["attitude_hz"] = .number(attitudeHz)
        o["samples"] = .bool(samples)
        return o
    }

    /// Applies a `watch` request.
    public func apply(_ w: Command.Watch) {
        if let c = w.classes { classes = c }
        if let hz = w.attitudeHz {
            attitudeHz = hz
            if hz > 0 { classes.insert(.attitude) } else { classes.remove(.attitude) }
        }
        if let s = w.samples {
            samples = s
            if s { classes.insert(.sample) } else { classes.remove(.sample) }
        }
        nextAttitudeDue = .min
    }

    /// Whether this client gets `event`; also paces attitude to the client's rate.
    func wants(_ event: Event) -> Bool {
        switch event.cls {
        case .hello, .reply, .gap: return true
        case .sample: return samples
        case .attitude:
            guard classes.contains(.attitude), attitudeHz > 0, let t = event.t else { return false }
            // Beats on a grid of 1/attitude_hz from the first one; 10 % early is on time, so
            // sample-time jitter does not skip a beat. After a pause the grid restarts.
            let period = Int64(1e9 / attitudeHz)
            if nextAttitudeDue != .min && t < nextAttitudeDue - period / 10 { return false }
            nextAttitudeDue = (nextAttitudeDue == .min || t - nextAttitudeDue > period) ? t + period : nextAttitudeDue + period
            return true
        default: return classes.contains(event.cls)
        }
    }

    /// Sends an event to this client only (replies, hello).
    public func reply(_ event: Event) {
        send(hub.encode(event))
    }

    /// Queues an encoded line. On the hub's loop.
    func send(_ line: ByteBuffer) {
        if queue.isEmpty && dropped == 0 && context.channel.isWritable {
            write(line)
            return
        }
        if queue.count >= queueLimit {
            hub.countDropped(queue.removeFirst())
            dropped += 1
            droppedTotal += 1
        }
        queue.append(line)
    }

    /// Called when the channel can take more: the gap notice first, then queued lines.
    func drain() {
        guard context.channel.isActive else { return }
        if dropped > 0, context.channel.isWritable {
            let n = dropped
            dropped = 0
            write(hub.encode(.gap(dropped: n)))
        }
        while context.channel.isWritable, let line = queue.popFirst() {
            write(line)
        }
    }

    /// Hands a line to NIO without flushing; the hub flushes this client after the tasks already
    /// queued on the loop have run. When the loop keeps up that is right after this event; when
    /// samples have piled up, each client gets all of them in one writev(2) instead of one
    /// write(2) per line, so a busy daemon spends less per line and catches up.
    private func write(_ line: ByteBuffer) {
        sentTotal += 1
        context.write(NIOAny(line), promise: nil)
        if !needsFlush {
            needsFlush = true
            hub.flushSoon(self)
        }
    }

    /// Pushes written lines to the socket. On the hub's loop.
    func flush() {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    /// Queued line count (for status).
    public var queued: Int { queue.count }

    /// Closes the connection.
    func close() {
        flush()
        context.close(promise: nil)
    }

    /// True once the daemon has decided to drop this client.
    private(set) var isClosing = false

    /// Ends a misbehaving client without losing the replies already sent: half-close our side
    /// (the client reads them, then EOF) and close fully a little later. Closing at once while
    /// its garbage is still unread would make the kernel reset the connection and discard them.
    func closeGracefully(after seconds: Int64 = 2) {
        guard !isClosing else { return }
        isClosing = true
        flush()  // the replies just written must go out before the half-close
        let ctx = context
        ctx.close(mode: .output, promise: nil)
        ctx.eventLoop.assumeIsolated().scheduleTask(in: .seconds(seconds)) { ctx.close(promise: nil) }
    }
}
