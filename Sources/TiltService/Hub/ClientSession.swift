// SPDX-License-Identifier: Apache-2.0
import NIOCore
import SocketWriteRing
import TiltCore

#if canImport(Glibc)
import Glibc
import TiltPlatform
import TiltProtocol
#endif

/// One connected client: what it watches, its bounded outgoing queue, and its credentials.
///
/// Outgoing lines are shared (`SharedLine`: encoded once for every client) and queued here; once
/// per event-loop turn the hub flushes the client with one write of everything queued, straight
/// to the socket: through the hub's `SocketWriteRing` (io_uring, with every other client's) or
/// with write(2)/writev(2). A client with nothing queued gets the turn's attitude line without
/// it passing through this queue (`DirectWrites`, `claimDirect`); only what the socket does not
/// take comes here (`directWriteFailed`). Only when the kernel's send buffer is full does the
/// rest of the line at the head go to NIO, which waits for the socket to drain and then hands
/// back (`handHeadToNIO`).
/// Meanwhile at most `queueLimit` lines wait; past that the oldest are dropped and counted, and
/// the client gets a `gap` event with the count before its next line, so a stalled reader never
/// holds more than a fixed amount of memory and never slows the sampler or other clients.
///
/// Why not NIO's own write path for everything: its per-write bookkeeping (pipeline, pending
/// writes, promises, writability) cost several times the system call itself, and fan-out is
/// one write per client per sample (bench/fanout/run).
///
/// Not `Sendable`: like the `Hub` that owns it, a session is confined to the hub's loop (its
/// channel's), and the compiler refuses to let it leave.
public final class ClientSession: RingWriter {
    // Read or written for every line the hub fans out, so declared first: Swift lays a class's
    // stored properties out in this order, and together they take one or two cache lines per
    // client where, spread among the others, they took four (`Hub.publish`'s cost at 1000
    // clients is mostly these loads).
    /// `classes.contains(.attitude)`, asked per client for every attitude line (no hashing then).
    private var watchesAttitude: Bool
    /// The rest of a line is with NIO, waiting for the socket to take it.
    private var waitingForSocket = false
    /// Queued since the last flush; the hub flushes once per loop turn.
    private var needsFlush = false
    /// In the hub's list of clients its next `flushAll` writes (`Hub.flushSoon`). Apart from
    /// `needsFlush`: a flush of its own (`flushNow`, `close`) empties the queue but leaves the
    /// client in that list, and a client listed twice would have its queue offered twice to one
    /// io_uring submission, which writes it twice.
    var inHubFlushList = false
    /// The session's own descriptor for the socket (closed by `ended`).
    private var fd: CInt
    /// The socket's slot in the hub's `SocketWriteRing` file table (−1: none); `ended` releases it.
    public var registeredSlot: Int32 = -1
    /// This client's place in the hub's direct batch numbered `directBatch` (`claimDirect`).
    private var directIndex: Int32 = 0
    /// 1/`attitudeHz` in ns (0 when attitude is off): computed when the rate changes, not per line.
    private var attitudePeriod: Int64
    private var nextAttitudeDue: Nanoseconds = .min
    /// The hub's direct batch this client's next line is in; any other number: none
    /// (`DirectWrites`: a batch is over once the hub takes it, without touching its clients).
    private var directBatch: UInt64 = 0
    /// Lines not yet written; `headWritten` bytes of the first are already out.
    /// (`@exclusivity(unchecked)`: touched per client for every line, and only on the hub's loop,
    /// never while another access to it is open, so the run-time exclusivity check is skipped.)
    @exclusivity(unchecked) private var queue = LineQueue()
    /// Lines handed to the socket for this client since it connected (a line in a direct batch
    /// counts from the moment it joins; taken back if it does not go that way).
    public private(set) var sentTotal = 0
    /// Lines dropped since the last gap notice (its line goes before the next one).
    private var dropped = 0

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
    public private(set) var classes: Set<EventClass> {
        didSet { watchesAttitude = classes.contains(.attitude) }
    }
    /// This client's attitude rate, Hz (0 = none).
    public private(set) var attitudeHz: Double {
        didSet { attitudePeriod = Self.period(attitudeHz) }
    }
    /// Whether this client receives every calibrated sample.
    public private(set) var samples = false

