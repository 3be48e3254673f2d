// SPDX-License-Identifier: Apache-2.0
/// Splits a byte stream into the protocol's lines (docs/protocol.md: one JSON object per line,
/// LF-terminated; a CR before the LF is dropped), with a bound on a line's length. The one line
/// framer of the package: the daemon's socket server, `DaemonClient` (through
/// `LineFrameDecoder`) and the tests' blocking client all frame with it.
///
/// A line longer than `maxLineBytes` is reported once, as `.tooLong`, and skipped up to its
/// newline: the bytes are not kept, so a peer cannot grow the buffer without bound, and the
/// stream stays in step (the next line is whole). What a caller does then is its policy: the
/// daemon replies with an error and reads on; the client closes the connection.
///
/// Pure (no I/O): feed it what the socket gave, in any chunks.
public struct LineFramer: Sendable {
    /// One result of feeding bytes.
    public enum Piece: Sendable, Equatable {
        /// A whole line, without its LF (and without a CR before it).
        case line([UInt8])
        /// A line longer than `maxLineBytes`: reported as soon as it is known, then skipped up to
        /// and including its newline.
        case tooLong
    }

    /// The longest line accepted, in bytes (without its newline).
    public var maxLineBytes: Int
    /// The start of a line whose newline has not come yet.
    private var pending: [UInt8] = []
    /// True while skipping the rest of an over-long line.
    private var discarding = false

    /// A framer accepting lines of up to `maxLineBytes` bytes.
    public init(maxLineBytes: Int) { self.maxLineBytes = maxLineBytes }

    /// Bytes received and not yet part of a whole line (an unterminated line at the end of a
    /// stream). Empty while an over-long line is skipped.
    public var remainder: [UInt8] { pending }

    /// Feeds the next bytes of the stream and hands each piece to `each`, in order. `each`
    /// returns false to stop (the connection is closing): the bytes after that piece are dropped.
    public mutating func feed(_ bytes: some Collection<UInt8>, _ each: (Piece) throws -> Bool) rethrows {
        var i = bytes.startIndex
        while i != bytes.endIndex {
            guard let nl = bytes[i...].firstIndex(of: 0x0A) else {
                // No newline in the rest: keep it, unless it makes the line too long.
                if discarding { return }
                pending.append(contentsOf: bytes[i...])
                if pending.count > maxLineBytes {
                    pending.removeAll(keepingCapacity: false)
                    discarding = true
                    _ = try each(.tooLong)
                }
                return
            }
            let piece = take(bytes[i..<nl])
            i = bytes.index(after: nl)
            if let piece, try !each(piece) { return }
        }
    }

    /// Ends the line that `tail` completes: nil when it was the rest of a skipped line.
    private mutating func take(_ tail: some Collection<UInt8>) -> Piece? {
        if discarding {
            discarding = false
            return nil
        }
        var line = pending
        pending.removeAll(keepingCapacity: true)
        line.append(contentsOf: tail)
        if line.last == 0x0D { line.removeLast() }
        return line.count > maxLineBytes ? .tooLong : .line(line)
    }

    /// Forgets a pending partial line (a stream that ends, or a peer that starts over).
    public mutating func reset() {
        pending.removeAll(keepingCapacity: false)
        discarding = false
    }
}
