// SPDX-License-Identifier: Apache-2.0

/// A network address as a config file writes it: `HOST`, `HOST:PORT` or `[IPv6]:PORT` (gpsd's
/// server, the MQTT broker). The one parser, so both keys accept and refuse the same texts.
public struct HostPort: Sendable, Equatable {
    /// The host name or address, without brackets.
    public var host: String
    /// The port: the one given, else the default the caller passed.
    public var port: Int
    /// Whether the text gave the port (false: `port` is the default).
    public var portGiven: Bool

    /// A host and port.
    public init(host: String, port: Int, portGiven: Bool = true) {
        self.host = host
        self.port = port
        self.portGiven = portGiven
    }

    /// The text is not `HOST`, `HOST:PORT` or `[IPv6]:PORT` with a port in 1…65535.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        /// The text as given.
        public var text: String
        /// The refusal of `text`.
        public init(text: String) { self.text = text }
        /// "\"TEXT\" is not HOST, HOST:PORT or [IPv6]:PORT with a port in 1…65535".
        public var description: String {
            "\"\(text)\" is not HOST, HOST:PORT or [IPv6]:PORT with a port in 1…65535"
        }
    }

    /// Parses `text` (surrounding spaces and tabs ignored); `defaultPort` when no port is given.
    public init(parsing text: String, defaultPort: Int) throws(Invalid) {
        let trimmed = text.trimmingWhitespace(newlines: false)
        var host = trimmed
        var portText: Substring?
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { throw Invalid(text: text) }
            host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let rest = trimmed[trimmed.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw Invalid(text: text) }
                portText = rest.dropFirst()
            }
        } else if let colon = trimmed.firstIndex(of: ":") {
            // A second colon without brackets would be an IPv6 address with its port ambiguous.
            guard trimmed[trimmed.index(after: colon)...].firstIndex(of: ":") == nil else { throw Invalid(text: text) }
            host = String(trimmed[..<colon])
            portText = trimmed[trimmed.index(after: colon)...]
        }
        guard !host.isEmpty else { throw Invalid(text: text) }
        self.host = host
        self.port = defaultPort
        self.portGiven = portText != nil
        if let portText {
            guard let port = Int(portText), (1...65535).contains(port) else { throw Invalid(text: text) }
            self.port = port
        }
    }

    /// `HOST:PORT`, with an IPv6 address in brackets: what `init(parsing:)` reads back.
    public var text: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}
