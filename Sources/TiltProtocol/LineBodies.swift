// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// The bodies of `status`, `fix`, `reply`, `hello` and `gap` lines, each declared once: the
/// daemon encodes them (`Event.status`, `Event.fix`, `Event.reply`, …) and clients decode them
/// (`DaemonLine.body`) from the same field names.

/// A `status` line's body, and each element of `sources` in `hello` and the `status` reply.
public struct StatusBody: Sendable, Equatable {
    /// imu, magnetometer, gps, store, config, game, or a client's own (the bridge's `mqtt`).
    public var source: String
    /// The source's state (`streaming`, `retrying`, …).
    public var state: String
    /// Why, for people.
    public var message: String
    /// The device, when known.
    public var device: String?
    /// The delivered rate, Hz, when known.
    public var rateHz: Double?
    /// Seconds to the next attempt, while retrying.
    public var retryIn: Double?

    /// A status body; the optional fields only when known.
    public init(
        source: String, state: String, message: String, device: String? = nil, rateHz: Double? = nil,
        retryIn: Double? = nil
    ) {
        self.source = source; self.state = state; self.message = message
        self.device = device; self.rateHz = rateHz; self.retryIn = retryIn
    }

    /// The fields in wire order.
    public var object: JSONObject {
        var o = JSONObject()
        o["source"] = .string(source)
        o["state"] = .string(state)
        o["message"] = .string(message)
        if let device { o["device"] = .string(device) }
        if let rateHz { o["rate_hz"] = .number(rateHz) }
        if let retryIn { o["retry_in_s"] = .number(retryIn) }
        return o
    }

    /// The status objects of a `sources` array (`hello`, the `status` reply); others skipped.
    public static func list(_ v: JSONValue?) -> [StatusBody] {
        (v?.arrayValue ?? []).compactMap { $0.objectValue.flatMap(StatusBody.init) }
    }

    /// Reads a status object; nil without `source` and `state`.
    public init?(_ o: JSONObject) {
        guard let source = o["source"]?.stringValue, let state = o["state"]?.stringValue else { return nil }
        self.init(
            source: source, state: state, message: o["message"]?.stringValue ?? "", device: o["device"]?.stringValue,
            rateHz: o["rate_hz"]?.doubleValue, retryIn: o["retry_in_s"]?.doubleValue)
    }
}

/// A `fix` line's body: only what gpsd knew, rounded to what a GPS resolves (~1 cm, 1 cm/s,
/// 0.1°) so lines are short and free of float noise.
public struct FixBody: Sendable, Equatable {
    /// 0 = unknown, 1 = no fix, 2 = 2D, 3 = 3D (gpsd's `mode`).
    public var mode: Int
    /// The fix's GPS time, ns since the Unix epoch.
    public var timeNs: Nanoseconds?
    /// Degrees (WGS 84).
    public var lat: Double?, lon: Double?
    /// Metres above mean sea level.
    public var altM: Double?
    /// Ground speed, m/s.
    public var speedMps: Double?
    /// Course over ground, degrees.
    public var trackDeg: Double?
    /// Uncertainties (95 %), metres.
    public var ephM: Double?, epvM: Double?
    /// Seconds from the host's clock to the fix's time, when more than a day apart.
    public var clockOffsetS: Double?

    /// A fix body; unknown values nil.
    public init(
        mode: Int, timeNs: Nanoseconds? = nil, lat: Double? = nil, lon: Double? = nil, altM: Double? = nil,
        speedMps: Double? = nil, trackDeg: Double? = nil, ephM: Double? = nil, epvM: Double? = nil,
        clockOffsetS: Double? = nil
    ) {
        self.mode = mode; self.timeNs = timeNs; self.lat = lat; self.lon = lon; self.altM = altM
        self.speedMps = speedMps; self.trackDeg = trackDeg; self.ephM = ephM; self.epvM = epvM
        self.clockOffsetS = clockOffsetS
    }

