// SPDX-License-Identifier: Apache-2.0
import NIOCore
import SocketWriteRing
import TiltConfig
import TiltCore
import TiltLogging
import TiltPlatform
import TiltProtocol
import TiltSystemd

/// Receives requests from clients; implemented by the daemon, which alone changes state.
public protocol RequestHandler: AnyObject {
    /// Handles one parsed request from `client`; must answer with exactly one `client.reply(…)`.
    /// Called on the hub's event loop.
    func handle(_ request: Request, from client: ClientSession)
    /// The `hello` line's body for a client that just connected (game state, device summary…).
    func helloFields(for client: ClientSession) -> JSONObject
}

/// Numbers events and fans them out to every connected client.
///
/// Every event is encoded once and the same bytes are queued on each client that watches its
/// class (a turn's attitude line to a client with nothing queued is written straight from them:
/// `DirectWrites`); per-client queues are bounded (`ClientSession`), so a slow reader costs only
/// its own lines. All state is confined to `loop`, and the compiler keeps it there: the hub is
/// not `Sendable`, so other threads reach it only through a `HubHandle` (its `NIOLoopBoundBox`),
/// and its own callbacks are isolated to the loop (`assumeIsolated`).
public final class Hub {
    /// The event loop all hub, session and engine state is confined to.
    public let loop: any EventLoop
    /// Who answers requests (the engine); weak, the daemon owns it.
    public weak var handler: (any RequestHandler)?
    /// Connected clients, in connection order (an array: fan-out walks it for every line).
    private(set) var clients: [ClientSession] = []
    private var seq: UInt64 = 0
    /// Clients that receive every calibrated sample (`watch` with `samples`); usually none, and
    /// then a sample's line is not offered to each client in turn (`recountWatchers`).
    private var sampleWatchers = 0
    /// Clients with queued but unwritten lines, flushed together by one task (`flushSoon`).
    /// (`@exclusivity(unchecked)`, as `ClientSession.queue`: per client per line, loop only.)
    @exclusivity(unchecked) private var unflushed: [ClientSession] = []
    @exclusivity(unchecked) private var flushBatch: [ClientSession] = []
    /// This turn's attitude line for the clients with nothing queued (`DirectWrites`).
    /// (`@exclusivity(unchecked)`: per client per line, loop only.)
    @exclusivity(unchecked) private(set) var directWrites = DirectWrites()
    /// The batch `flushAll` took from `directWrites` and is writing (`writeDirect`).
    @exclusivity(unchecked) var directTaken: [DirectWrites.Target] = []
    /// The direct batch being gathered (`DirectWrites.batch`).
    var directBatch: UInt64 { directWrites.batch }
    /// Takes a client's line out of the batch being gathered (`DirectWrites.cancel`).
    func cancelDirect(at i: Int32) -> SharedLine? { directWrites.cancel(at: i) }
    /// A `flushAll` task is queued.
    private var flushQueued = false
    /// Writes each loop turn's flushes with one system call (`useWriteRing`); nil: write(2).
    private var writeRing: SocketWriteRing?
    /// How fan-out writes go out, for `stats`: "io_uring", or "write" and why not io_uring.
    public private(set) var fanoutWrites = "write"
    /// Told when the ring failed and fan-out went back to write(2) (the daemon logs it).
    public var onWriteRingFailure: ((String) -> Void)?
    /// Latest sample time seen: stamps events that have no time of their own (replies, status).
    public private(set) var lastSampleTime: Nanoseconds?
    /// The socket settings in force (limits, trust); replaced on reload. On `loop`.
    public var socketConfig = Configuration.Socket() {
        didSet { clientSlots?.maxClients = socketConfig.maxClients }
    }
    /// The socket server's client count and cap (nil without a server, in tests).
    public var clientSlots: ClientSlots?

    /// A hub confined to `loop`.
    public init(loop: any EventLoop) {
        self.loop = loop
    }

    /// Number of connected clients.
    public var clientCount: Int {
        loop.preconditionInEventLoop()
        return clients.count
    }

    /// Connected clients, for status replies.
    public var sessions: [ClientSession] { clients }

    func add(_ c: ClientSession) {
        clients.append(c)
        writeRing?.register(c)
        recountWatchers()
    }

    func remove(_ c: ClientSession) {
        clients.removeAll { $0 === c }
        recountWatchers()
    }

    /// After a client came, went or changed what it watches.
    func recountWatchers() {
        sampleWatchers = clients.reduce(0) { $0 + ($1.samples ? 1 : 0) }
    }

    /// The next sequence number. Monotonic for the daemon's lifetime, shared by all classes.
    func nextSeq() -> UInt64 {
        seq += 1
        return seq
    }

    /// Encodes `event` with the next sequence number.
    func encode(_ event: Event) -> SharedLine {
        var e = event
        // A line without its own time gets the latest sample time, unless its clock is GPS time.
        if e.t == nil, !e.cls.usesGPSTime { e.t = lastSampleTime }
        return e.withEncoded(seq: nextSeq()) { SharedLine(copying: $0, isGapNotice: e.cls == .gap) }
    }

