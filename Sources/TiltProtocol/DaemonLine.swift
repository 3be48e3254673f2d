// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// One line from the daemon as a client receives it: the text as sent (the web screen forwards
/// it to browsers unchanged, the MQTT bridge publishes it), the parsed object, and its class.
/// `body` decodes the class's fields into the same types the daemon encodes them from.
public struct DaemonLine: Sendable {
    /// The line without its newline.
    public let text: String
    /// The parsed line.
    public let object: JSONObject
    /// The line's class; nil for a class this build does not know (a newer daemon's).
    public let cls: EventClass?

    /// The line parsed from `text`; nil unless it is a JSON object.
    public init?(text: String) {
        guard let v = try? JSONParser.parse(text), let o = v.objectValue else { return nil }
        self.text = text
        self.object = o
        self.cls = o["class"]?.stringValue.flatMap(EventClass.init(rawValue:))
    }

    /// The line parsed from its bytes (without the newline).
    public init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        self.init(text: String(decoding: bytes, as: UTF8.self))
    }

    /// The parsed line as a value.
    public var value: JSONValue { .object(object) }
    /// `class` as sent (`""` when missing).
    public var className: String { object["class"]?.stringValue ?? "" }
    /// `seq` of the line (the daemon's sequence number), when it has one.
    public var seq: Int64? { object["seq"]?.intValue }
    /// `t_ns` of the line, when it has one (on the clock `EventClass.usesGPSTime` names).
    public var tNs: Nanoseconds? { object["t_ns"]?.intValue }
    /// `id` of a reply line (the request's, echoed), when it has one: read before the body, so
    /// that a client can match even a malformed reply to what it asked.
    public var replyID: JSONValue? { cls == .reply ? object["id"] : nil }
    /// A field of the line.
    public subscript(key: String) -> JSONValue? { object[key] }

    /// The line's fields, typed by class.
    public var body: Body {
        switch cls {
        case .hello: HelloBody(object).map(Body.hello) ?? .malformed
        case .status: StatusBody(object).map(Body.status) ?? .malformed
        case .attitude: AttitudeBody(object).map(Body.attitude) ?? .malformed
        case .sample: SampleBody(object).map(Body.sample) ?? .malformed
        case .fix: FixBody(object).map(Body.fix) ?? .malformed
        case .reply: ReplyBody(object).map(Body.reply) ?? .malformed
        case .gap: object["dropped"]?.intValue.map { .gap(dropped: Int($0)) } ?? .malformed
        case .game: GameBody(object).map(Body.game) ?? .malformed
        // These carry their kind in `event` and fields that depend on it (docs/protocol.md).
        case .place, .quest, .credit: .event(cls!, kind: object["event"]?.stringValue ?? "")
        case nil: .unknown
        }
    }

    /// A line's fields, typed by class.
    public enum Body: Sendable, Equatable {
        /// The first line on every connection.
        case hello(HelloBody)
        /// A source's state changed.
        case status(StatusBody)
        /// The estimated orientation.
        case attitude(AttitudeBody)
        /// A calibrated raw sample.
        case sample(SampleBody)
        /// A GPS fix.
        case fix(FixBody)
        /// The answer to a request.
        case reply(ReplyBody)
        /// This client lost `dropped` lines.
        case gap(dropped: Int)
        /// A `game` line: what happened in the game (or a room's round, kind `shared`).
        case game(GameBody)
        /// A `place`, `quest` or `credit` line and its kind (`enter`, `granted`, …); read the rest
        /// from the line's fields.
        case event(EventClass, kind: String)
        /// A known class whose required fields are missing or mistyped.
        case malformed
        /// A class this build does not know.
        case unknown
    }
}
