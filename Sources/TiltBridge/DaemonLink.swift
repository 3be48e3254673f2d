import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TiltService

/// The bridge's connection to the daemon's Unix socket: JSON lines in, commands out.
/// Everything it learns becomes an event handed to `onEvent` (in order, from one NIO thread);
/// reconnecting is the bridge's decision (`connect` again after a backoff).
final class DaemonLink: Sendable {
    /// What the link reports.
    enum Event: Sendable {
        case connected
        /// One line from the daemon (without its newline).
        case line([UInt8])
        /// The connection failed or ended, with the reason.
        case disconnected(String)
    }

    /// Longest line accepted from the daemon: a `status` reply with a full game state is a few
    /// KB; anything beyond this is not the daemon speaking.
    static let maxLineBytes = 1 << 20

    let path: String
    private let group: any EventLoopGroup
    private let onEvent: @Sendable (Event) -> Void
    private let channel = NIOLockedValueBox<(any Channel)?>(nil)

    init(path: String, group: any EventLoopGroup, onEvent: @escaping @Sendable (Event) -> Void) {
        self.path = path; self.group = group; self.onEvent = onEvent
    }

    /// Starts one connection attempt; reports `.connected` or `.disconnected`.
    func connect() {
        let onEvent = self.onEvent
        let box = channel
        ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelInitializer { ch in
                ch.eventLoop.makeCompletedFuture {
                    try ch.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineSplitter(maxBytes: Self.maxLineBytes)))
                    try ch.pipeline.syncOperations.addHandler(LineHandler(onEvent: onEvent))
                }
            }
            .connect(unixDomainSocketPath: path)
            .whenComplete { result in
                switch result {
                case .success(let ch):
                    box.withLockedValue { $0 = ch }
                    onEvent(.connected)
                case .failure(let e):
                    onEvent(.disconnected("cannot connect to \(self.path): \(ConnectErrorText.describe(e))"))
                }
            }
    }

    /// Sends one command line (a newline is added). Dropped when not connected: every command
    /// the bridge sends is either repeated on the next connect or answered by the bridge itself.
    func send(_ line: String) {
        guard let ch = channel.withLockedValue({ $0 }) else { return }
        var buf = ch.allocator.buffer(capacity: line.utf8.count + 1)
        buf.writeString(line)
        buf.writeInteger(UInt8(ascii: "\n"))
        ch.writeAndFlush(buf, promise: nil)
    }

    /// Whether a connection is up.
    var isConnected: Bool { channel.withLockedValue { $0?.isActive ?? false } }

    /// Closes the connection (no event follows for a close we asked for... but the handler's
    /// `channelInactive` still reports it, which the bridge ignores while stopping).
    func close() {
        channel.withLockedValue { $0 }?.close(promise: nil)
    }
}

/// Splits the byte stream at newlines; a line longer than `maxBytes` is an error that closes
/// the connection (the daemon never sends one).
private struct LineSplitter: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    let maxBytes: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if let nl = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = nl - buffer.readerIndex
            let line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(Self.wrapInboundOut(line))
            return .continue
        }
        if buffer.readableBytes > maxBytes { throw LineTooLong() }
        return .needMoreData
    }

    struct LineTooLong: Error, CustomStringConvertible {
        var description: String { "the daemon sent a line longer than \(DaemonLink.maxLineBytes) bytes" }
    }
}

/// Hands lines and the end of the connection to the link's owner.
private final class LineHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let onEvent: @Sendable (DaemonLink.Event) -> Void
    init(onEvent: @escaping @Sendable (DaemonLink.Event) -> Void) { self.onEvent = onEvent }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buf = unwrapInboundIn(data)
        onEvent(.line(Array(buf.readableBytesView)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        onEvent(.disconnected("the daemon closed the connection"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        onEvent(.disconnected("\(error)"))
        context.close(promise: nil)
    }
}
