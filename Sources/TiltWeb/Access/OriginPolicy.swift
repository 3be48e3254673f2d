// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Cross-site checks for the WebSocket handshake and the pairing form: a browser always sends
/// `Origin` on both, so a page on another site cannot drive the game with a paired player's
/// cookie. Requests without `Origin` are not from a browser page (curl, scripts) and are let
/// through: they carry no one's cookie by accident.
public struct OriginPolicy: Sendable {
    /// Extra origins accepted besides the page's own host (`[web] allowed_origins`).
    public var allowed: Set<String>

    /// A policy accepting `allowed` origins (compared case-insensitively) besides same-origin.
    public init(allowed: [String]) { self.allowed = Set(allowed.map { $0.lowercased() }) }

    /// True when a request naming `host` (its Host header) may be served at all. Against DNS
    /// rebinding: a page on another site re-points its own name at this server's address, and
    /// its requests are then same-origin to the browser (Origin and Host both that name), cookies
    /// aside. Accepted: an IP literal, `localhost`, this machine's name (with or without
    /// `.local`, as mDNS gives it), a host named in `allowed_origins`, and requests without Host
    /// (HTTP/1.0 programs). Any other name is refused.
    public func acceptsHost(_ host: String?, machineName: String) -> Bool {
        guard let host = host?.lowercased(), !host.isEmpty else { return true }
        let name = Self.hostName(host)
        if name == "localhost" || Self.isIPLiteral(name) { return true }
        let machine = machineName.lowercased()
        if !machine.isEmpty, name == machine || name == machine + ".local" { return true }
        return allowed.contains { Self.hostName(Self.authority(ofOrigin: $0)) == name }
    }

    /// The host of a Host header or authority: without the port, and an IPv6 literal without
    /// its brackets.
    static func hostName(_ authority: String) -> String {
        if authority.hasPrefix("["), let end = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<end])
        }
        if authority.filter({ $0 == ":" }).count == 1, let colon = authority.firstIndex(of: ":") {
            return String(authority[..<colon])
        }
        return authority
    }

    /// "http://host:port" → "host:port".
    static func authority(ofOrigin origin: String) -> String {
        guard let r = origin.range(of: "://") else { return origin }
        return String(origin[r.upperBound...].prefix { $0 != "/" })
    }

    /// An IPv4 or IPv6 address (what no DNS name can be), as the C library parses them; an
    /// IPv6 zone ("fe80::1%eth0", "%25eth0" in a URL) is left out.
    static func isIPLiteral(_ name: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, name, &buffer) == 1 { return true }
        let address = name.split(separator: "%", maxSplits: 1).first.map(String.init) ?? name
        return inet_pton(AF_INET6, address, &buffer) == 1
    }

    /// True when `origin` may use a server reached as `host` (the request's Host header).
    public func accepts(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        let o = origin.lowercased()
        // Browsers give pages http(s) origins only; a ws: or wss: Origin comes from a program
        // (some WebSocket client libraries send one), which could as well send none.
        if o.hasPrefix("ws://") || o.hasPrefix("wss://") { return true }
        if allowed.contains(o) { return true }
        guard let host = host?.lowercased(), !host.isEmpty else { return false }
        // Same origin: the page was loaded from the address the handshake is sent to.
        return o == "http://\(host)" || o == "https://\(host)"
    }
}

/// A token bucket: `rate` messages per second on average, bursts up to `burst`. Time is passed
/// in (seconds on any monotonic clock) so it can be tested without a clock.
public struct TokenBucket: Sendable {
    /// Tokens added per second (the average message rate allowed).
    public let rate: Double
    /// The most tokens held at once (the largest burst allowed); the bucket starts full.
    public let burst: Double
    private var tokens: Double
    private var last: Double?

    /// A full bucket refilled at `rate` per second, holding at most `burst`.
    public init(rate: Double, burst: Double) { self.rate = rate; self.burst = burst; tokens = burst }

    /// Takes one token at `now`; false when the bucket is empty.
    public mutating func take(now: Double) -> Bool {
        if let last { tokens = min(burst, tokens + (now - last) * rate) }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
