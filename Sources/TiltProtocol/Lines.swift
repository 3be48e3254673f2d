// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// The bodies of the lines the daemon itself composes — replies, `status`, `fix`, `gap`,
/// `hello` — in one place. Every line, these and the game/place/quest/credit events the core
/// builds, is encoded by `Event.encode(seq:)` alone.
extension Event {
    /// A successful reply to `cmd`, with result fields.
    public static func reply(id: JSONValue?, cmd: String, result: JSONObject = JSONObject()) -> Event {
        var o = JSONObject()
        o["id"] = id ?? .null
        o["cmd"] = .string(cmd)
        o["ok"] = .bool(true)
        for (k, v) in result.entries { o[k] = v }
        return Event(.reply, t: nil, fields: o)
    }

    /// A successful reply line as a gateway (the MQTT bridge) sends it itself, without `seq`.
    public static func replyObject(id: JSONValue, cmd: String, result: JSONObject = JSONObject()) -> JSONObject {
        var o: JSONObject = ["class": "reply", "id": id, "cmd": .string(cmd), "ok": true]
        for (k, v) in result.entries { o[k] = v }
        return o
    }

    /// An error reply. `cmd` is nil when the request named no known command.
    public static func reply(id: JSONValue?, cmd: String?, error: ProtocolError) -> Event {
        var o = JSONObject()
        o["id"] = id ?? .null
        o["cmd"] = cmd.map { .string($0) } ?? .null
        o["ok"] = .bool(false)
        o["error"] = .object(["code": .string(error.code.rawValue), "message": .string(error.message)])
        return Event(.reply, t: nil, fields: o)
    }

    /// A `status` line: `source` (imu, magnetometer, gps, store, config, game) is in `state`; the optional
    /// fields only when known (`rate_hz` in Hz, `retry_in_s` in seconds).
    public static func status(
        source: String, state: String, message: String, device: String? = nil,
        rateHz: Double? = nil, retryIn: Double? = nil
    ) -> Event {
        Event(
            .status, t: nil,
            fields: statusFields(
                source: source, state: state, message: message, device: device,
                rateHz: rateHz, retryIn: retryIn))
    }

    /// A `status` line's fields (also the elements of `sources` in `hello` and `status`).
    public static func statusFields(
        source: String, state: String, message: String, device: String? = nil,
        rateHz: Double? = nil, retryIn: Double? = nil
    ) -> JSONObject {
        StatusBody(source: source, state: state, message: message, device: device, rateHz: rateHz, retryIn: retryIn)
            .object
    }

    /// A `gap` line: this client lost `dropped` lines.
    public static func gap(dropped: Int) -> Event {
        Event(.gap, t: nil, fields: ["dropped": .int(Int64(dropped))])
    }

    /// A `fix` line, stamped with the fix's time.
    public static func fix(_ f: FixBody) -> Event { Event(.fix, t: f.timeNs, fields: f.object) }

    /// The `hello` line: versions, the client as the daemon sees it, then `state` (sources,
    /// game, fix, watch — from the daemon's components).
    public static func hello(
        version: String, protocolNumber: Int, client: JSONObject, state: JSONObject,
        t: Nanoseconds?
    ) -> Event {
        var o = JSONObject()
        o["version"] = .string(version)
        o["protocol"] = .int(Int64(protocolNumber))
        o["client"] = .object(client)
        for (k, v) in state.entries { o[k] = v }
        return Event(.hello, t: t, fields: o)
    }
}

extension Event {
    /// A `credit` line for a redeem that was committed: `amount` spent, `balance` left.
    public static func creditRedeemed(amount: Int, balance: Int, requestID: String, t: Nanoseconds?) -> Event {
        Event(
            .credit, t: t,
            fields: [
                "event": "redeemed", "amount": .int(Int64(amount)), "balance": .int(Int64(balance)),
                "request_id": .string(requestID),
            ])
    }

    /// The class of an encoded line (`{"class":"…"`, as `encode` writes it first), for counting
    /// dropped lines without keeping the class next to every queued line.
    public static func lineClass<C: Collection>(_ line: C) -> EventClass? where C.Element == UInt8 {
        let prefix = Array(#"{"class":""#.utf8)
        guard line.count > prefix.count, line.starts(with: prefix) else { return nil }
        let rest = line.dropFirst(prefix.count)
        guard let end = rest.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return EventClass(rawValue: String(decoding: rest[..<end], as: UTF8.self))
    }
}
