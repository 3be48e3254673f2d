// SPDX-License-Identifier: Apache-2.0
internal import CLibURing
import Glibc
import TiltPlatform

/// One socket's queued output, as `SocketWriteRing` writes it: the daemon's `ClientSession`.
public protocol RingWriter: AnyObject {
    /// The socket (non-blocking) the next write goes to.
    var descriptor: CInt { get }
    /// Describes the next write in `iov` (room for `SocketWriteRing.iovecsPerWrite`) and returns
    /// the iovec count (≥ 1) and the bytes offered. The bytes must stay put until `finishWrite`.
    func nextWrite(into iov: UnsafeMutablePointer<Glibc.iovec>) -> (count: Int, wanted: Int)
    /// Takes the write's result: `n` bytes, or −1 and `error` (an errno). Returns whether more
    /// is queued that should be written now.
    func finishWrite(_ n: Int, error: Int32, wanted: Int) -> Bool
    /// Writes the rest itself, with write(2)/writev(2), until it is done or the socket is full.
    func writeQueued()
    /// The socket's slot in the ring's table of registered files, or −1. Kept by the writer for
    /// the ring (`add` sets it); see `SocketWriteRing.release`.
    var registeredSlot: Int32 { get set }
}

/// Submits one event-loop turn's socket writes, one per socket, with one system call per
/// `entries` sockets (io_uring), where a write(2) per socket would enter the kernel each time.
///
/// Why: at sample rate each client of the daemon gets about one line per turn, so fan-out is
/// one write per client per sample, and entering and leaving the kernel was about a third of a
/// 2.7–3 µs Unix-socket write on a 2-core VM (docs/protocol.md, "Fan-out"). The writes are
/// the same: `send`/`sendmsg` with MSG_DONTWAIT, so a full socket answers EAGAIN at once, as a
/// non-blocking write(2) does, and nothing is ever left for a kernel worker.
///
/// Two kinds of request share a submission: a writer's (`add`: a client's queue, which describes
/// its write and takes the result itself) and a plain send (`addSend`: one buffer to one socket,
/// the result handed back by tag), which the daemon uses for a line going to every client that
/// has nothing else queued, so that the client is not asked anything.
///
/// Every request so completes while it is submitted, and `submit` collects all of them before
/// it returns: the writers' bytes and the iovecs pointing at them are only read during the call.
/// Where io_uring is unavailable (an old kernel, a seccomp filter, `kernel.io_uring_disabled`),
/// `make()` says why and the caller writes with write(2) instead.
///
/// Registered files: each socket is entered once in the ring's file table (`register`), and
/// its writes name the slot (IOSQE_FIXED_FILE), which spares the kernel a descriptor lookup and
/// a reference count per write (`fget`, about 6 % of the daemon's time at 1000 clients). The table
/// holds a reference to the socket: the peer sees EOF only when the slot is released as well as
/// the descriptors closed, so the writer's owner must `release` it when the connection ends.
/// When the table is full (or the kernel has none), writes use the descriptor.
///
/// Not thread-safe: one thread (the daemon's event loop) owns it.
public final class SocketWriteRing {
    /// IOSQE_FIXED_FILE: the request's descriptor is a slot of the registered-file table.
    private static let fixedFile = UInt8(1 << IOSQE_FIXED_FILE_BIT)
    /// Most iovecs one write may use.
    public static let iovecsPerWrite = 64
    /// Sockets per system call. 256 keeps the rings about 40 KB.
    public let entries: Int
    private let ring: UnsafeMutablePointer<io_uring>
    /// Iovecs and message headers of the requests in flight (multi-line writes use them).
    private let iovecs: UnsafeMutablePointer<iovec>
    private let iovecCapacity: Int
    private let headers: UnsafeMutablePointer<msghdr>
    private let completions: UnsafeMutablePointer<UnsafeMutablePointer<io_uring_cqe>?>
    /// Writer and bytes offered of each writer's request in flight (its user data is the index).
    private var inFlight: [(writer: any RingWriter, wanted: Int)] = []
    /// The user data of every request in flight, in submission order: a writer's index, or a
    /// plain send's tag with `sendBit` set (`addSend`).
    private var order: [UInt64] = []
    private static let sendBit: UInt64 = 1 << 63
    private var iovecsUsed = 0
    /// Free slots of the registered-file table, taken from the end (empty: none registered).
    private var freeSlots: [Int32] = []

