// SPDX-License-Identifier: Apache-2.0
/// JSON Schemas (draft 2020-12) of every line the daemon sends: one per line class and one per
/// command's reply, for clients in other languages (`tiltd schema DIR` writes them; the package
/// ships them in /usr/share/tiltd/schema; docs/protocol.md links them).
///
/// Made from the protocol's own declarations: the classes from `EventClass`, the typed bodies'
/// fields (`StatusBody`, `FixBody`, `AttitudeBody`, `SampleBody`, `HelloBody`, `GameBody`) as
/// their readers require them, the replies' fields from `CommandCatalogue` and the error codes from
/// `ProtocolError.Code.all`. Fields a body does not type (a round's result, the places') are allowed
/// with any value: the schemas pin what a client may rely on, not every field a line may carry.
public enum ProtocolSchema {
    /// Where the schemas say they live (`$id` prefix).
    public static let base = "https://tiltd.invalid/schema/"

    /// Every schema by file name: `line-CLASS.schema.json`, `reply-CMD.schema.json` and
    /// `tiltd-line.schema.json`, which accepts any line (it picks the class's schema by `class`).
    public static var files: [(name: String, schema: JSONValue)] {
        EventClass.allCases.map { ("line-\($0.rawValue).schema.json", line($0)) }
            + CommandCatalogue.commands.map { ("reply-\($0.name).schema.json", reply($0)) }
            + [("tiltd-line.schema.json", anyLine)]
    }

    // MARK: building blocks

    static func number(_ description: String) -> JSONValue { ["type": "number", "description": .string(description)] }
    static func integer(_ description: String) -> JSONValue {
        ["type": "integer", "description": .string(description)]
    }
    static func string(_ description: String) -> JSONValue { ["type": "string", "description": .string(description)] }
    static func boolean(_ description: String) -> JSONValue {
        ["type": "boolean", "description": .string(description)]
    }
    static func vector(_ n: Int, _ description: String) -> JSONValue {
        [
            "type": "array", "items": ["type": "number"], "minItems": .int(Int64(n)), "maxItems": .int(Int64(n)),
            "description": .string(description),
        ]
    }
    static func object(_ properties: JSONObject, required: [String], closed: Bool = false) -> JSONValue {
        var o: JSONObject = ["type": "object", "properties": .object(properties)]
        o["required"] = .array(required.map { .string($0) })
        if closed { o["additionalProperties"] = false }
        return .object(o)
    }

    /// The fields every line has (docs/protocol.md, "Lines").
    static func envelope(_ cls: EventClass) -> JSONObject {
        [
            "class": ["const": .string(cls.rawValue)],
            "seq": ["type": "integer", "minimum": 0, "description": "grows by one with every line the daemon encodes"],
            "t_ns": ["type": "integer", "description": "the sample time the line belongs to, ns (when known)"],
        ]
    }

    /// A `status` body (`StatusBody`): also each element of `sources`.
    static var statusFields: JSONObject {
        [
            "source": string("imu, magnetometer, gps, store, config, game, or a client's own"),
            "state": string("streaming, retrying, …"), "message": string("why, for people"),
            "device": string("the device, when known"), "rate_hz": number("the delivered rate, Hz"),
            "retry_in_s": number("seconds to the next attempt, while retrying"),
        ]
    }
    static let statusRequired = ["source", "state", "message"]

    /// A fix (`FixBody`): the `fix` line's fields and `hello`'s `fix`.
    static var fixFields: JSONObject {
        [
            "mode": ["type": "integer", "enum": [0, 1, 2, 3], "description": "gpsd's fix mode (2 = 2D, 3 = 3D)"],
            "time_ns": integer("GPS time since the Unix epoch, ns"),
            "lat": number("degrees north"), "lon": number("degrees east"), "alt_m": number("metres"),
            "speed_mps": number("ground speed, m/s"), "track_deg": number("course over ground, degrees"),
            "eph_m": number("horizontal error estimate, m"), "epv_m": number("vertical error estimate, m"),
            "clock_offset_s": number("GPS time minus the system clock, s"),
        ]
    }

    // MARK: lines

