import Dispatch
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import Synchronization
import TiltCore

/// Runs store operations on one serial queue, off the event loop, and hands results back to
/// the loop. SQLite commits (fsync) take milliseconds; the loop serves clients meanwhile.
///
/// The store is opened lazily and reopened after a failure, so a state directory that is
/// missing or full at start does not stop the daemon: the failing operation gets an error
/// (and clients a `status` event), and the next one tries again.
public final class StoreWorker: Sendable {
    let path: String?
    let logger: Logger
    /// The serial queue of every store operation (and of the kept head frame's writes, so that
    /// `drain` at shutdown waits for them too).
    let queue = DispatchQueue(label: "tiltd.store")
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
        let then = NIOLoopBound(then, eventLoop: loop)
        queue.async {
            let result: Result<T, Error>
            do {
                result = .success(try body(try self.open()))
            } catch {
                result = .failure(error)
            }
            loop.execute { then.value(result) }
        }
    }

    /// Reads run on the same queue (WAL readers would not block, but order keeps replies intuitive).
    public func read<T: Sendable>(
        _ body: @escaping @Sendable (Store) throws -> T,
        then: @escaping (Result<T, Error>) -> Void, on loop: any EventLoop
    ) {
        write(body, then: then, on: loop)
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
            }
            return seeds
        }
    }

    /// Waits for queued operations (at shutdown).
    public func drain() { queue.sync {} }
}
