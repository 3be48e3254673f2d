// SPDX-License-Identifier: Apache-2.0
import NIOCore
import TiltCore
import TiltProtocol

/// The hub as other threads hold it: its loop, and the hub itself only on that loop. `Hub` and
/// its `ClientSession`s are not `Sendable`: the compiler refuses to let them leave the loop
/// except through this handle, whose `NIOLoopBoundBox` checks at run time that `value` is read
/// on the loop (the socket server's acceptor thread, the daemon's setup and tests use it).
public struct HubHandle: Sendable {
    /// The loop the hub, its sessions and the engine are confined to.
    public let loop: any EventLoop
    private let box: NIOLoopBoundBox<Hub>

    /// A new hub confined to `loop` (callable from any thread: the hub is made and moved in).
    public init(loop: any EventLoop) {
        self.loop = loop
        box = .makeBoxSendingValue(Hub(loop: loop), eventLoop: loop)
    }

    /// The hub; only on `loop` (a run-time precondition).
    public var value: Hub { box.value }

    /// Runs `body` with the hub on its loop.
    public func execute(_ body: @escaping @Sendable (Hub) -> Void) {
        let box = self.box
        loop.execute { body(box.value) }
    }

    /// Runs `body` with the hub on its loop and returns its result.
    public func submit<T: Sendable>(_ body: @escaping @Sendable (Hub) throws -> T) -> EventLoopFuture<T> {
        let box = self.box
        return loop.submit { try body(box.value) }
    }

    /// Publishes from any thread.
    public func publishSoon(_ event: Event) {
        execute { $0.publish(event) }
    }
}
