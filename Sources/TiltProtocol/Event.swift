// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// The kinds of line the daemon sends. A client's `watch` picks among them.
public enum EventClass: String, CaseIterable, Sendable, Codable {
    case hello, status, attitude, sample, game, fix, place, quest, credit, reply, gap

    /// Sent to every client unless it narrows its `watch`.
    public static let defaultStream: Set<EventClass> = [.status, .attitude, .game, .fix, .place, .quest, .credit]
    /// Always delivered, whatever the client watches.
    public static let alwaysDelivered: Set<EventClass> = [.hello, .reply, .gap]

    /// Lines whose `t_ns` is GPS time (ns since the Unix epoch, as the receiver reported it).
    /// They carry no `t_ns` when no GPS time is known: the IMU's clock is another clock, and one
    /// field never mixes two (docs/protocol.md). Every other class uses the IMU's sample clock.
    public var usesGPSTime: Bool {
        switch self {
        case .fix, .place, .quest, .credit: true
        default: false
        }
    }
}

/// One outgoing event before it has a sequence number. The hub numbers it and encodes it once
/// for all clients.
public struct Event: Sendable {
    /// What follows `class`, `seq` and `t_ns` on the line.
    public enum Payload: Sendable {
        /// An `attitude` line's body (TiltCore makes it from an `Attitude`).
        case attitude(AttitudeBody)
        /// A `sample` line's body.
        case sample(SampleBody)
        case fields(JSONObject)
    }

    /// The line's class (what a client's `watch` filters on).
    public var cls: EventClass
    /// The sample (or fix) time the event belongs to, if any.
    public var t: Nanoseconds?
    /// The line's body.
    public var payload: Payload

    /// An event of `cls` at sample time `t` (nil: the hub stamps the latest).
    public init(_ cls: EventClass, t: Nanoseconds?, _ payload: Payload) {
        self.cls = cls; self.t = t; self.payload = payload
    }

    /// An event whose body is `fields`, in order.
    public init(_ cls: EventClass, t: Nanoseconds?, fields: JSONObject) {
        self.init(cls, t: t, .fields(fields))
    }

    /// Encodes the event as one JSON line (with the trailing newline).
    /// Field order: class, seq, t_ns, then the payload's fields.
    public func encode(seq: UInt64) -> [UInt8] { withEncoded(seq: seq) { Array($0) } }

    /// Encodes the event as one JSON line (with the trailing newline) in stack memory and calls
    /// `body` with it (valid only inside `body`): the hub copies it once into the line it shares,
    /// so the per-sample path allocates nothing else.
    public func withEncoded<R>(seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        // An attitude line is about 200 bytes; longer ones (hello, status) move to the heap.
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { buffer in
            var w = JSONWriter(over: buffer)
            write(seq: seq, into: &w)
            w.appendRaw(0x0A)
            return try w.withBytes(body)
        }
    }

    private func write(seq: UInt64, into w: inout JSONWriter) {
        w.beginObject()
        // Field names are literals (`key(literal:)`): the per-sample lines skip the escape scan.
        w.key(literal: "class"); w.string(cls.rawValue)
        w.key(literal: "seq"); w.int(Int64(seq))
        if let t { w.key(literal: "t_ns"); w.int(t) }
        switch payload {
        case .attitude(let a): a.write(into: &w)
        case .sample(let s): s.write(into: &w)
        case .fields(let o):
            for (k, v) in o.entries { w.field(k, v) }
        }
        w.endObject()
    }
}