    private init(ring: UnsafeMutablePointer<io_uring>, entries: Int) {
        self.ring = ring
        self.entries = entries
        iovecCapacity = entries * 4
        iovecs = .allocate(capacity: iovecCapacity)
        headers = .allocate(capacity: entries)
        completions = .allocate(capacity: entries)
        inFlight.reserveCapacity(entries)
        order.reserveCapacity(entries)
    }

    deinit {
        io_uring_queue_exit(ring)
        ring.deallocate()
        iovecs.deallocate(); headers.deallocate(); completions.deallocate()
    }

    /// A ring, or why there is none (io_uring_setup's error).
    /// `files`: the size of the registered-file table (0: none).
    public static func make(entries: Int = 256, files: Int = 4096) -> Result<SocketWriteRing, Failure> {
        let ring = UnsafeMutablePointer<io_uring>.allocate(capacity: 1)
        ring.initialize(to: io_uring())
        // SUBMIT_ALL (Linux 5.18): a request that fails early (say, a socket closed under it)
        // completes with its error and the rest are still submitted; without it the kernel
        // stops there, which `submit` would take for a broken ring. Older kernels: without.
        var rc = io_uring_queue_init(UInt32(entries), ring, UInt32(IORING_SETUP_SUBMIT_ALL))
        if rc == -EINVAL { rc = io_uring_queue_init(UInt32(entries), ring, 0) }
        guard rc == 0 else {
            ring.deallocate()
            return .failure(Failure(call: "io_uring_setup", code: -rc))
        }
        let made = SocketWriteRing(ring: ring, entries: entries)
        // A sparse table (Linux 5.19), no larger than the open-file limit (the kernel's rule);
        // without one every write names its descriptor.
        var limit = rlimit()
        let size =
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0
            ? min(files, Int(clamping: limit.rlim_cur)) : 0
        if size > 0 && io_uring_register_files_sparse(ring, UInt32(size)) == 0 {
            made.freeSlots = (0..<Int32(size)).reversed()
        }
        return .success(made)
    }

    /// Slots of the registered-file table not in use (0 when the kernel gave no table).
    public var freeFileSlots: Int { freeSlots.count }

    /// Enters `w`'s socket in the file table, if there is a free slot and it is not in it yet
    /// (`add` does it too). Until `release`, the table holds the socket open.
    public func register(_ w: any RingWriter) {
        guard w.registeredSlot < 0, let slot = freeSlots.last else { return }
        var fd = w.descriptor
        guard fd >= 0, io_uring_register_files_update(ring, UInt32(slot), &fd, 1) == 1 else { return }
        freeSlots.removeLast()
        w.registeredSlot = slot
    }

    /// Takes `w`'s socket out of the file table, if it is in it. Call it when the connection
    /// ends (before or after closing the descriptor): until then the socket stays open.
    public func release(_ w: any RingWriter) {
        let slot = w.registeredSlot
        guard slot >= 0 else { return }
        w.registeredSlot = -1
        var none: Int32 = -1
        // Fails only on a slot not registered, which `add` never leaves behind.
        _ = io_uring_register_files_update(ring, UInt32(slot), &none, 1)
        freeSlots.append(slot)
    }

    /// A failed io_uring call and its errno.
    public struct Failure: Error, CustomStringConvertible {
        /// The call that failed.
        public let call: String
        /// Its errno.
        public let code: Int32
        /// "call: reason" (the C library's text for the errno).
        public var description: String { SystemError(call, code: code).description }
    }

    /// Queues `w`'s next write; false (and nothing queued) when the ring is full: `submit`
    /// first. A writer's bytes must not change until `submit` returns.
    public func add(_ w: any RingWriter) -> Bool {
        guard order.count < entries, iovecsUsed + Self.iovecsPerWrite <= iovecCapacity else { return false }
        prepare(w)
        return true
    }

    /// Queues one send of `bytes` to a socket: its registered slot, or `descriptor` when `slot`
    /// is −1. `submit` hands `tag` and the result (bytes taken, or −errno) to its `sent`.
    /// False (and nothing queued) when the ring is full. The bytes must stay put until `submit`
    /// returns. For the hub's common case, one line to a client with nothing else queued: no
    /// writer is asked for its iovecs or told the result, so the client's memory is not touched.
    public func addSend(_ bytes: UnsafeRawBufferPointer, descriptor: CInt, slot: Int32, tag: Int) -> Bool {
        guard order.count < entries else { return false }
        // Never nil: at most `entries` are prepared between submissions.
        let sqe = io_uring_get_sqe(ring)!
        io_uring_prep_send(sqe, slot >= 0 ? slot : descriptor, bytes.baseAddress, bytes.count, Self.sendFlags)
        finish(sqe, slot: slot, data: UInt64(tag) | Self.sendBit)
        return true
    }

