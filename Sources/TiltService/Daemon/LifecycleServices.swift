// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The engine's event loop as a service: listed first, so it is shut down last, after every
/// service that hands work to the loop has stopped.
public final class EventLoopService: Service {
    let group: MultiThreadedEventLoopGroup

    /// Owns `group` (one thread: the hub's loop).
    public init(group: MultiThreadedEventLoopGroup) { self.group = group }

    /// Waits for graceful shutdown, then shuts the loop down.
    public func run() async throws {
        try? await gracefulShutdown()
        try await group.shutdownGracefully()
    }
}

/// The store writer as a service: at shutdown, waits for the writes already queued (a round
/// that ended, a credit) so none is lost. Shut down after the socket and the sources.
public final class StoreService: Service {
    let store: StoreWorker

    /// Drains `store` at shutdown.
    public init(store: StoreWorker) { self.store = store }

    /// Waits for graceful shutdown, then drains the queued writes.
    public func run() async throws {
        try? await gracefulShutdown()
        store.drain()
    }
}

/// The socket server as a service. It starts listening only once the group runs — so the
/// group's SIGTERM handling is in place before any client can see the daemon — and says so
/// through `listening` (READY=1 waits for it). At shutdown it first lets the loop deliver what
/// is queued, then closes every client and removes the socket file it made.
public final class SocketService: Service {
    let server: SocketServer
    let loop: any EventLoop
    let inheritedFD: CInt?
    /// Finishes once the socket listens (or failed to).
    public let listening: AsyncStream<Void>
    private let listeningContinuation: AsyncStream<Void>.Continuation

    /// Serves through `server` on `inheritedFD` (systemd's) or `[socket] path`.
    public init(server: SocketServer, loop: any EventLoop, inheritedFD: CInt?) {
        self.server = server; self.loop = loop; self.inheritedFD = inheritedFD
        (listening, listeningContinuation) = AsyncStream.makeStream()
    }

    /// Waits for graceful shutdown, lets the loop deliver what is queued, then closes every client.
    public func run() async throws {
        defer { listeningContinuation.finish() }
        try server.start(inheritedFD: inheritedFD)
        listeningContinuation.finish()
        try? await gracefulShutdown()
        _ = try? await loop.submit {}.get()
        server.stop()
        if inheritedFD == nil { try? FileManager.default.removeItem(atPath: server.config.path) }
    }
}
