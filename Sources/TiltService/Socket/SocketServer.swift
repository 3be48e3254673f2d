// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix
import Synchronization
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol

/// Serves the JSON-lines protocol on a Unix stream socket.
///
/// The listening socket is either inherited from systemd (socket activation) or made here:
/// a stale socket file left by a crashed daemon is replaced, but a live one (another tiltd
/// answering on it) is refused, and a path that is not a socket is never removed.
public final class SocketServer: Sendable {
    /// The settings the socket was made with (path, mode, group).
    public let config: Configuration.Socket
    let hub: HubHandle
    let logger: Logger
    private let acceptorBox = Mutex<Acceptor?>(nil)
    /// Clients connected and the cap (`[socket] max_clients`).
    public let slots = ClientSlots()

    /// A server for `hub` with `config`; nothing listens until `start`.
    public init(config: Configuration.Socket, hub: HubHandle, logger: Logger) {
        self.config = config; self.hub = hub; self.logger = logger
        slots.maxClients = config.maxClients
        let slots = self.slots
        hub.execute {
            $0.clientSlots = slots
            $0.socketConfig = config
        }
    }

    /// Problems that stop the server from starting.
    public enum StartError: Error, CustomStringConvertible {
        case inUse(String)
        case notASocket(String)
        case system(String, Int32)

        /// What went wrong, for the log and the exit message.
        public var description: String {
            switch self {
            case .inUse(let p):
                return
                    "\(p) is in use by another running tiltd (a client connected to it); stop that one first or choose another [socket] path"
            case .notASocket(let p): return "\(p) exists and is not a socket; refusing to replace it"
            case .system(let what, let e): return SystemError(what, code: e).description
            }
        }
    }

    /// Starts listening: on `inheritedFD` when systemd passed one, otherwise on `config.path`.
    public func start(inheritedFD: CInt? = nil) throws {
        let fd = try inheritedFD ?? makeListeningSocket()
        // The acceptor drains the backlog until EAGAIN: the socket must not block.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let hub = self.hub
        let logger = self.logger
        let counter = Counter()
        let slots = self.slots
        let acceptor = try Acceptor(listeningFD: fd) { clientFD in
            // Past the cap: one line and the close, before NIO or the hub spend anything on it.
            guard slots.take() else { return slots.refuse(clientFD) }
            Self.adopt(clientFD, id: counter.next(), hub: hub, slot: ClientSlot(slots), logger: logger)
        }
        acceptorBox.withLock { $0 = acceptor }
        logger.info("serving on \(inheritedFD != nil ? "socket from systemd" : config.path)")
        if slots.effectiveLimit < config.maxClients {
            logger.notice(
                "at most \(slots.effectiveLimit) clients, not [socket] max_clients = \(config.maxClients): a quarter of the descriptors the process may open (LimitNOFILE), at least 256, stay for the store, the IMU and gpsd"
            )
        }
    }

