// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of `tiltd web`: Hummingbird's, plus the peer's address (for the pairing
/// lockout) and the WebSocket handler slot the upgrade needs.
public struct WebContext: RequestContext, WebSocketRequestContext {
    /// Hummingbird's per-request storage (`RequestContext`).
    public var coreContext: CoreRequestContextStorage
    /// Where the WebSocket upgrade stores its handler (`WebSocketRequestContext`).
    public let webSocket: WebSocketHandlerReference<WebContext>
    /// The peer's IP address, or "unknown".
    public let peer: String

    /// Made by Hummingbird for each request; reads the peer's address from the channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        peer = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// Pairing and commands are small; nothing larger is read.
    public var maxUploadSize: Int { 16 * 1024 }
}

extension Request {
    /// The session cookie's value, if the browser sent one.
    var sessionToken: String? { cookies[Pairing.cookieName]?.value }
    /// `Origin` and the address the browser used (the Host header), for `OriginPolicy`.
    /// Several `Origin` headers are not something a browser sends: they match nothing.
    var origin: String? {
        let all = headers[values: .origin]
        return all.count > 1 ? "(\(all.count) Origin headers)" : all.first
    }
    var hostHeader: String? { head.authority }
}

/// Headers every page and asset carries: no framing by other sites, no sniffing, no referrer,
/// and a CSP that allows only this server's own scripts, styles and WebSocket.
enum SecurityHeaders {
    static func apply(_ h: inout HTTPFields) {
        h[.contentSecurityPolicy] =
            "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        h[.xContentTypeOptions] = "nosniff"
        h[.referrerPolicy] = "no-referrer"
        h[.cacheControl] = "no-cache"
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}
