import FoundationEssentials
import Glibc

extension Configuration {
    /// `[web]`: the `tiltd web` process — a client of the daemon's socket serving the players'
    /// screen over HTTP and WebSocket. The daemon itself ignores this section.
    public struct Web: Sendable, Equatable {
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
    }

    /// `[web]` as TOML, every key with its value in force (`tiltd check-config`).
    var webTOML: String {
        let host = web.host.contains(":") ? "[\(web.host)]" : web.host
        var out = "[web]\nlisten = \(TOMLText.quote("\(host):\(web.port)"))\n"
        // The code is a secret: said to be set, not shown.
        if web.pairingCode != nil { out += "# pairing_code is set (not shown)\n" }
        out += "allowed_origins = [\(web.allowedOrigins.map(TOMLText.quote).joined(separator: ", "))]\n"
        out += "max_connections = \(web.maxConnections)\nmax_clients = \(web.maxClients)\n"
        out += "max_messages_per_s = \(web.maxMessagesPerSecond)\nmax_message_bytes = \(web.maxMessageBytes)\n"
        out += "attitude_hz = \(web.attitudeHz)\n"
        if let r = web.recordings { out += "recordings = \(TOMLText.quote(r))\n" }
        out += "command_timeout_s = \(web.commandTimeout)\n"
        return out
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

    /// Reads `[web]` (called by `parse`).
    static func readWeb(_ t: inout TableReader, base: String) throws(ConfigError) -> Web {
        var w = Web()
        let listen = try t.string("listen", default: "\(w.host):\(w.port)")
        guard let (h, p) = Self.listenAddress(listen) else {
            throw t.error("listen", "expected HOST:PORT or [IPv6]:PORT with a port in 0…65535, got \"\(listen)\"")
        }
        w.host = h; w.port = p
        if let code = try t.optionalString("pairing_code") {
            guard code.utf8.count >= 6, code.utf8.count <= 64, code.allSatisfy({ $0.isASCII && !$0.isWhitespace })
            else {
                throw t.error("pairing_code", "must be 6 to 64 printable ASCII characters without spaces")
            }
            w.pairingCode = code
        }
        if let origins = try t.strings("allowed_origins") {
            for o in origins where !(o.hasPrefix("http://") || o.hasPrefix("https://")) || o.hasSuffix("/") {
                throw t.error(
                    "allowed_origins",
                    "\"\(o)\" is not an origin like \"http://host:8080\" (scheme, host, optional port, no path)")
            }
            w.allowedOrigins = origins
        }
        w.maxConnections = try t.int("max_connections", default: w.maxConnections, in: 2...100_000)
        w.maxClients = try t.int("max_clients", default: w.maxClients, in: 1...100_000)
        w.maxMessagesPerSecond = try t.double("max_messages_per_s", default: w.maxMessagesPerSecond, in: 0.1...1000)
        w.maxMessageBytes = try t.int("max_message_bytes", default: w.maxMessageBytes, in: 256...1_048_576)
        w.attitudeHz = try t.double("attitude_hz", default: w.attitudeHz, in: 0...1000)
        if let r = try t.optionalString("recordings") { w.recordings = resolve(r, base: base) }
        w.commandTimeout = try t.double("command_timeout_s", default: w.commandTimeout, in: 0.1...60)
        try t.finish()
        return w
    }
}