    /// Hands an accepted connection to NIO (which reads its commands) and keeps a duplicate of
    /// its descriptor for the session's own writes (see `ClientSession`).
    static func adopt(_ fd: CInt, id: Int, hub: HubHandle, slot: ClientSlot, logger: Logger) {
        let credentials = ClientHandler.peerCredentials(fd)
        // The duplicate keeps the socket open until the session closes it too, so a write can
        // never reach a descriptor number NIO has closed and the kernel has given to someone else.
        let writeFD = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard writeFD >= 0 else {
            logger.warning(
                "client \(id): cannot duplicate its descriptor (\(SystemError.text(errno))); closed")
            close(fd)
            slot.release()
            return
        }
        ClientBootstrap(group: hub.loop)
            .channelOption(ChannelOptions.maxMessagesPerRead, value: 4)
            // A client's EOF ends its commands, not its session: replies still due go out first
            // (`ClientSession.inputEnded`).
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        // The channel is on the hub's loop: the hub is reachable here.
                        ClientHandler(
                            id: id, hub: hub.value, logger: logger, writeFD: writeFD, credentials: credentials,
                            slot: slot))
                }
            }
            .withConnectedSocket(fd)
            .whenFailure { error in
                logger.warning("client \(id): \(error); closed")
                close(writeFD)
                slot.release()
            }
    }

    /// Stops accepting and closes every client.
    public func stop() {
        let acceptor = acceptorBox.withLock { a -> Acceptor? in
            let x = a; a = nil; return x
        }
        acceptor?.stop()
        let hub = self.hub
        try? hub.submit { hub in
            for c in hub.sessions { c.close() }
        }.wait()
    }

    /// Creates, binds and listens on the configured path with the configured mode and group.
    ///
    /// The socket is bound and set up under a temporary name beside `path` and renamed into place
    /// only once it listens: a client that sees the file (a script waiting for it, a unit's
    /// `ConditionPathExists`) can connect at once, never meeting ECONNREFUSED from a socket that
    /// exists but does not listen yet. When the temporary name would not fit in `sun_path`, the
    /// socket is bound at `path` directly.
    func makeListeningSocket() throws -> CInt {
        let path = config.path
        try removeStaleSocket(at: path)
        let dir = PathName.directory(of: path)
        if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }

        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw StartError.system("socket()", errno) }
        guard UnixSocketAddress(path: path) != nil else {
            close(fd); throw StartError.system("socket path \(path)", ENAMETOOLONG)
        }
        let staged = PathName.appending(".\(PathName.lastComponent(of: path)).\(getpid()).new", to: dir)
        let bound = UnixSocketAddress(path: staged) != nil ? staged : path
        unlink(staged)  // left by a daemon of the same pid that died here (a reboot)
        let addr = UnixSocketAddress(path: bound)!
        // Create the file with no access, then set the mode: no window where it is wider than configured.
        let oldMask = umask(0o777)
        let rc = addr.bind(fd)
        let bindErr = errno
        umask(oldMask)
        guard rc == 0 else { close(fd); throw StartError.system("bind \(bound)", bindErr) }
        func fail(_ what: String, _ e: Int32) -> StartError {
            close(fd); unlink(bound); return StartError.system(what, e)
        }
        if let g = config.group {
            guard let gr = getgrnam(g) else { throw fail("group \(g)", ENOENT) }
            if chown(bound, uid_t.max, gr.pointee.gr_gid) != 0 { throw fail("chown \(bound)", errno) }
        }
        if chmod(bound, mode_t(config.mode)) != 0 { throw fail("chmod \(bound)", errno) }
        guard listen(fd, 256) == 0 else { throw fail("listen", errno) }
        if bound != path && rename(bound, path) != 0 { throw fail("rename \(bound) to \(path)", errno) }
        return fd
    }

    /// Removes a socket file nobody answers on; refuses a live one or a non-socket.
    func removeStaleSocket(at path: String) throws {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        guard (st.st_mode & S_IFMT) == S_IFSOCK else { throw StartError.notASocket(path) }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(probe) }
        if UnixSocketAddress(path: path)?.connect(probe) == 0 { throw StartError.inUse(path) }
        unlink(path)
    }
}

