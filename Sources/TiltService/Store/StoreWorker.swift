// SPDX-License-Identifier: Apache-2.0
import DequeModule
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import Synchronization
import TiltCore
import TiltPlatform

/// Runs store operations on one serial queue, off the event loop, and hands results back to
/// the loop. SQLite commits (fsync) take milliseconds; the loop serves clients meanwhile.
///
/// The store is opened lazily and reopened after a failure, so a state directory that is
/// missing or full at start does not stop the daemon: the failing operation gets an error
/// (and clients a `status` event), and the next one tries again.
///
/// Writes go before reads, and reads are bounded: any client may ask `history` with `n` 1000
/// in a loop (an unpaired browser too, through `tiltd web`), and with one FIFO queue every
/// credit and round committed behind all of those reads. Now each operation waits in one of two
/// lists (`pending`); every block on the queue runs the oldest write, else the oldest read, and
/// at most `maxQueuedReads` reads wait: one more fails at once with `Busy` (`unavailable`).
public final class StoreWorker: Sendable {
    let path: String?
    let logger: Logger
    /// The serial queue of every store operation (and of the kept head frame's writes, so that
    /// `drain` at shutdown waits for them too).
    let queue = DispatchQueue(label: "tiltd.store")
    /// Operations waiting for the queue: writes first (`runNext`).
    private let pending = Mutex(Pending())
    private struct Pending {
        var writes = Deque<@Sendable () -> Void>()
        var reads = Deque<@Sendable () -> Void>()
    }
    private let readLimit = Atomic<Int>(64)
    /// Reads that may wait at once (`[store] max_queued_reads`); more fail with `Busy`.
    public var maxQueuedReads: Int {
        get { readLimit.load(ordering: .relaxed) }
        set { readLimit.store(max(1, newValue), ordering: .relaxed) }
    }

    /// Too many reads wait already: this one is refused (the client may ask again).
    public struct Busy: Error, CustomStringConvertible {
        /// The bound in force.
        public var limit: Int
        /// Why, for the reply.
        public var description: String {
            "the store is busy: \(limit) reads are waiting ([store] max_queued_reads); ask again later"
        }
    }
    /// The open store. Used only on `queue`, so the lock is never contended; it lets the
    /// compiler check that.
    private let store = Mutex<Store?>(nil)

    /// What the engine starts from.
    public struct Seeds: Sendable {
        /// The highest round number stored (round ids go on from it).
        public var lastRound: Int?
        /// The last credit time per fence key (cooldowns survive a restart).
        public var lastCredits: [String: Nanoseconds] = [:]
        /// Every quest cell's completions and cooldown, for the configured cell size.
        public var questCells: [Int64: QuestGrid.CellState] = [:]
        /// Why a database that exists could not be read (nil: read, or none there yet). Started
        /// anyway, the engine would have no cooldowns and reuse round ids: a credit earned
        /// twice. The daemon refuses to start instead (systemd retries it).
        public var failure: String?
    }

    /// The store cannot be used (none configured).
    public struct Unavailable: Error, CustomStringConvertible {
        /// Why.
        public var description: String
    }

    /// `path` nil: no store (every operation fails with `Unavailable`).
    public init(path: String?, logger: Logger) {
        self.path = path; self.logger = logger
    }

    private func open() throws -> Store {
        try store.withLock { store in
            if let store { return store }
            guard let path else { throw Unavailable(description: "no store configured") }
            let s = try Store(path: path)
            store = s
            return s
        }
    }

    /// Runs `body` on the store's queue and `then` on `loop` with the outcome. Call on `loop`:
    /// `then` is bound to it (it may touch loop-confined state), and the compiler checks that
    /// only `body` crosses to the queue.
    public func write<T: Sendable>(
        _ body: @escaping @Sendable (Store) throws -> T,
        then: @escaping (Result<T, Error>) -> Void, on loop: any EventLoop
    ) {
        let op = operation(body, then: then, on: loop)
        pending.withLock { $0.writes.append(op) }
        queue.async { self.runNext() }
    }

    /// Reads run on the same queue, after every write waiting (WAL readers would not block,
    /// but one connection keeps the store simple); at most `maxQueuedReads` wait, and one more
    /// gets `Busy` at once.
    public func read<T: Sendable>(
        _ body: @escaping @Sendable (Store) throws -> T,
        then: @escaping (Result<T, Error>) -> Void, on loop: any EventLoop
    ) {
        let limit = maxQueuedReads
        let op = operation(body, then: then, on: loop)
        let queued = pending.withLock { p -> Bool in
            guard p.reads.count < limit else { return false }
            p.reads.append(op)
            return true
        }
        guard queued else {
            let then = NIOLoopBound(then, eventLoop: loop)
            loop.execute { then.value(.failure(Busy(limit: limit))) }
            return
        }
        queue.async { self.runNext() }
    }

    /// Reads waiting now (for `stats` and tests).
    public var queuedReads: Int { pending.withLock { $0.reads.count } }

    /// `body` on the store, then `then` on `loop` with the outcome, as one block for `runNext`.
    private func operation<T: Sendable>(
        _ body: @escaping @Sendable (Store) throws -> T,
        then: @escaping (Result<T, Error>) -> Void, on loop: any EventLoop
    ) -> @Sendable () -> Void {
        let then = NIOLoopBound(then, eventLoop: loop)
        return {
            let result: Result<T, Error>
            do {
                result = .success(try body(try self.open()))
            } catch {
                result = .failure(error)
            }
            loop.execute { then.value(result) }
        }
    }

    /// On the queue: runs the oldest waiting write, else the oldest read. One block is queued per
    /// operation, so every operation runs once.
    private func runNext() {
        let op = pending.withLock { p in p.writes.popFirst() ?? p.reads.popFirst() }
        op?()
    }

    /// Loads the engine's seeds, synchronously (at start). Missing store → empty seeds.
    public func seeds(cellSize: Double) -> Seeds {
        queue.sync {
            var seeds = Seeds()
            do {
                let s = try open()
                seeds.lastRound = try s.lastGameRound()
                seeds.lastCredits = try s.lastCreditTimes()
                seeds.questCells = try s.questCells(cellSize: cellSize)
            } catch {
                logger.error("store: cannot load state from \(path ?? "-"): \(error)")
                // No file yet (a missing state directory too): nothing to lose, the store is
                // made lazily later. A file that is there but unreadable holds the cooldowns.
                if let path, FileManager.default.fileExists(atPath: path) {
                    seeds.failure = "cannot load state from \(path): \(error)"
                }
            }
            return seeds
        }
    }

    /// Waits for queued operations (at shutdown): each has a block on the queue.
    public func drain() { queue.sync {} }
}
