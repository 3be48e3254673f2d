// SPDX-License-Identifier: Apache-2.0
import Glibc
import SocketWriteRing

/// One loop turn's line for the clients that keep up, written from the shared bytes straight to
/// their sockets: the hub's fast path for attitude lines.
///
/// Why: at sample rate nearly every client has nothing queued when a line comes, and one line
/// goes to each of them. Through the queues, each client was touched three times per line (queue
/// the line, describe the write, take the result), with a reference counted in and out; at 1000
/// clients that was 0.7 µs per client per line, a third of a socket write. Here a client that
/// takes the line joins the batch (`ClientSession.claimDirect`, while `Hub.publish` has it at
/// hand anyway), the batch keeps the socket, and the write and its result need nothing of the
/// client unless the socket did not take the whole line (`ClientSession.directWriteFailed`).
///
/// Order: a client in the batch whose next line goes the slow way (a reply, a second line in the
/// same turn, a flush, its end) first takes its line back out of the batch into its queue
/// (`cancel`), so it still gets every line once, in order, and one write per turn. (The hub also
/// writes the batch before the turn's queued clients, so order would hold without it; the
/// write per turn would not.)
///
/// The targets hold their sessions `unowned(unsafe)`: a session leaves the batch when it ends
/// (`ClientSession.ended`, before the hub lets it go), so a target still in the batch has one.
/// On the hub's loop only, like the hub.
struct DirectWrites {
    /// A client in the batch: where its line goes.
    struct Target {
        unowned(unsafe) let session: ClientSession
        let descriptor: CInt
        /// Its slot in the ring's file table when it joined (−1: the descriptor).
        var slot: Int32
        /// Taken back by the session (`cancel`), or already handed to the ring.
        var done = false
    }

    /// The batch being gathered: a session whose `directBatch` is this number is in it. Taking a
    /// batch starts the next one, which ends every session's membership without touching it.
    private(set) var batch: UInt64 = 1
    /// The line of the batch being gathered (nil: none yet this turn).
    private(set) var line: SharedLine?
    private(set) var targets: [Target] = []

    /// Adds `session` (which has claimed `targets.count`) to the batch of `line`.
    mutating func append(_ session: ClientSession, line: SharedLine) {
        if self.line == nil { self.line = line }
        targets.append(Target(session: session, descriptor: session.descriptor, slot: session.registeredSlot))
    }

    /// Takes target `i` out of the batch being gathered; returns the line it was to get (nil:
    /// it was already out).
    mutating func cancel(at i: Int32) -> SharedLine? {
        let i = Int(i)
        guard i < targets.count, !targets[i].done else { return nil }
        targets[i].done = true
        return line
    }

    /// Ends the batch being gathered: its line and targets move to `taken` (emptied first),
    /// and the next batch starts empty. Returns the line (nil: no batch this turn).
    mutating func take(into taken: inout [Target]) -> SharedLine? {
        taken.removeAll(keepingCapacity: true)
        swap(&targets, &taken)
        batch &+= 1
        defer { line = nil }
        return line
    }

    /// The ring is gone: its slots with it, so targets write to their descriptors.
    mutating func forgetSlots() {
        for i in targets.indices { targets[i].slot = -1 }
    }
}

extension Hub {
    /// Writes the taken batch (`directTaken`): `line` to every target still in it, with `ring`
    /// (one system call per `ring.entries`, with the turn's queued clients) or with write(2). A
    /// target whose socket did not take the whole line is handed back to its session. Throws
    /// when the ring failed; the targets it had not taken yet are left not done, for
    /// `writeDirect(_:)`.
    func writeDirect(_ line: SharedLine, through ring: SocketWriteRing) throws(SocketWriteRing.Failure) {
        let bytes = UnsafeRawBufferPointer(line.bytes)
        let failed = { (tag: Int, result: Int32) in
            if result != Int32(bytes.count) { self.directTaken[tag].session.directWriteFailed(line, result: result) }
        }
        for i in directTaken.indices where !directTaken[i].done {
            let t = directTaken[i]
            if !ring.addSend(bytes, descriptor: t.descriptor, slot: t.slot, tag: i) {
                try ring.submit(sent: failed)
                _ = ring.addSend(bytes, descriptor: t.descriptor, slot: t.slot, tag: i)
            }
            directTaken[i].done = true
        }
        try ring.submit(sent: failed)
    }

    /// Writes `line` with write(2) to every target of the taken batch not yet done (no ring, or
    /// after it failed).
    func writeDirect(_ line: SharedLine) {
        let bytes = UnsafeRawBufferPointer(line.bytes)
        for i in directTaken.indices where !directTaken[i].done {
            directTaken[i].done = true
            let n = write(directTaken[i].descriptor, bytes.baseAddress, bytes.count)
            if n != bytes.count {
                directTaken[i].session.directWriteFailed(line, result: n < 0 ? -errno : Int32(n))
            }
        }
    }
}
