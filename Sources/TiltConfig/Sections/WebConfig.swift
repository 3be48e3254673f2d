// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltProtocol

extension Configuration {
    /// `[web]`: the `tiltd web` process — a client of the daemon's socket serving the players'
    /// screen over HTTP and WebSocket. The daemon itself ignores this section.
    public struct Web: Sendable, Equatable, ConfigDefaults {
        /// `listen`: HOST:PORT to serve on. Loopback by default; "0.0.0.0:8080" opens it to the LAN.
        public var host = "127.0.0.1"
        /// The TCP port of `listen`.
        public var port: UInt16 = 8080
        /// `pairing_code`: a fixed code for commands; nil = a random one printed at every start.
        public var pairingCode: String?
        /// `allowed_origins`: extra Origins (e.g. "http://tiltd.local:8080") accepted besides the
        /// page's own host.
        public var allowedOrigins: [String] = []
        /// `max_connections`: open TCP connections accepted at once (HTTP and WebSocket).
        public var maxConnections = 128
        /// `idle_timeout_s`: an HTTP connection silent this long is closed (WebSocket ones ping).
        public var idleTimeoutSeconds = 30.0
        /// `max_clients`: WebSocket clients at once; more are refused with 503.
        public var maxClients = 64
        /// `max_messages_per_s`: messages a browser may send per second (burst: twice that);
        /// a client over it is disconnected.
        public var maxMessagesPerSecond: Double = 10
        /// `max_message_bytes`: the largest message a browser may send; a larger one closes it.
        public var maxMessageBytes = 4096
        /// `attitude_hz`: attitude lines per second asked of the daemon and sent to browsers.
        public var attitudeHz: Double = 30
        /// `recordings`: a directory of recordings the page may plot; nil = none.
        public var recordings: String?
        /// `command_timeout_s`: how long a command waits for the daemon's reply.
        public var commandTimeout: Double = 5
        /// The defaults: loopback on port 8080, a random pairing code, no recordings.
        public init() {}

        /// The keys of `[web]`, all read by `tiltd web`.
        static var keys: [ConfigKey<Web>] {
            [
                .custom(
                    "listen", \.self, type: "`\"HOST:PORT\"` or `\"[IPv6]:PORT\"`", default: "`\"127.0.0.1:8080\"`",
                    reload: .otherProcess,
                    "where to serve HTTP and WebSocket. `\"0.0.0.0:8080\"` opens it to the LAN; port 0 picks a free one (printed at start)",
                    read: { (t, w, _) throws(ConfigError) in
                        let listen = try t.string("listen", default: "\(w.host):\(w.port)")
                        guard let (h, p) = listenAddress(listen) else {
                            throw t.error(
                                "listen", "expected HOST:PORT or [IPv6]:PORT with a port in 0…65535, got \"\(listen)\"")
                        }
                        var w = w
                        w.host = h; w.port = p
                        return w
                    },
                    render: { w in
                        ["listen = \(TOMLText.quote("\(w.host.contains(":") ? "[\(w.host)]" : w.host):\(w.port)"))"]
                    }, same: { $0.host == $1.host && $0.port == $1.port }),
                .custom(
                    "pairing_code", \.pairingCode, type: "string, 6–64 printable ASCII, no spaces", default: "unset",
                    reload: .otherProcess,
                    "the code browsers enter to send commands; unset = a random six-digit code at every start, printed and in `systemctl status tiltd-web`",
                    read: { (t, v, _) throws(ConfigError) in
                        guard let code = try t.optionalString("pairing_code") else { return v }
                        guard code.utf8.count >= 6, code.utf8.count <= 64,
                            code.allSatisfy({ $0.isASCII && !$0.isWhitespace })
                        else {
                            throw t.error("pairing_code", "must be 6 to 64 printable ASCII characters without spaces")
                        }
                        return code
                    },
                    // The code is a secret: said to be set, not shown.
                    render: { c in c == nil ? [] : ["# pairing_code is set (not shown)"] }),
                .texts(
                    "allowed_origins", \.allowedOrigins, type: "array of `\"http(s)://host[:port]\"`",
                    reload: .otherProcess,
                    check: { o in
                        !(o.hasPrefix("http://") || o.hasPrefix("https://")) || o.hasSuffix("/")
                            ? "\"\(o)\" is not an origin like \"http://host:8080\" (scheme, host, optional port, no path)"
                            : nil
                    },
                    "origins accepted besides the address the page was loaded from, and host names served besides IP addresses, localhost and the machine's own name (e.g. a name phones use)"
                ),
                .integer(
                    "max_connections", \.maxConnections, in: 2...100_000, reload: .otherProcess,
                    "TCP connections at once (pages, WebSocket, metrics)"),
                .number(
                    "idle_timeout_s", \.idleTimeoutSeconds, in: 1...3600, reload: .otherProcess,
                    "seconds an HTTP connection may stay silent (no request, or a request not finished) before it is closed, so silent connections cannot hold every one of `max_connections` and lock the page out; a WebSocket is not closed for it"
                ),
                .integer(
                    "max_clients", \.maxClients, in: 1...100_000, reload: .otherProcess,
                    "WebSocket clients at once; more are refused"),
                .number(
                    "max_messages_per_s", \.maxMessagesPerSecond, in: 0.1...1000, reload: .otherProcess,
                    "messages a browser may send per second (bursts of twice that); faster ones are disconnected"),
                .integer(
                    "max_message_bytes", \.maxMessageBytes, in: 256...1_048_576, reload: .otherProcess,
                    "largest message a browser may send; a larger one disconnects it"),
                .number(
                    Command.Watch.Key.attitudeHz, \.attitudeHz, in: 0...1000, reload: .otherProcess,
                    "attitude lines per second asked of the daemon and sent to the live view"),
                .path(
                    "recordings", \.recordings, reload: .otherProcess,
                    "a directory of recordings (`.csv`, `.csv.gz`) the `/plots` page may draw"),
                .number(
                    "command_timeout_s", \.commandTimeout, in: 0.1...60, reload: .otherProcess,
                    "how long a browser's command waits for the daemon's reply"),
            ]
        }
    }

    /// "HOST:PORT" or "[IPv6]:PORT"; the port is required (unlike gpsd's `server`, there is no
    /// conventional one) and 0 picks a free port, printed at start (tests, side-by-side runs).
    static func listenAddress(_ text: String) -> (String, UInt16)? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil
        }
        return host.isEmpty ? nil : (host, port)
    }

    static var webTable: ConfigTable {
        .table(
            "web", onReload: "ignored by the daemon; `systemctl restart tiltd-web` applies it",
            keys: Web.keys.map { $0.lifted(\.web) })
    }
}
