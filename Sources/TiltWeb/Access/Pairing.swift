// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOConcurrencyHelpers
import TiltPlatform

/// Who may send commands from a browser: whoever typed the pairing code. The code is printed by
/// `tiltd web` at start (and in `systemctl status`), or fixed by `[web] pairing_code`. A browser
/// that sends the right code gets a random session token as an HttpOnly cookie; the WebSocket
/// handshake carries the cookie, so scripts on the page never see the token.
public final class Pairing: Sendable {
    /// The cookie's name.
    public static let cookieName = "tiltd_session"
    /// Wrong codes a remote address may try before it must wait `lockout` seconds.
    public static let maxFailures = 5
    /// Seconds an address must wait after `maxFailures` wrong codes.
    public static let lockout = 60.0
    /// Sessions kept at once (oldest forgotten first): a bound on memory, not a policy.
    public static let maxSessions = 1000
    /// Wrong codes from all addresses together per `lockout` window; past that every address
    /// waits. Per address alone was no bound with IPv6, where each guess can come from a new
    /// address (a /64, link-local, fc00::/7): six digits then fell in minutes. At 30 a minute
    /// the 10⁶ codes take 23 days on average, and a person who mistypes still gets in a minute
    /// later. (Someone guessing keeps everyone out while they guess; pairing is for the LAN.)
    public static let maxFailuresOverall = 30
    /// Addresses whose failures are remembered at once (oldest forgotten first): a bound on
    /// memory; with `maxFailuresOverall` it is never reached within one window.
    public static let maxTrackedAddresses = 1000

    /// Why a pairing attempt was refused.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case wrongCode(attemptsLeft: Int)
        case lockedOut(retryAfter: Int)
        /// The message shown to the person pairing.
        public var description: String {
            switch self {
            case .wrongCode(let n):
                return "wrong pairing code (\(n) more tries before a \(Int(Pairing.lockout)) s wait)"
            case .lockedOut(let s): return "too many wrong codes from this address; try again in \(s) s"
            }
        }
    }

    private struct State {
        var sessions: [String: Double] = [:]
        var failures: [String: (count: Int, since: Double)] = [:]
        /// Times of the wrong codes of the current window, from every address (oldest first).
        var recentFailures: [Double] = []
    }

    /// The code people type.
    public let code: String
    /// True when the code came from the config (it survives restarts).
    public let isFixed: Bool
    private let state = NIOLockedValueBox(State())

    /// Pairing with `fixedCode`, or with a random code when nil.
    public init(fixedCode: String?) {
        if let fixedCode { code = fixedCode; isFixed = true } else { code = Self.randomCode(); isFixed = false }
    }

    /// Six digits in two groups ("482-193"): easy to read off a terminal and to type on a phone.
    /// The lockout makes guessing the 10⁶ codes take years.
    static func randomCode() -> String {
        var g = SystemRandomNumberGenerator()
        let n = Int.random(in: 0..<1_000_000, using: &g)
        let s = String(n).leftPadded(to: 6)
        return "\(s.prefix(3))-\(s.suffix(3))"
    }

    static func randomToken() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(g.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }

    /// Checks `attempt` from `address` at time `now` (seconds, any monotonic origin); returns a
    /// new session token.
    public func pair(_ attempt: String, from address: String, now: Double) -> Result<String, Refusal> {
        state.withLockedValue { s in
            s.recentFailures.removeAll { now - $0 >= Self.lockout }
            if s.recentFailures.count >= Self.maxFailuresOverall, let oldest = s.recentFailures.first {
                return .failure(
                    .lockedOut(retryAfter: max(1, Int(saturating: (Self.lockout - (now - oldest)).rounded(.up)))))
            }
            if let f = s.failures[address] {
                if now - f.since >= Self.lockout {
                    s.failures[address] = nil
                } else if f.count >= Self.maxFailures {
                    return .failure(
                        .lockedOut(retryAfter: Int(saturating: (Self.lockout - (now - f.since)).rounded(.up))))
                }
            }
            guard Self.constantTimeEqual(Self.normalized(attempt), Self.normalized(code)) else {
                var f = s.failures[address] ?? (0, now)
                f.count += 1
                s.failures[address] = f
                s.recentFailures.append(now)
                if s.failures.count > Self.maxTrackedAddresses {
                    s.failures = s.failures.filter { now - $0.value.since < Self.lockout }
                    while s.failures.count > Self.maxTrackedAddresses,
                        let oldest = s.failures.min(by: { $0.value.since < $1.value.since })?.key
                    {
                        s.failures[oldest] = nil
                    }
                }
                return f.count >= Self.maxFailures
                    ? .failure(.lockedOut(retryAfter: Int(Self.lockout)))
                    : .failure(.wrongCode(attemptsLeft: Self.maxFailures - f.count))
            }
            s.failures[address] = nil
            if s.sessions.count >= Self.maxSessions, let oldest = s.sessions.min(by: { $0.value < $1.value })?.key {
                s.sessions[oldest] = nil
            }
            let token = Self.randomToken()
            s.sessions[token] = now
            return .success(token)
        }
    }

    /// Addresses with failures remembered now (for tests: the map is bounded).
    public var trackedAddresses: Int { state.withLockedValue { $0.failures.count } }

    /// True when `token` (a cookie's value) belongs to a paired browser.
    public func isPaired(token: String?) -> Bool {
        guard let token else { return false }
        return state.withLockedValue { $0.sessions[token] != nil }
    }

    /// Forgets a session (the page's "unpair").
    public func forget(token: String) { state.withLockedValue { _ = $0.sessions.removeValue(forKey: token) } }

    /// Case, spaces and dashes do not matter when typing a code.
    static func normalized(_ s: String) -> [UInt8] {
        Array(s.lowercased().utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") })
    }

    /// Compares without returning early, so timing says nothing about how much of a guess matched.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) { diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0) }
        return diff == 0
    }
}

extension String {
    func leftPadded(to n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