    /// Sends `event` to every client that watches its class. Must run on `loop`.
    public func publish(_ event: Event) {
        loop.preconditionInEventLoop()
        if let t = event.t, event.cls == .attitude || event.cls == .sample { lastSampleTime = t }
        var line: SharedLine?
        if event.cls == .attitude, let t = event.t {
            // The line of every sample: the per-client test without the class switch, and the
            // clients with nothing queued get it straight from the shared bytes (one line per
            // turn goes that way; a second one in the same turn goes through the queues).
            var direct = false
            for c in clients where c.wantsAttitude(at: t) {
                if line == nil {
                    line = encode(event)
                    direct = directWrites.line == nil
                }
                if direct && c.claimDirect(batch: directWrites.batch, index: directWrites.targets.count) {
                    directWrites.append(c, line: line!)
                } else {
                    c.send(line!)
                }
            }
            if directWrites.line != nil { flushSoon() }
            return
        }
        if event.cls == .sample && sampleWatchers == 0 { return }
        for c in clients where c.wants(event) {
            if line == nil { line = encode(event) }
            c.send(line!)
        }
    }

    /// Arranges for `client` to be flushed by a task queued behind the loop's pending work
    /// (see `ClientSession.send`): one task per loop turn, however many clients and lines. A
    /// client is listed once (`ClientSession.inHubFlushList`) until that task takes the list.
    func flushSoon(_ client: ClientSession) {
        unflushed.append(client)
        flushSoon()
    }

    /// Queues the turn's `flushAll`, if not queued yet.
    private func flushSoon() {
        guard !flushQueued else { return }
        flushQueued = true
        loop.assumeIsolated().execute { self.flushAll() }
    }

    private func flushAll() {
        flushQueued = false
        swap(&unflushed, &flushBatch)
        // Out of the list before anything is written: what a write's result queues for a
        // client (a close, a gap) lists it again, for the next turn.
        for c in flushBatch { c.inHubFlushList = false }
        let line = directWrites.take(into: &directTaken)
        if let ring = writeRing {
            do {
                if let line { try writeDirect(line, through: ring) }
                for c in flushBatch where c.beginFlush() {
                    if !ring.add(c) {
                        try ring.submit()
                        _ = ring.add(c)
                    }
                }
                try ring.submit()
            } catch {
                // The ring wrote or gave back every session it had taken; the rest are written
                // here, and later turns use write(2).
                dropWriteRing()
                fanoutWrites = "write (\(error))"
                onWriteRingFailure?(error.description)
                if let line { writeDirect(line) }
                for c in flushBatch { c.flush() }
            }
        } else {
            if let line { writeDirect(line) }
            for c in flushBatch { c.flush() }
        }
        flushBatch.removeAll(keepingCapacity: true)
        directTaken.removeAll(keepingCapacity: true)
    }

    /// Fan-out through io_uring (`on`: one system call per 256 clients each loop turn) or with
    /// write(2) per client. Returns why not when io_uring was asked for and is unavailable;
    /// fan-out then uses write(2). On `loop`.
    @discardableResult
    public func useWriteRing(_ on: Bool) -> String? {
        loop.preconditionInEventLoop()
        guard on else {
            dropWriteRing()
            fanoutWrites = "write (socket.io_uring = false)"
            return nil
        }
        if writeRing != nil { return nil }
        switch SocketWriteRing.make() {
        case .success(let ring):
            writeRing = ring
            for c in clients { ring.register(c) }
            fanoutWrites = "io_uring"
            return nil
        case .failure(let failure):
            fanoutWrites = "write (\(failure))"
            return failure.description
        }
    }

    /// Closes the ring, which releases every socket in its file table: no client has a slot now.
    private func dropWriteRing() {
        writeRing = nil
        for c in clients { c.registeredSlot = -1 }
        directWrites.forgetSlots()
    }

    /// Clients whose socket is in the ring's registered-file table (`stats`).
    public var registeredClients: Int { clients.reduce(0) { $0 + ($1.registeredSlot >= 0 ? 1 : 0) } }

    /// Free slots in the ring's file table (nil without a ring), for tests.
    var freeRingFileSlots: Int? { writeRing?.freeFileSlots }

    /// Takes an ending client's socket out of the ring's file table (see `SocketWriteRing`).
    func releaseRingSlot(of client: ClientSession) {
        writeRing?.release(client)
    }

    func dispatch(_ request: Request, from client: ClientSession) {
        client.beginRequest()
        guard let handler else {
            client.answer(
                .reply(
                    id: request.id, cmd: request.command.name,
                    error: ProtocolError(.unavailable, "the daemon is starting")))
            return
        }
        handler.handle(request, from: client)
    }

    func hello(for client: ClientSession) -> Event {
        .hello(
            version: TiltdVersion.string, protocolNumber: TiltdVersion.protocolNumber, client: client.summary,
            state: handler?.helloFields(for: client) ?? JSONObject(), t: lastSampleTime)
    }

    /// Lines dropped for slow clients since start, per class (for `stats`).
    public private(set) var droppedLines: [EventClass: Int] = [:]

    /// Counts a line a client's full queue dropped.
    func countDropped(_ line: SharedLine) {
        let cls = Event.lineClass(UnsafeRawBufferPointer(line.bytes))
        droppedLines[cls ?? .reply, default: 0] += 1
    }
}
