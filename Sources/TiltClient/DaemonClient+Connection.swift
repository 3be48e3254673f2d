// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOPosix
import TiltPlatform
import TiltProtocol

// The connection's life, on `eventLoop`: connect, send `watch`, read lines, and after a failure
// or a lost connection fail what waits and schedule the next attempt.
extension DaemonClient {
    func connect() {
        let loop = eventLoop
        let maxLine = options.maxLineBytes
        ClientBootstrap(group: loop)
            .connectTimeout(.nanoseconds(Int64(saturating: options.connectTimeout * 1e9)))
            .channelInitializer { ch in
                ch.eventLoop.makeCompletedFuture {
                    try ch.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maxLineBytes: maxLine)))
                    try ch.pipeline.syncOperations.addHandler(LineHandler(client: self))
                }
            }
            .connect(unixDomainSocketPath: options.socketPath)
            .hop(to: loop)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let ch):
                    if self.state.value.closed {
                        ch.close(promise: nil)
                        return
                    }
                    self.state.value.channel = ch
                    self.state.value.retry = self.options.minRetry
                    if let watch = self.options.watch {
                        var fields: JSONObject = ["cmd": "watch"]
                        for (k, v) in watch.entries { fields[k] = v }
                        // Its reply is this client's (matched by id), so it is not handed on.
                        _ = self.request(
                            fields, id: self.options.idPrefix + "watch", timeout: self.options.requestTimeout)
                    }
                    let waiters = self.state.value.connectWaiters
                    self.state.value.connectWaiters = []
                    self.onEvent(.connected)
                    for w in waiters { w.succeed() }
                case .failure(let e):
                    self.lost(
                        ConnectErrorText.connectFailure(e, path: self.options.socketPath), failing: .connectionLost)
                }
            }
    }

    func request(_ fields: JSONObject, id: String, timeout: Double) -> EventLoopFuture<ReplyBody> {
        guard let ch = state.value.channel else { return eventLoop.makeFailedFuture(Failure.notConnected) }
        var line = fields
        line["id"] = .string(id)
        let p = eventLoop.makePromise(of: ReplyBody.self)
        // The timer fails the request if no reply came; whichever comes first removes the entry.
        let timer = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(saturating: timeout * 1e9))) {
            if let w = self.state.value.pending.removeValue(forKey: id) { w.promise.fail(Failure.timedOut(timeout)) }
        }
        state.value.pending[id] = (p, timer)
        ch.writeAndFlush(Self.encode(line, allocator: ch.allocator)).hop(to: eventLoop).assumeIsolated().whenFailure {
            _ in
            guard let w = self.state.value.pending.removeValue(forKey: id) else { return }
            w.timer.cancel()
            w.promise.fail(Failure.connectionLost)
        }
        return p.futureResult
    }

    /// One framed line (without its newline).
    func received(_ buffer: ByteBuffer) {
        guard let line = DaemonLine(bytes: buffer.readableBytesView) else {
            onEvent(.unparsable(String(buffer: buffer)))
            return
        }
        if let id = line.replyID?.stringValue, id.hasPrefix(options.idPrefix),
            let w = state.value.pending.removeValue(forKey: id)
        {
            w.timer.cancel()
            if let reply = ReplyBody(line.object) {
                w.promise.succeed(reply)
            } else {
                w.promise.fail(Failure.connectionLost)
            }
            return
        }
        onEvent(.line(line))
    }

    /// The connection (or an attempt) ended: fail what waits, then retry unless closed.
    func lost(_ reason: String, failing error: Failure) {
        state.value.channel = nil
        let pending = state.value.pending
        state.value.pending = [:]
        for w in pending.values {
            w.timer.cancel()
            w.promise.fail(state.value.closed ? Failure.closed : error)
        }
        let retrying = !state.value.closed && options.reconnect
        if !retrying {
            let waiters = state.value.connectWaiters
            state.value.connectWaiters = []
            let why: Failure = state.value.closed ? .closed : .cannotConnect(reason)
            state.value.gaveUp = why
            for w in waiters { w.fail(why) }
        }
        guard retrying else {
            onEvent(.disconnected(reason: reason, retryIn: nil))
            return
        }
        let retry = state.value.retry
        state.value.retry = min(retry * 2, options.maxRetry)
        onEvent(.disconnected(reason: reason, retryIn: retry))
        state.value.retryTimer = eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(Int64(saturating: retry * 1e9))
        ) {
            guard !self.state.value.closed else { return }
            self.connect()
        }
    }
}

/// Hands framed lines and the end of the connection to the client, on its loop.
final class LineHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let client: DaemonClient
    private var reason: String?

    init(client: DaemonClient) { self.client = client }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        client.received(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.lost(reason ?? "the daemon closed the connection", failing: .connectionLost)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        reason =
            error is LineFrameDecoder.LineTooLong
            ? "the daemon sent a line longer than \(client.options.maxLineBytes) bytes" : "\(error)"
        context.close(promise: nil)
    }
}