/// Reads command lines from one client and hands them to the hub.
/// Lives in its channel's pipeline, on the loop: not `Sendable`.
final class ClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let id: Int
    let hub: Hub
    let logger: Logger
    /// The session's own descriptor for the socket (a duplicate of NIO's), and the peer's credentials.
    let writeFD: CInt
    let credentials: ClientSession.Credentials?
    /// The connection's place under `[socket] max_clients`, given back when the channel ends.
    let slot: ClientSlot
    /// The settings in force now (a reload may change them).
    var config: Configuration.Socket { hub.socketConfig }
    var session: ClientSession?
    /// Splits the client's bytes into lines; over-long ones are answered with an error and skipped.
    private var framer = LineFramer(maxLineBytes: 0)

    init(id: Int, hub: Hub, logger: Logger, writeFD: CInt, credentials: ClientSession.Credentials?, slot: ClientSlot) {
        self.id = id; self.hub = hub; self.logger = logger; self.writeFD = writeFD; self.credentials = credentials
        self.slot = slot
    }

    func channelActive(context: ChannelHandlerContext) {
        let trusted = credentials.map { isTrusted($0) } ?? false
        let s = ClientSession(
            id: id, context: context, fd: writeFD, hub: hub, credentials: credentials, trusted: trusted,
            attitudeHz: config.attitudeHz, queueLimit: config.queueLines, queueByteLimit: config.queueBytes)
        session = s
        hub.add(s)
        s.reply(hub.hello(for: s))
        context.fireChannelActive()
    }

    /// A channel that never became active (closed during setup) still owns the duplicate.
    func handlerRemoved(context: ChannelHandlerContext) {
        if session == nil { close(writeFD) }
        slot.release()
    }

    /// root, the daemon's own user, and the configured uids/gids may change state.
    func isTrusted(_ c: ClientSession.Credentials) -> Bool { SocketTrust.isTrusted(c, config) }

    func channelInactive(context: ChannelHandlerContext) {
        if let s = session {
            hub.remove(s)
            s.ended()
        }
        slot.release()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buf = unwrapInboundIn(data)
        guard let s = session, !s.isClosing else { return }
        // A reload may change the limit. `room.show` may always be as long as its view allows:
        // framed up to that, and every other command held to `max_line_bytes` once parsed
        // (`line`), so its error carries the request's id.
        framer.maxLineBytes = max(config.maxLineBytes, Self.longestRoomShowLine)
        framer.feed(buf.readableBytesView) { piece in
            switch piece {
            case .line(let bytes): line(bytes, session: s)
            case .tooLong:
                bad(
                    s,
                    ProtocolError(
                        .lineTooLong,
                        "line longer than \(max(config.maxLineBytes, Self.longestRoomShowLine)) bytes; skipped up to the next newline"
                    ))
            }
            return context.channel.isActive && !s.isClosing
        }
    }

    /// Replies written while handling a batch of reads go out now: the batch may end with the
    /// client's EOF, on which NIO closes the channel and would drop writes still unflushed.
    func channelReadComplete(context: ChannelHandlerContext) {
        session?.flushNow()
        context.fireChannelReadComplete()
    }

    private func line(_ line: [UInt8], session s: ClientSession) {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }  // blank lines are ignored
        switch Request.parse(line) {
        case .success(let r) where line.count > config.maxLineBytes && r.command.name != "room.show":
            bad(s, tooLong, id: r.id, cmd: r.command.name)
        case .failure(let e) where line.count > config.maxLineBytes:
            bad(s, tooLong, id: e.id, cmd: e.cmd)
        case .success(let r):
            if r.command.isMutating && !s.trusted {
                bad(
                    s,
                    ProtocolError(
                        .forbidden,
                        "\(r.command.name) changes state; this peer (uid \(s.credentials.map { String($0.uid) } ?? "?")) is not trusted by [socket] trusted_uids/trusted_gids"
                    ), id: r.id, cmd: r.command.name)
                return
            }
            hub.dispatch(r, from: s)
        case .failure(let e):
            bad(s, e.error, id: e.id, cmd: e.cmd)
        }
    }

    /// The longest line `room.show` needs: its view's bound (`CommandCatalogue`) and the command
    /// around it. (The bridge sends rooms of ~30 players, which passed the 4 KiB default.)
    static let longestRoomShowLine: Int = {
        guard case .object(let maxBytes) = CommandCatalogue.spec("room.show")?.argument("view")?.kind else { return 0 }
        return maxBytes + 1024
    }()

    /// The error of a line over `max_line_bytes` that was still read whole (see `channelRead`).
    private var tooLong: ProtocolError {
        ProtocolError(
            .lineTooLong,
            "line longer than \(config.maxLineBytes) bytes ([socket] max_line_bytes; only room.show may be longer)")
    }

    /// Replies with an error; disconnects a client that keeps sending bad lines.
    private func bad(_ s: ClientSession, _ e: ProtocolError, id: JSONValue? = nil, cmd: String? = nil) {
        s.reply(.reply(id: id, cmd: cmd, error: e))
        if e.code == .forbidden { return }
        s.badLines += 1
        if s.badLines >= config.maxBadLines {
            s.reply(
                .reply(
                    id: nil, cmd: nil,
                    error: ProtocolError(.badArgument, "too many bad lines (\(config.maxBadLines)); disconnecting")))
            logger.notice("client \(s.id) sent \(s.badLines) bad lines; disconnected")
            s.closeGracefully()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let e = event as? ChannelEvent, e == .inputClosed {
            session?.inputEnded()
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}

/// Numbers connections.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
}