    // Outgoing.
    let context: ChannelHandlerContext
    let queueLimit: Int
    /// `[socket] queue_bytes`: the queue's bytes bound (a line alone may be longer).
    let queueByteLimit: Int
    private var headWritten = 0
    /// Lines dropped for this client since it connected (its queue was full).
    public private(set) var droppedTotal = 0
    unowned let hub: Hub

    // Incoming.
    var badLines = 0
    /// Requests handed to the engine and not answered yet (`beginRequest`, `answer`).
    var pendingReplies = 0
    /// The peer shut down its write side: the session ends once every reply is out (`inputEnded`).
    var inputClosed = false

    init(
        id: Int, context: ChannelHandlerContext, fd: CInt, hub: Hub, credentials: Credentials?, trusted: Bool,
        attitudeHz: Double, queueLimit: Int, queueByteLimit: Int = .max
    ) {
        self.id = id; self.context = context; self.fd = fd; self.hub = hub; self.credentials = credentials
        self.trusted = trusted; self.attitudeHz = attitudeHz; self.queueLimit = queueLimit
        self.queueByteLimit = queueByteLimit
        self.attitudePeriod = Self.period(attitudeHz)
        self.classes = EventClass.defaultStream
        self.watchesAttitude = EventClass.defaultStream.contains(.attitude)
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
        Command.Watch.state(classes: classes, attitudeHz: attitudeHz, samples: samples)
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
        hub.recountWatchers()
    }

    /// The attitude period of a rate, ns; 0 for none. At most a day: a rate of 1e-300 Hz (which
    /// the catalogue's `0...1000` admits) is a line a day, not an overflow in the pacing below.
    static func period(_ hz: Double) -> Int64 {
        hz > 0 ? nanoseconds(ofSeconds: 1 / hz, limit: maxAttitudePeriod) : 0
    }

    /// The longest attitude period, ns: one day.
    static let maxAttitudePeriod: Int64 = 86_400 * 1_000_000_000

    /// Whether this client gets `event`; also paces attitude to the client's rate.
    func wants(_ event: Event) -> Bool {
        switch event.cls {
        case .hello, .reply, .gap: return true
        case .sample: return samples
        case .attitude:
            guard let t = event.t else { return false }
            return wantsAttitude(at: t)
        default: return classes.contains(event.cls)
        }
    }

    /// Whether this client gets the attitude of sample time `t`: paces attitude to its rate.
    func wantsAttitude(at t: Nanoseconds) -> Bool {
        guard watchesAttitude, attitudePeriod > 0 else { return false }
        // Beats on a grid of 1/attitude_hz from the first one; 10 % early is on time, so
        // sample-time jitter does not skip a beat. After a pause the grid restarts, and so
        // after sample time went back (a recording restarted by a reload): else the client
        // would hear nothing until the new times caught up with the old grid.
        let period = attitudePeriod
        if nextAttitudeDue != .min && t < nextAttitudeDue - 2 * period { nextAttitudeDue = .min }
        if nextAttitudeDue != .min && t < nextAttitudeDue - period / 10 { return false }
        nextAttitudeDue =
            (nextAttitudeDue == .min || t - nextAttitudeDue > period) ? t + period : nextAttitudeDue + period
        return true
    }

    /// Sends an event to this client only (replies, hello).
    public func reply(_ event: Event) {
        send(hub.encode(event))
    }

    /// Writes now what was queued during this loop turn (replies to a batch of commands, before
    /// the client's EOF makes NIO close the channel).
    func flushNow() {
        if needsFlush { flush() }
    }