    /// The schema of one line class.
    public static func line(_ cls: EventClass) -> JSONValue {
        var p = envelope(cls)
        var required = ["class", "seq"]
        switch cls {
        case .hello:
            p["version"] = string("tiltd's version")
            p["protocol"] = ["const": .int(Int64(ProtocolVersion.number)), "description": "the protocol's number"]
            p["sources"] = ["type": "array", "items": object(statusFields, required: statusRequired)]
            p["fix"] = object(fixFields, required: ["mode"])
            p["game"] = ["type": "object"]
            p["client"] = ["type": "object"]
            p["watch"] = ["type": "object"]
            required += ["version", "protocol", "sources"]
        case .status:
            for (k, v) in statusFields.entries { p[k] = v }
            required += statusRequired
        case .attitude:
            p["q"] = vector(4, "unit quaternion [w, x, y, z], sensor → z-up world")
            p["roll_deg"] = number("roll, degrees"); p["pitch_deg"] = number("pitch, degrees")
            p["yaw_deg"] = number("yaw, degrees (arbitrary without a heading)")
            p["at_rest"] = boolean("the estimator judges the device at rest")
            p["gyro_bias"] = vector(3, "the gyro bias the estimator has learnt, rad/s")
            p["heading_deg"] = number("magnetic heading, degrees")
            p["true_heading_deg"] = number("true heading, degrees")
            p["heading_source"] = [
                "enum": .array(HeadingSource.allCases.map { .string($0.rawValue) }),
                "description": "where the heading comes from",
            ]
            p["mag_disturbed"] = boolean("the magnetometer's field is judged disturbed")
            required += ["t_ns", "q", "roll_deg", "pitch_deg", "at_rest"]
        case .sample:
            p["accel"] = vector(3, "calibrated acceleration, m/s², gravity included")
            p["gyro"] = vector(3, "calibrated angular rate, rad/s (absent without a gyroscope)")
            required += ["t_ns", "accel"]
        case .fix:
            for (k, v) in fixFields.entries { p[k] = v }
            required += ["mode"]
        case .gap:
            p["dropped"] = ["type": "integer", "minimum": 1, "description": "lines dropped for this client"]
            required += ["dropped"]
        case .game:
            for (k, v) in GameBody.schemaFields.entries { p[k] = v }
            required += [GameBody.Key.kind]
        case .place, .quest, .credit:
            p["event"] = string("what happened (docs/protocol.md)")
            required += ["event"]
        case .reply:
            return replyBase(nil)
        }
        var o = object(p, required: required).objectValue!
        o["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        o["$id"] = .string(base + "line-\(cls.rawValue).schema.json")
        o["title"] = .string("tiltd \(cls.rawValue) line")
        return .object(o)
    }

    // MARK: replies

    /// A reply: `ok` true with the command's fields, or false with an `error` whose code is one
    /// of the protocol's. `spec` nil: any command's.
    static func replyBase(_ spec: CommandSpec?) -> JSONValue {
        var p = envelope(.reply)
        p["id"] = ["type": ["string", "number", "null"], "description": "the request's id, echoed"]
        p["cmd"] = spec.map { s -> JSONValue in ["const": .string(s.name)] } ?? ["type": ["string", "null"]]
        p["ok"] = boolean("whether the command succeeded")
        // A command's own codes, the common ones, and those any request line may get.
        let anyRequest: [ProtocolError.Code] = [.invalidJSON, .notAnObject, .lineTooLong, .unknownCommand, .forbidden]
        let codes =
            spec.map { CommandCatalogue.commonErrors + anyRequest + $0.errors } ?? ProtocolError.Code.all.map(\.code)
        let error = object(
            [
                "code": ["enum": .array(codes.map { .string($0.rawValue) })],
                "message": string("what went wrong, for people"),
            ], required: ["code", "message"])
        for f in spec?.reply ?? [] { p[f.name] = ["description": .string(f.meaning)] }
        var o = object(p, required: ["class", "seq", "id", "ok"]).objectValue!
        o["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        o["$id"] = .string(base + (spec.map { "reply-\($0.name).schema.json" } ?? "line-reply.schema.json"))
        o["title"] = .string(spec.map { "tiltd reply to \($0.name)" } ?? "tiltd reply line")
        // ok false carries an error; ok true none.
        o["if"] = ["properties": ["ok": ["const": false]]]
        o["then"] = ["required": ["error"], "properties": ["error": error]]
        o["else"] = ["not": ["required": ["error"]]]
        return .object(o)
    }

    /// The schema of the reply to `spec`.
    public static func reply(_ spec: CommandSpec) -> JSONValue { replyBase(spec) }

    /// Any line: the class's schema, chosen by `class`; a reply to a known command also meets
    /// that command's reply schema.
    static var anyLine: JSONValue {
        var all: [JSONValue] = EventClass.allCases.map { cls in
            [
                "if": ["properties": ["class": ["const": .string(cls.rawValue)]], "required": ["class"]],
                "then": ["$ref": .string("line-\(cls.rawValue).schema.json")],
            ]
        }
        all += CommandCatalogue.commands.map { spec in
            [
                "if": [
                    "properties": ["class": ["const": "reply"], "cmd": ["const": .string(spec.name)]],
                    "required": ["class", "cmd"],
                ],
                "then": ["$ref": .string("reply-\(spec.name).schema.json")],
            ]
        }
        return [
            "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": .string(base + "tiltd-line.schema.json"),
            "title": "any line tiltd sends",
            "type": "object", "required": ["class"],
            "properties": ["class": ["enum": .array(EventClass.allCases.map { .string($0.rawValue) })]],
            "allOf": .array(all),
        ]
    }
}

/// Object literals where a value is expected: the schemas are mostly nested objects.
extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object with the literal's members, in order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var o = JSONObject()
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
}
