// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltPlatform

extension Configuration {
    /// `[store]`: the SQLite database.
    public struct Store: Sendable, Equatable, ConfigDefaults {
        /// The SQLite database (WAL mode; relative paths from the config's directory).
        public var path = "/var/lib/tiltd/tiltd.sqlite"
        /// Reads (`history`, `credits`) waiting for the store at once; more are answered `unavailable`.
        public var maxQueuedReads = 64
        /// The defaults.
        public init() {}
    }

    /// `[gps]`: the gpsd to read fixes from (see `GPSComponent`).
    public struct GPS: Sendable, Equatable, ConfigDefaults {
        /// Whether to read fixes from gpsd.
        public var enabled = false
        /// gpsd's host name or address.
        public var host = "127.0.0.1"
        /// gpsd's TCP port.
        public var port: UInt16 = 2947
        /// The defaults.
        public init() {}
    }

    /// `[log]`.
    public struct Log: Sendable, Equatable, ConfigDefaults {
        /// "trace", "debug", "info", "notice", "warning", "error".
        public var level = "info"
        /// "auto", "journal" or "terminal": how log lines are written (`LogOutputStyle`).
        public var style = "auto"
        /// The defaults.
        public init() {}
    }

    static var storeTable: ConfigTable {
        let path = ConfigKey<Store>.custom(
            "path", \.path, type: "path", default: "`\"/var/lib/tiltd/tiltd.sqlite\"`", reload: .needsRestart,
            "SQLite database (WAL) for rounds, visits, credits and quests",
            read: { (t, v, ctx) throws(ConfigError) in ctx.resolve(try t.string("path", default: v)) },
            render: { ["path = \(TOMLText.quote($0))"] })
        let reads = ConfigKey<Store>.integer(
            "max_queued_reads", \.maxQueuedReads, in: 1...100_000,
            "reads (`history`, `credits`) waiting for the store at once, from all clients; one more is answered at once with `unavailable`. Writes (credits, rounds, quests) are never refused and go before every waiting read, so a client flooding `history` cannot delay a commit"
        )
        return .table(
            "store", onReload: "a new `path` needs a restart and is refused; `max_queued_reads` applies at once",
            keys: [path.lifted(\.store), reads.lifted(\.store)])
    }

    static var gpsTable: ConfigTable {
        // The one HOST[:PORT] / [IPv6]:PORT parser: the platform's (gpsd's client reads it too).
        let server = ConfigKey<GPS>.custom(
            "server", \.self, type: "`\"HOST:PORT\"`, `\"HOST\"` or `\"[IPv6]:PORT\"`", default: "`\"127.0.0.1:2947\"`",
            "the gpsd to connect to (port 2947 when none is given)",
            read: { (t, v, _) throws(ConfigError) in
                let server = try t.string("server", default: "\(v.host):\(v.port)")
                var g = v
                do {
                    let parsed = try HostPort(parsing: server, defaultPort: 2947)
                    g.host = parsed.host
                    g.port = UInt16(parsed.port)  // 1...65535: the parser checked
                } catch {
                    throw t.error("server", "gps server \(error)")
                }
                return g
            },
            render: { g in ["server = \(TOMLText.quote(HostPort(host: g.host, port: Int(g.port)).text))"] },
            same: { $0.host == $1.host && $0.port == $1.port })
        let keys: [ConfigKey<GPS>] = [
            .flag(
                "enabled", \.enabled, whenPresent: true, default: "`false` (`true` once the table is present)",
                "read fixes from gpsd"),
            server,
        ]
        return .table(
            "gps",
            onReload:
                "gpsd is started, stopped or reconnected (with `--gpx` the replay goes on and `[gps]` waits for a restart)",
            keys: keys.map { $0.lifted(\.gps) })
    }

    static var logTable: ConfigTable {
        let keys: [ConfigKey<Log>] = [
            .text(
                "level", \.level, allowed: ["trace", "debug", "info", "notice", "warning", "error"], type: "string",
                "`trace`, `debug`, `info`, `notice`, `warning` or `error`"),
            .text(
                "style", \.style, allowed: ["auto", "journal", "terminal"],
                "how log lines are written to standard error: `\"journal\"` with a `<N>` syslog-priority prefix and no timestamp (journald, `systemd-cat`, a syslog-aware supervisor stamps and files them), `\"terminal\"` with a local timestamp and the level name (a terminal, a log file, a supervisor that keeps lines as written). `\"auto\"`: journal when standard error is the journal stream systemd connected (`$JOURNAL_STREAM`), else terminal. Also `tiltd web` and `tiltd mqtt`"
            ),
        ]
        return .table(
            "log", onReload: "the new level and style apply to every logger", keys: keys.map { $0.lifted(\.log) })
    }
}