    /// Queues an encoded line; it goes out at the next flush. On the hub's loop.
    func send(_ line: SharedLine) {
        guard fd >= 0 else { return }
        reclaimDirect()
        // Lines and bytes are both bounded: 1024 replies of a MB each were a GB for one client.
        while queue.count >= queueLimit || (queue.count > 0 && queue.bytes + line.bytes.count > queueByteLimit) {
            // The oldest whole line goes; a line partly written must be finished, and a gap
            // notice still queued stays (dropping it would lose the count it carries).
            var victim = headWritten > 0 ? 1 : 0
            while victim < queue.count - 1 && queue[victim].isGapNotice { victim += 1 }
            // Only the partly written head is left: it goes out whole, and the new line after it.
            guard victim < queue.count else { break }
            hub.countDropped(queue.remove(at: victim))
            dropped += 1
            droppedTotal += 1
        }
        queue.append(line)
        needsFlush = true
        if !inHubFlushList {
            inHubFlushList = true
            hub.flushSoon(self)
        }
    }

    /// Writes what is queued: one writev(2) for all of it (a few when it is long), until the
    /// queue is empty or the socket is full. On the hub's loop.
    func flush() {
        if beginFlush() { writeQueued() }
    }

    /// Starts a flush: clears the flag and puts the gap notice for dropped lines in place.
    /// Returns whether there is anything to write now. (The hub's `SocketWriteRing` then offers
    /// `nextWrite` for many clients with one system call and hands each result to `finishWrite`.)
    func beginFlush() -> Bool {
        reclaimDirect()
        needsFlush = false
        guard fd >= 0, !waitingForSocket else { return false }
        if dropped > 0 {
            let n = dropped
            dropped = 0
            // Before the next whole line: after the head if that is partly written.
            queue.insert(hub.encode(.gap(dropped: n)), at: headWritten > 0 ? 1 : 0)
        }
        return !queue.isEmpty
    }

