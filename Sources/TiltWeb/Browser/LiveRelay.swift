// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import TiltCore
import TiltProtocol

/// Between the daemon link and the browsers: forwards every daemon line unchanged, adds the web
/// process's own `web` lines (the link's state, the map around the fix), keeps what a browser
/// that connects later needs at once, and asks the daemon for `status` once a second for the
/// live view's rates and clients.
public final class LiveRelay: Service, Sendable {
    /// How often the relay asks the daemon for `status`.
    public static let statusPeriod = Duration.seconds(1)
    /// The map is recomputed at most this often (fixes come at 1–10 Hz).
    public static let mapPeriod = 1.0

    private struct State {
        var linkLine: String = LiveRelay.linkLine(.connecting)
        var lastStatus: String?
        var lastMap: String?
        var lastMapTime = -Double.infinity
        var lastFixTime: Double?
    }

    /// The browsers the relay sends to.
    public let hub: BrowserHub
    private let map: NearbyMap?
    private let state = NIOLockedValueBox(State())
    private let logger: Logger
    /// Set once the link exists (the link calls back into the relay, so it is made second).
    private let linkBox = NIOLockedValueBox<DaemonLink?>(nil)

    /// A relay sending to `hub`, with `map` for the `nearby` lines (nil: none).
    public init(hub: BrowserHub, map: NearbyMap?, logger: Logger) {
        self.hub = hub; self.map = map; self.logger = logger
    }

    /// Gives the relay the link it asks for `status`; call once, after both are made.
    public func attach(_ link: DaemonLink) { linkBox.withLockedValue { $0 = link } }
    var link: DaemonLink? { linkBox.withLockedValue { $0 } }

    /// A line from the daemon (the link's `onLine`).
    public func receive(_ line: DaemonLine) {
        switch line.cls {
        case .attitude?:
            hub.broadcast(line.text, isAttitude: true)
        case .fix?:
            hub.broadcast(line.text)
            if case .fix(let fix) = line.body { updateMap(fix) }
        case .hello?:
            // A daemon that (re)started may have no GPS: its fix and map come anew, if at all.
            state.withLockedValue { s in
                s.lastMap = nil; s.lastFixTime = nil; s.lastMapTime = -.infinity
            }
            hub.broadcast(line.text)
            // Browsers' game commands go out as this process's: say so at once if they will fail.
            if case .hello(let hello) = line.body, let client = hello.client, client.trusted == false {
                let uid = client.uid.map(String.init) ?? "?"
                logger.warning(
                    "the daemon does not trust this process (uid \(uid)): paired browsers' game commands will be refused as forbidden; add its user to [socket] trusted_users (or \(uid) to trusted_uids; docs/web.md)"
                )
            }
        default:
            hub.broadcast(line.text)
        }
    }

    /// The link's state changed (its `onState`).
    public func linkChanged(_ s: DaemonLink.State) {
        let text = Self.linkLine(s)
        state.withLockedValue { st in
            st.linkLine = text
            // A browser that connects while the daemon is away gets the link's state, not the
            // gone daemon's status and map as if they were current.
            if case .reconnecting = s { st.lastStatus = nil; st.lastMap = nil; st.lastMapTime = -.infinity }
        }
        hub.broadcast(text)
    }

    /// `{"class":"web","event":"link","state":"connected"|"connecting"|"reconnecting",…}`.
    static func linkLine(_ s: DaemonLink.State) -> String {
        var o: JSONObject = ["class": "web", "event": "link"]
        switch s {
        case .connecting: o["state"] = "connecting"
        case .connected: o["state"] = "connected"
        case .reconnecting(let retry, let reason):
            o["state"] = "reconnecting"; o["retry_in_s"] = .number(retry); o["message"] = .string(reason)
        }
        return JSONValue.object(o).jsonText
    }

    private func updateMap(_ fix: FixBody) {
        let now = ProcessInfo.processInfo.systemUptime
        let due = state.withLockedValue { s -> Bool in
            s.lastFixTime = now
            guard now - s.lastMapTime >= Self.mapPeriod else { return false }
            s.lastMapTime = now
            return true
        }
        guard due, let map, let lat = fix.lat, let lon = fix.lon else { return }
        let text = JSONValue.object(map.line(at: GeoPoint(lat: lat, lon: lon), eph: fix.ephM)).jsonText
        state.withLockedValue { $0.lastMap = text }
        hub.broadcast(text)
    }

    /// Seconds since the last fix line arrived, if any (wall time here, so a GPX replay's old
    /// timestamps do not make every fix look ancient).
    public var fixAge: Double? {
        state.withLockedValue { s in s.lastFixTime.map { ProcessInfo.processInfo.systemUptime - $0 } }
    }

    /// What a browser gets right after it connects: the link state, the latest status and map.
    public func greeting() -> [String] {
        state.withLockedValue { s in [s.linkLine] + [s.lastStatus, s.lastMap].compactMap { $0 } }
    }

    /// Asks the daemon for a fresh `status` and returns its reply line (for one browser's snapshot).
    public func freshStatus() async -> String? {
        guard let link, let reply = try? await link.request(["cmd": "status"]) else { return nil }
        let text = JSONValue.object(reply.fields).jsonText
        state.withLockedValue { $0.lastStatus = text }
        return text
    }

    /// Asks the daemon for `status` every `statusPeriod` until the service group shuts down.
    public func run() async throws {
        // Polls status for the live view; stops with the service group.
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    if self.link?.state == .connected, let text = await self.freshStatus() { self.hub.broadcast(text) }
                    try await Task.sleep(for: Self.statusPeriod)
                }
            }
        } catch is CancellationError {}
    }
}
