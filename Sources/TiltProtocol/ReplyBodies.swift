// SPDX-License-Identifier: Apache-2.0

/// What clients read of `hello`'s `client` and of the `status` reply (docs/protocol.md), typed
/// like the lines' bodies (LineBodies.swift) so no Swift client reads their keys by hand.

/// The client as the daemon sees it: `hello`'s `client` (its peer credentials and trust).
public struct ClientBody: Sendable, Equatable {
    /// The peer's user, group and process, when the socket told them.
    public var uid: Int64?, gid: Int64?, pid: Int64?
    /// Whether the daemon takes its trusted commands.
    public var trusted: Bool?

    /// Reads a client object.
    public init(_ o: JSONObject) {
        uid = o["uid"]?.intValue
        gid = o["gid"]?.intValue
        pid = o["pid"]?.intValue
        trusted = o["trusted"]?.boolValue
    }
}

/// The result fields of a successful `status` reply (the catalogue's `status` entry names them).
public struct StatusReplyBody: Sendable, Equatable {
    /// tiltd's version.
    public var version: String?
    /// Each source's latest status.
    public var sources: [StatusBody]
    /// The sample rate measured over the last second, Hz.
    public var sampleRateHz: Double?
    /// Connected clients.
    public var clients: Int64?
    /// Lines dropped for connected clients.
    public var droppedLines: Int64?
    /// The game's state.
    public var game: GameStateBody?
    /// The latest fix.
    public var fix: FixBody?

    /// Reads a reply's fields; nil unless it is a successful `status` reply.
    public init?(_ r: ReplyBody) {
        guard r.ok, r.cmd == "status" else { return nil }
        let o = r.fields
        version = o["version"]?.stringValue
        sources = StatusBody.list(o["sources"])
        sampleRateHz = o["sample_rate_hz"]?.doubleValue
        clients = o["clients"]?.intValue
        droppedLines = o["dropped_lines"]?.intValue
        game = o["game"]?.objectValue.flatMap(GameStateBody.init)
        fix = o["fix"]?.objectValue.flatMap(FixBody.init)
    }
}

/// The result fields of a successful `stats` reply: counters for monitoring.
public struct StatsReplyBody: Sendable, Equatable {
    /// Seconds since the daemon started (monotonic clock).
    public var uptimeSeconds: Double?
    /// The sample rate measured over the last second, Hz.
    public var sampleRateHz: Double?
    /// Samples processed, and dropped because the event loop was behind.
    public var samples: Double?, samplesDropped: Double?
    /// Connected clients.
    public var clients: Double?
    /// Lines dropped for slow clients, per event class.
    public var linesDropped: [(String, Double)]
    /// Game decisions per kind (`correct`, `skip`).
    public var decisions: [(String, Double)]
    /// Rounds started and ended.
    public var rounds: [(String, Double)]
    /// Seconds since the latest fix arrived; nil before the first.
    public var fixAgeSeconds: Double?
    /// Reloads per result (`applied`, `refused`): the numeric members of `reloads`.
    public var reloads: [(String, Double)]
    /// The latest reload's result (`applied` or `refused`), when there was one.
    public var lastReload: String?

    /// Reads a reply's fields; nil unless it is a successful `stats` reply.
    public init?(_ r: ReplyBody) {
        guard r.ok else { return nil }
        let o = r.fields
        func counts(_ key: String) -> [(String, Double)] {
            (o[key]?.objectValue?.entries ?? []).compactMap { e in e.value.doubleValue.map { (e.key, $0) } }
        }
        uptimeSeconds = o["uptime_s"]?.doubleValue
        sampleRateHz = o["sample_rate_hz"]?.doubleValue
        samples = o["samples"]?.doubleValue
        samplesDropped = o["samples_dropped"]?.doubleValue
        clients = o["clients"]?.doubleValue
        linesDropped = counts("lines_dropped")
        decisions = counts("decisions")
        rounds = counts("rounds")
        fixAgeSeconds = o["fix_age_s"]?.doubleValue
        reloads = counts("reloads")
        lastReload = o["reloads"]?["last"]?.stringValue
    }

    /// Equal when every counter is.
    public static func == (a: Self, b: Self) -> Bool {
        func same(_ x: [(String, Double)], _ y: [(String, Double)]) -> Bool {
            x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        }
        return a.uptimeSeconds == b.uptimeSeconds && a.sampleRateHz == b.sampleRateHz && a.samples == b.samples
            && a.samplesDropped == b.samplesDropped && a.clients == b.clients && same(a.linesDropped, b.linesDropped)
            && same(a.decisions, b.decisions) && same(a.rounds, b.rounds) && a.fixAgeSeconds == b.fixAgeSeconds
            && same(a.reloads, b.reloads) && a.lastReload == b.lastReload
    }
}

/// The result fields of a successful `reload` reply.
public struct ReloadReplyBody: Sendable, Equatable {
    /// The file read.
    public var file: String?
    /// The sections that changed.
    public var changed: [String]
    /// What takes effect later.
    public var notes: [String]

    /// Reads a reply's fields; nil unless it succeeded.
    public init?(_ r: ReplyBody) {
        guard r.ok else { return nil }
        file = r["file"]?.stringValue
        changed = (r["changed"]?.arrayValue ?? []).compactMap(\.stringValue)
        notes = (r["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
    }
}

/// The result fields of a successful `calibrate.gyro` reply.
public struct GyroCalibrationReplyBody: Sendable, Equatable {
    /// The mean rate while still, rad/s: the bias to subtract; nil when the reply lacks it.
    public var gyroBias: Triple?
    /// RMS deviation of the rate from it, rad/s.
    public var noise: Double?
    /// Samples averaged, and the still time they cover, s.
    public var samples: Double?, seconds: Double?
    /// The gyro bias in force before, rad/s.
    public var previous: Triple?

    /// Reads a reply's fields; nil unless it succeeded.
    public init?(_ r: ReplyBody) {
        guard r.ok else { return nil }
        gyroBias = Triple(r["gyro_bias"])
        noise = r["noise"]?.doubleValue
        samples = r["samples"]?.doubleValue
        seconds = r["seconds"]?.doubleValue
        previous = Triple(r["previous"])
    }
}
