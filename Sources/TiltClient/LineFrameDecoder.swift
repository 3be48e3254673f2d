// SPDX-License-Identifier: Apache-2.0
import NIOCore
import TiltProtocol

/// `LineFramer` as a NIO decoder: each line of the stream (without its newline) goes on down the
/// pipeline as one `ByteBuffer`. A line longer than the framer's bound fails the channel with
/// `LineFrameDecoder.LineTooLong` (a client's policy: a line that long is not the daemon speaking).
/// An unterminated line at the end of the stream is dropped, as the daemon's server drops one.
public struct LineFrameDecoder: ByteToMessageDecoder {
    /// The decoder's output: one line.
    public typealias InboundOut = ByteBuffer

    /// Raised (through `errorCaught`) for a line over the bound.
    public struct LineTooLong: Error, Equatable {
        /// The bound that was exceeded, bytes.
        public var maxLineBytes: Int
    }

    private var framer: LineFramer

    /// A decoder for lines of up to `maxLineBytes` bytes.
    public init(maxLineBytes: Int) { framer = LineFramer(maxLineBytes: maxLineBytes) }

    /// Frames what has arrived; whole lines go on at once.
    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard buffer.readableBytes > 0 else { return .needMoreData }
        var tooLong = false
        framer.feed(buffer.readableBytesView) { piece in
            switch piece {
            case .line(let bytes):
                context.fireChannelRead(Self.wrapInboundOut(context.channel.allocator.buffer(bytes: bytes)))
                return true
            case .tooLong:
                tooLong = true
                return false
            }
        }
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        if tooLong { throw LineTooLong(maxLineBytes: framer.maxLineBytes) }
        return .needMoreData
    }

    /// At the end of the stream: the last whole lines; an unterminated rest is dropped.
    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        _ = try decode(context: context, buffer: &buffer)
        framer.reset()
        return .needMoreData
    }
}