    /// MSG_DONTWAIT: a full socket answers EAGAIN at once; MSG_NOSIGNAL: a gone peer is EPIPE.
    private static let sendFlags = Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)

    /// Writes what `add` and `addSend` queued, with one system call, and hands each writer its
    /// result (a writer whose `finishWrite` asks for more writes the rest itself) and each plain
    /// send's to `sent`. Throws only when the ring failed: every queued writer not yet answered
    /// has then written itself (`writeQueued`), every such send was reported as an interruption (not
    /// sent), and the ring should not be used again.
    public func submit(sent: (_ tag: Int, _ result: Int32) -> Void = { _, _ in }) throws(Failure) {
        defer {
            inFlight.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
            iovecsUsed = 0
        }
        guard !order.isEmpty else { return }
        let submitted = Int(io_uring_submit_and_wait(ring, UInt32(order.count)))
        guard submitted == order.count else {
            // Those submitted still complete; the others never reached the kernel.
            let done = max(0, submitted)
            try? reap(done, sent: sent)
            for data in order[done...] {
                if data & Self.sendBit != 0 {
                    sent(Int(data & ~Self.sendBit), -SystemError.interruptedCode)
                } else {
                    inFlight[Int(data)].writer.writeQueued()
                }
            }
            throw Failure(call: "io_uring_enter", code: submitted < 0 ? Int32(-submitted) : EIO)
        }
        try reap(order.count, sent: sent)
    }

    /// Fills the next submission entry with `w`'s next write.
    private func prepare(_ w: any RingWriter) {
        // Never nil: at most `entries` are prepared between submissions.
        let sqe = io_uring_get_sqe(ring)!
        let flags = Self.sendFlags
        let iov = iovecs + iovecsUsed
        let (count, wanted) = w.nextWrite(into: iov)
        if w.registeredSlot < 0 { register(w) }
        let slot = w.registeredSlot
        let target = slot >= 0 ? slot : w.descriptor
        if count == 1 {
            io_uring_prep_send(sqe, target, iov.pointee.iov_base, iov.pointee.iov_len, flags)
        } else {
            let header = headers + inFlight.count
            header.initialize(to: msghdr())
            header.pointee.msg_iov = iov
            header.pointee.msg_iovlen = count
            io_uring_prep_sendmsg(sqe, target, header, UInt32(bitPattern: flags))
            iovecsUsed += count
        }
        finish(sqe, slot: slot, data: UInt64(inFlight.count))
        inFlight.append((w, wanted))
    }

    /// Completes a prepared entry, either kind: names the file-table slot (when `slot` ≥ 0) and
    /// tags the entry with `data`, in submission order.
    private func finish(_ sqe: UnsafeMutablePointer<io_uring_sqe>, slot: Int32, data: UInt64) {
        if slot >= 0 { sqe.pointee.flags |= Self.fixedFile }
        io_uring_sqe_set_data64(sqe, data)
        order.append(data)
    }

    /// Collects `count` completions and hands each writer (or `sent`) its result.
    private func reap(_ count: Int, sent: (Int, Int32) -> Void) throws(Failure) {
        var done = 0
        while done < count {
            let got = Int(io_uring_peek_batch_cqe(ring, completions, UInt32(min(count - done, entries))))
            if got == 0 {
                // Not expected (everything completes inline), but wait rather than lose one.
                var cqe: UnsafeMutablePointer<io_uring_cqe>?
                let rc = io_uring_wait_cqe(ring, &cqe)
                if rc < 0 && !SystemError.isInterruption(-rc) { throw Failure(call: "io_uring_wait_cqe", code: -rc) }
                continue
            }
            for i in 0..<got {
                let cqe = completions[i]!
                let data = cqe.pointee.user_data
                if data & Self.sendBit != 0 {
                    sent(Int(data & ~Self.sendBit), cqe.pointee.res)
                    continue
                }
                let (w, wanted) = inFlight[Int(data)]
                let n = Int(cqe.pointee.res)
                if w.finishWrite(n < 0 ? -1 : n, error: n < 0 ? Int32(-n) : 0, wanted: wanted) { w.writeQueued() }
            }
            io_uring_cq_advance(ring, UInt32(got))
            done += got
        }
    }
}