    /// The fields in wire order, rounded.
    public var object: JSONObject {
        func r(_ v: Double, _ digits: Double) -> JSONValue { .number((v * digits).rounded() / digits) }
        var o: JSONObject = ["mode": .int(Int64(mode))]
        if let v = timeNs { o["time_ns"] = .int(v) }
        if let v = lat { o["lat"] = r(v, 1e7) }
        if let v = lon { o["lon"] = r(v, 1e7) }
        if let v = altM { o["alt_m"] = r(v, 100) }
        if let v = speedMps { o["speed_mps"] = r(v, 100) }
        if let v = trackDeg { o["track_deg"] = r(v, 10) }
        if let v = ephM { o["eph_m"] = r(v, 100) }
        if let v = epvM { o["epv_m"] = r(v, 100) }
        if let v = clockOffsetS { o["clock_offset_s"] = .number(v.rounded()) }
        return o
    }

    /// Reads a fix object; nil without `mode`.
    public init?(_ o: JSONObject) {
        guard let mode = o["mode"]?.intValue else { return nil }
        self.init(
            mode: Int(mode), timeNs: o["time_ns"]?.intValue, lat: o["lat"]?.doubleValue, lon: o["lon"]?.doubleValue,
            altM: o["alt_m"]?.doubleValue, speedMps: o["speed_mps"]?.doubleValue,
            trackDeg: o["track_deg"]?.doubleValue, ephM: o["eph_m"]?.doubleValue, epvM: o["epv_m"]?.doubleValue,
            clockOffsetS: o["clock_offset_s"]?.doubleValue)
    }
}

/// A `reply` line, decoded (the daemon encodes it with `Event.reply`).
public struct ReplyBody: Sendable, Equatable {
    /// The request's id, echoed (null when the request had none).
    public var id: JSONValue
    /// The command, when the request named a known one.
    public var cmd: String?
    /// Whether the command succeeded.
    public var ok: Bool
    /// Why not, when `ok` is false.
    public var error: ProtocolError?
    /// The whole line's fields (`class`, `seq`, `id`, … and the command's result fields).
    public var fields: JSONObject

    /// Reads a reply object; nil without `ok`.
    public init?(_ o: JSONObject) {
        guard let ok = o["ok"]?.boolValue else { return nil }
        id = o["id"] ?? .null
        cmd = o["cmd"]?.stringValue
        self.ok = ok
        fields = o
        if !ok {
            let e = o["error"]
            error = ProtocolError(
                ProtocolError.Code(rawValue: e?["code"]?.stringValue ?? "internal"),
                e?["message"]?.stringValue ?? "")
        }
    }

    /// A result field.
    public subscript(key: String) -> JSONValue? { fields[key] }
}

/// A `hello` line, decoded (the daemon encodes it with `Event.hello`).
public struct HelloBody: Sendable, Equatable {
    /// tiltd's version.
    public var version: String
    /// The protocol number (`ProtocolVersion.number` for this build).
    public var protocolNumber: Int
    /// The sources' latest states.
    public var sources: [StatusBody]
    /// The client as the daemon sees it.
    public var client: ClientBody?
    /// The game's state.
    public var game: GameStateBody?
    /// The latest fix, when there is one.
    public var fix: FixBody?
    /// The whole line's fields (`watch`, …).
    public var fields: JSONObject

    /// Reads a hello object; nil without `version` and `protocol`.
    public init?(_ o: JSONObject) {
        guard let v = o["version"]?.stringValue, let p = o["protocol"]?.intValue else { return nil }
        version = v
        protocolNumber = Int(p)
        sources = StatusBody.list(o["sources"])
        client = o["client"]?.objectValue.map(ClientBody.init)
        game = o["game"]?.objectValue.flatMap(GameStateBody.init)
        fix = o["fix"]?.objectValue.flatMap(FixBody.init)
        fields = o
    }
}

/// The protocol's version: the `protocol` field of `hello`. It changes only when a change would
/// break a client written against docs/protocol.md (a field removed or its meaning changed).
public enum ProtocolVersion {
    /// This build's protocol number.
    public static let number = 1
}