    /// Writes the queue with write(2)/writev(2) until it is empty or the socket is full.
    public func writeQueued() {
        guard fd >= 0, !waitingForSocket, !queue.isEmpty else { return }
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: SocketWriteRing.iovecsPerWrite) { iov in
            var more = true
            while more {
                let (count, wanted) = nextWrite(into: iov.baseAddress!)
                let n =
                    count == 1 ? write(fd, iov[0].iov_base, iov[0].iov_len) : writev(fd, iov.baseAddress, Int32(count))
                more = finishWrite(n, error: n < 0 ? errno : 0, wanted: wanted)
            }
        }
    }

    /// The session's descriptor, for a write the hub's `SocketWriteRing` makes on its behalf.
    public var descriptor: CInt { fd }

    /// Describes the next write in `iov` (room for `SocketWriteRing.iovecsPerWrite`): up to that
    /// many queued lines from the head, less what is already out. Returns the iovec count and the
    /// bytes offered. The bytes stay valid until `finishWrite`: the queue holds the lines.
    public func nextWrite(into iov: UnsafeMutablePointer<iovec>) -> (count: Int, wanted: Int) {
        let count = min(queue.count, SocketWriteRing.iovecsPerWrite)
        var wanted = 0
        for i in 0..<count {
            let line = queue[i]
            let skip = i == 0 ? headWritten : 0
            iov[i] = iovec(iov_base: line.bytes.baseAddress! + skip, iov_len: line.bytes.count - skip)
            wanted += line.bytes.count - skip
        }
        return (count, wanted)
    }

    /// Applies the result of the write `nextWrite` described: `n` bytes taken, or −1 and `error`.
    /// Returns whether to write again now (more is queued and the socket took all it was offered).
    public func finishWrite(_ n: Int, error: Int32, wanted: Int) -> Bool {
        if n < 0 {
            switch error {
            case _ where SystemError.isInterruption(error): return true
            case EAGAIN: handHeadToNIO(); return false
            default:
                // The peer is gone (EPIPE, ECONNRESET): NIO sees it too and ends the session.
                queue.removeAll()
                context.close(promise: nil)
                return false
            }
        }
        consume(n)
        if n < wanted { handHeadToNIO(); return false }
        return !queue.isEmpty
    }

    /// Drops `n` written bytes off the front of the queue.
    private func consume(_ n: Int) {
        var left = n
        while left > 0, let head = queue.first {
            let rest = head.bytes.count - headWritten
            if left < rest { headWritten += left; return }
            left -= rest
            headWritten = 0
            _ = queue.popFirst()
            sentTotal += 1
        }
    }

    /// The socket is full: NIO takes the rest of the head line and tells us (its write's
    /// promise) when the socket took it; lines queue here until then.
    private func handHeadToNIO() {
        guard let head = queue.popFirst() else { return }
        let rest = UnsafeRawBufferPointer(rebasing: head.bytes[headWritten...])
        headWritten = 0
        var buffer = context.channel.allocator.buffer(capacity: rest.count)
        buffer.writeBytes(rest)
        waitingForSocket = true
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { [self] result in
            waitingForSocket = false
            guard case .success = result else { return }
            sentTotal += 1
            flush()
            endIfAnswered()
        }
        context.writeAndFlush(NIOAny(buffer), promise: promise)
    }

    /// Joins the hub's direct batch `batch` at `index` if nothing of this client's waits (queued,
    /// with NIO, or in the batch already): its next line then goes straight from the shared
    /// bytes to the socket (`DirectWrites`). On the hub's loop.
    func claimDirect(batch: UInt64, index: Int) -> Bool {
        guard queue.isEmpty, dropped == 0, !waitingForSocket, fd >= 0, directBatch != batch else { return false }
        directBatch = batch
        directIndex = Int32(truncatingIfNeeded: index)
        sentTotal += 1
        return true
    }

    /// Something else is about to be queued or written for this client: its line in the hub's
    /// pending direct batch, if any, comes out of the batch and goes first in the queue.
    private func reclaimDirect() {
        guard directBatch == hub.directBatch else { return }
        directBatch = 0
        guard let line = hub.cancelDirect(at: directIndex) else { return }
        sentTotal -= 1
        queue.insert(line, at: 0)
    }

    /// The socket did not take all of a direct line (`result`: bytes taken, or −errno): the rest
    /// is queued and goes as a queued line's would (NIO when the socket is full, a write(2) now
    /// when the ring failed before sending it, the end of the session on a dead peer).
    func directWriteFailed(_ line: SharedLine, result: Int32) {
        sentTotal -= 1
        guard fd >= 0 else { return }
        // The queue is empty: anything queued since the line joined the batch took it back.
        queue.insert(line, at: 0)
        headWritten = 0
        let n = Int(result)
        if finishWrite(n < 0 ? -1 : n, error: n < 0 ? -result : 0, wanted: line.bytes.count) { writeQueued() }
    }

    /// Queued line count (for status).
    public var queued: Int { queue.count }

    /// Closes the connection, after writing what the socket takes at once.
    func close() {
        flush()
        context.close(promise: nil)
    }

    /// The channel is gone: no more writes, and our descriptor and file-table slot are released
    /// (which, NIO's descriptor being closed already, releases the socket).
    func ended() {
        if directBatch == hub.directBatch { _ = hub.cancelDirect(at: directIndex) }
        queue.removeAll()
        // The ring's file table holds the socket open too: the peer sees EOF once both are gone.
        hub.releaseRingSlot(of: self)
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    /// True once the daemon has decided to drop this client.
    var isClosing = false

    /// Nothing of this client's waits in NIO or in the queue (the half-close ending, `endIfAnswered`).
    var isDrained: Bool { queue.isEmpty && !waitingForSocket }
}
