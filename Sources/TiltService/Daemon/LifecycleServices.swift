import Foundation
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

    public func run() async throws {
        try? await gracefulShutdown()
        store.drain()
    }
}

/// The socket server as a service: already listening when the group starts (so READY=1 is
/// true); at shutdown it first lets the loop deliver what is queued, then closes every client
/// and removes the socket file it made.
public final class SocketService: Service {
    let server: SocketServer
    let loop: any EventLoop
    /// The socket file to remove at the end (nil when systemd owns the socket).
    let ownedPath: String?

    /// Serves through `server` (started by the caller).
    public init(server: SocketServer, loop: any EventLoop, ownedPath: String?) {
        self.server = server; self.loop = loop; self.ownedPath = ownedPath
    }

    public func run() async throws {
        try? await gracefulShutdown()
        _ = try? await loop.submit {}.get()
        server.stop()
        if let ownedPath { try? FileManager.default.removeItem(atPath: ownedPath) }
    }
}
