// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// Closes a TCP connection that has not sent its first request head within `timeout`.
///
/// Why: HTTP's own idle timeout (`http1.idleTimeout`) starts only once the first request is
/// read and turned out not to be a WebSocket upgrade; before that a connection could stay
/// silent for ever, and 128 silent connections (`[web] max_connections`) locked every browser
/// out of the page. The deadline counts from the connection, not from the last byte, so one
/// byte now and then does not hold it either. Once the head's blank line has been read, the
/// handler leaves the pipeline: HTTP's idle timeout and WebSocket's pings govern from there.
struct FirstRequestDeadline: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value
    let inner: HTTP1WebSocketUpgradeChannel
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeout = self.timeout
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(FirstHeadDeadlineHandler(timeout: timeout), position: .first)
        }.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async { await inner.handle(value: value, logger: logger) }
}

/// The byte-level half of `FirstRequestDeadline`: watches for the end of the first request
/// head (`\r\n\r\n`), closing the connection if it has not come by the deadline.
final class FirstHeadDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// The last bytes read, to find the blank line across reads.
    private var last: UInt32 = 0

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        var done = false
        for b in buffer.readableBytesView where !done {
            last = last << 8 | UInt32(b)
            done = last == 0x0D0A_0D0A
        }
        context.fireChannelRead(data)
        if done { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }
}

extension HTTPServerBuilder {
    /// `http1WebSocketUpgrade` whose connections must send their first request within
    /// `firstRequestTimeout` (`FirstRequestDeadline`) and are closed after `configuration`'s
    /// HTTP idle timeout between requests.
    static func http1WebSocketUpgrade<WSResponderBuilder: HTTPResponderBuilder>(
        webSocketRouter: WSResponderBuilder, configuration: HTTP1WebSocketUpgradeChannel.Configuration,
        firstRequestTimeout: TimeAmount
    ) -> HTTPServerBuilder where WSResponderBuilder.Responder.Context: WebSocketRequestContext {
        let webSocketResponder = webSocketRouter.buildResponder()
        return .init { responder in
            FirstRequestDeadline(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                timeout: firstRequestTimeout)
        }
    }
}
