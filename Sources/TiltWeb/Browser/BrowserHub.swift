// SPDX-License-Identifier: Apache-2.0
import NIOConcurrencyHelpers

/// The browsers connected over WebSocket. Each has its own bounded queue: a browser that falls
/// behind (a phone on weak Wi-Fi) loses its oldest lines, never slowing the daemon link or the
/// other browsers — the same rule the daemon applies to its socket clients.
public final class BrowserHub: Sendable {
    /// Lines queued per browser before the oldest are dropped (about 4 s of 60 Hz attitude).
    public static let queueLines = 256

    struct Client {
        var continuation: AsyncStream<String>.Continuation
        var wantsAttitude: Bool
    }

    private struct State {
        var clients: [Int: Client] = [:]
        var nextID = 1
        var sent: UInt64 = 0
        var dropped: UInt64 = 0
    }

    /// The most browsers connected at once (`[web] max_clients`).
    public let capacity: Int
    private let state = NIOLockedValueBox(State())

    /// A hub accepting at most `capacity` browsers.
    public init(capacity: Int) { self.capacity = capacity }

    /// Adds a browser; nil when `capacity` browsers are already connected.
    public func add(wantsAttitude: Bool) -> (id: Int, lines: AsyncStream<String>)? {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(Self.queueLines))
        let id: Int? = state.withLockedValue { s in
            guard s.clients.count < capacity else { return nil }
            defer { s.nextID += 1 }
            s.clients[s.nextID] = Client(continuation: continuation, wantsAttitude: wantsAttitude)
            return s.nextID
        }
        guard let id else { continuation.finish(); return nil }
        return (id, stream)
    }

    /// Removes browser `id` and finishes its line stream; unknown ids are ignored.
    public func remove(_ id: Int) {
        state.withLockedValue { $0.clients.removeValue(forKey: id) }?.continuation.finish()
    }

    /// Sends a line to every browser (attitude lines only to those that asked for them).
    public func broadcast(_ line: String, isAttitude: Bool = false) {
        state.withLockedValue { s in
            for c in s.clients.values where !isAttitude || c.wantsAttitude {
                if case .dropped = c.continuation.yield(line) { s.dropped += 1 } else { s.sent += 1 }
            }
        }
    }

    /// Sends a line to one browser.
    public func send(_ line: String, to id: Int) {
        state.withLockedValue { s in
            guard let c = s.clients[id] else { return }
            if case .dropped = c.continuation.yield(line) { s.dropped += 1 } else { s.sent += 1 }
        }
    }

    /// Browsers connected now.
    public var count: Int { state.withLockedValue { $0.clients.count } }
    /// Lines queued to browsers, and lines dropped because a browser fell behind.
    public var counters: (sent: UInt64, dropped: UInt64) { state.withLockedValue { ($0.sent, $0.dropped) } }
}
