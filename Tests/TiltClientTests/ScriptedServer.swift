// SPDX-License-Identifier: Apache-2.0
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TiltClient

/// A stand-in for the daemon's socket: records every line it receives and answers as the test
/// scripts it.
final class ScriptedServer: Sendable {
    /// One accepted connection.
    struct Conn: Sendable {
        let channel: any Channel
        /// Sends `line` and a newline.
        func write(_ line: String) { channel.writeAndFlush(ByteBuffer(string: line + "\n"), promise: nil) }
        /// Hangs up.
        func close() { channel.close(promise: nil) }
    }

    private let listener: any Channel
    private let state: NIOLockedValueBox<(received: [String], conns: [any Channel])>

    private init(listener: any Channel, state: NIOLockedValueBox<(received: [String], conns: [any Channel])>) {
        self.listener = listener; self.state = state
    }

    /// Lines received so far, in order, on all connections.
    var received: [String] { state.withLockedValue { $0.received } }

    /// Listens on `path`; `onLine` sees each line received, `onConnect` each new connection.
    static func start(
        path: String, onLine: @escaping @Sendable (String, Conn) -> Void,
        onConnect: @escaping @Sendable (Conn) -> Void = { _ in }
    ) async throws -> ScriptedServer {
        let state = NIOLockedValueBox<(received: [String], conns: [any Channel])>(([], []))
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { ch in
                ch.eventLoop.makeCompletedFuture {
                    state.withLockedValue { $0.conns.append(ch) }
                    try ch.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maxLineBytes: 1 << 20)))
                    try ch.pipeline.syncOperations.addHandler(
                        Handler(state: state, onLine: onLine, onConnect: onConnect))
                }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
        return ScriptedServer(listener: listener, state: state)
    }

    /// Closes every accepted connection (the listener stays).
    func dropConnections() {
        for c in state.withLockedValue({ $0.conns }) { c.close(promise: nil) }
    }

    /// Closes the listener and every connection.
    func close() {
        dropConnections()
        listener.close(promise: nil)
    }

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let state: NIOLockedValueBox<(received: [String], conns: [any Channel])>
        let onLine: @Sendable (String, Conn) -> Void
        let onConnect: @Sendable (Conn) -> Void
        init(
            state: NIOLockedValueBox<(received: [String], conns: [any Channel])>,
            onLine: @escaping @Sendable (String, Conn) -> Void, onConnect: @escaping @Sendable (Conn) -> Void
        ) {
            self.state = state; self.onLine = onLine; self.onConnect = onConnect
        }

        func channelActive(context: ChannelHandlerContext) {
            onConnect(Conn(channel: context.channel))
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let line = String(buffer: unwrapInboundIn(data))
            state.withLockedValue { $0.received.append(line) }
            onLine(line, Conn(channel: context.channel))
        }
    }
}
