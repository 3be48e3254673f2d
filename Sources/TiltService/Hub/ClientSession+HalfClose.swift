// SPDX-License-Identifier: Apache-2.0
import NIOCore
import TiltCore
import TiltProtocol

/// A client that writes its commands and then shuts down its write side (`socat` with a pipe,
/// `echo … | nc -U`) must still get every reply, also those answered off the loop (the store's:
/// `credits`, `history`, …). Before, the daemon ended the session at the client's EOF and a reply
/// that came later found no session. Now the channel allows the remote half-closure; the session
/// counts the requests handed to the engine and ends once the last is answered and written.
extension ClientSession {
    /// How long a half-closed client that does not read its replies may hold its session once
    /// every request is answered (its socket full): then it is closed, as any client's at EOF was.
    static let halfClosedDrainSeconds: Int64 = 10

    /// A request was handed to the engine: the session waits for its answer before ending.
    func beginRequest() { pendingReplies += 1 }

    /// The one answer to a request `beginRequest` counted: queued like any reply, then the
    /// session ends if the client has half-closed and nothing else is pending.
    public func answer(_ event: Event) {
        reply(event)
        if pendingReplies > 0 { pendingReplies -= 1 }
        if inputClosed && pendingReplies == 0 { flushNow() }
        endIfAnswered()
    }

    /// The peer shut down its write side (NIO's `inputClosed`): end now if nothing is pending,
    /// else when the last answer is out.
    func inputEnded() {
        guard !inputClosed else { return }
        inputClosed = true
        flushNow()
        endIfAnswered()
        guard !isClosing else { return }
        // Answers still due: they come (the engine answers every request) and `answer` ends the
        // session. A client that stops reading must not hold it forever once they are queued.
        scheduleHalfClosedTimeout()
    }

    /// Closes a half-closed session once every request is answered and the socket took every
    /// byte queued (a reply NIO still holds would be lost to a close now: it waits for its
    /// write's completion, which calls here again).
    func endIfAnswered() {
        guard inputClosed, pendingReplies == 0, !isClosing, descriptor >= 0 else { return }
        guard isDrained else { return }
        isClosing = true
        context.close(promise: nil)
    }

    /// Re-checks every `halfClosedDrainSeconds`: closes once the answers are queued and the
    /// client has had that long to read them.
    private func scheduleHalfClosedTimeout() {
        let ctx = context
        ctx.eventLoop.assumeIsolated().scheduleTask(in: .seconds(Self.halfClosedDrainSeconds)) { [weak self] in
            guard let self, !self.isClosing, self.descriptor >= 0 else { return }
            if self.pendingReplies == 0 {
                self.isClosing = true
                ctx.close(promise: nil)
            } else {
                self.scheduleHalfClosedTimeout()
            }
        }
    }

    /// Ends a misbehaving client without losing the replies already sent: half-close our side
    /// (the client reads them, then EOF) and close fully a little later. Closing at once while
    /// its garbage is still unread would make the kernel reset the connection and discard them.
    func closeGracefully(after seconds: Int64 = 2) {
        guard !isClosing else { return }
        isClosing = true
        flush()  // the replies just queued must go out before the half-close
        let ctx = context
        ctx.close(mode: .output, promise: nil)
        ctx.eventLoop.assumeIsolated().scheduleTask(in: .seconds(seconds)) { ctx.close(promise: nil) }
    }
}
