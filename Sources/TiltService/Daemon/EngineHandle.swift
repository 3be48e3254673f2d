// SPDX-License-Identifier: Apache-2.0
import NIOCore
import Synchronization

/// The engine as other threads reach it: work hops to the engine's loop and gets the engine
/// there, so the engine itself never crosses threads (it is loop-confined, see `Engine`).
public final class EngineHandle: Sendable {
    /// The engine's loop.
    public let loop: any EventLoop
    /// Set once, on the loop, by `attach`. The lock is taken only to read the reference.
    private let bound = Mutex<NIOLoopBound<Engine>?>(nil)

    /// A handle for the engine that will run on `loop`.
    public init(loop: any EventLoop) { self.loop = loop }

    /// Makes `engine` reachable. Call on the loop.
    public func attach(_ engine: Engine) {
        let b = NIOLoopBound(engine, eventLoop: loop)
        bound.withLock { $0 = b }
    }

    /// Runs `body` with the engine on its loop (dropped if no engine is attached yet).
    public func execute(_ body: @escaping @Sendable (Engine) -> Void) {
        let b = bound.withLock { $0 }
        loop.execute { if let e = b?.value { body(e) } }
    }

    /// Runs `body` with the engine on its loop and returns its result.
    public func submit<T: Sendable>(_ body: @escaping @Sendable (Engine) throws -> T) -> EventLoopFuture<T> {
        let b = bound.withLock { $0 }
        return loop.submit {
            guard let e = b?.value else { throw EngineHandleError.detached }
            return try body(e)
        }
    }
}

/// No engine is attached to the handle.
enum EngineHandleError: Error { case detached }
