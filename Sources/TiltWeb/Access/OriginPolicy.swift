/// Cross-site checks for the WebSocket handshake and the pairing form: a browser always sends
/// `Origin` on both, so a page on another site cannot drive the game with a paired player's
/// cookie. Requests without `Origin` are not from a browser page (curl, scripts) and are let
/// through: they carry no one's cookie by accident.
public struct OriginPolicy: Sendable {
    /// Extra origins accepted besides the page's own host (`[web] allowed_origins`).
    public var allowed: Set<String>

    /// A policy accepting `allowed` origins (compared case-insensitively) besides same-origin.
    public init(allowed: [String]) { self.allowed = Set(allowed.map { $0.lowercased() }) }

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
