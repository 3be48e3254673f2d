// SPDX-License-Identifier: Apache-2.0
import DequeModule

/// One message to publish.
public struct OutgoingMessage: Sendable, Equatable {
    /// The topic.
    public var topic: String
    /// The payload bytes.
    public var payload: [UInt8]
    /// 0 or 1.
    public var qos: Int32
    /// Whether the broker keeps it for later subscribers.
    public var retain: Bool
    /// A message.
    public init(topic: String, payload: [UInt8], qos: Int32, retain: Bool) {
        self.topic = topic; self.payload = payload; self.qos = qos; self.retain = retain
    }
}

/// The bounded buffer in front of libmosquitto for QoS 1 messages, so nothing is lost while the
/// broker is away — up to `capacity` messages, after which the oldest waiting ones are dropped
/// and counted (`overflowed`), never the process's memory.
///
/// libmosquitto itself keeps every QoS 1 message it was given until the broker acknowledges
/// it (and sends it again after a reconnect), but without a bound. So messages are handed to it
/// only while connected and while fewer than `inflightLimit` are unacknowledged; the rest wait
/// here. QoS 0 messages are never buffered: sent when connected, dropped (not counted) when not.
/// Pure bookkeeping: the bridge does the sending.
public struct PublishQueue: Sendable {
    /// Most QoS 1 messages held (waiting here plus unacknowledged in libmosquitto).
    public let capacity: Int
    /// Most QoS 1 messages handed to libmosquitto and not yet acknowledged.
    public let inflightLimit: Int
    /// Whether the broker connection is up.
    public private(set) var connected = false
    /// QoS 1 messages waiting to be handed over.
    public private(set) var waiting = Deque<OutgoingMessage>()
    /// Message ids handed over and not yet acknowledged.
    public private(set) var inflight = Set<Int32>()
    /// QoS 1 messages dropped because the buffer was full, since start.
    public private(set) var overflowed = 0
    /// The same, per topic.
    public private(set) var overflowedPerTopic: [String: Int] = [:]

    /// A queue for at most `capacity` QoS 1 messages.
    public init(capacity: Int, inflightLimit: Int = 20) {
        self.capacity = max(1, capacity)
        self.inflightLimit = max(1, min(inflightLimit, capacity))
    }

    /// What to do with a message now.
    public enum Action: Equatable, Sendable {
        /// Hand it to libmosquitto now.
        case send
        /// Kept for later (or dropped: QoS 0 while disconnected).
        case held
    }

    /// Offers `m`: returns `.send` when it should go out now; otherwise it is held (QoS 1, the
    /// oldest waiting message dropped if full) or dropped (QoS 0 while disconnected).
    public mutating func offer(_ m: OutgoingMessage) -> Action {
        if m.qos == 0 { return connected ? .send : .held }
        if connected && waiting.isEmpty && inflight.count < inflightLimit { return .send }
        if waiting.count + inflight.count >= capacity {
            let dropped = waiting.isEmpty ? m : waiting.removeFirst()
            overflowed += 1
            overflowedPerTopic[dropped.topic, default: 0] += 1
            if waiting.isEmpty && dropped == m { return .held }
        }
        waiting.append(m)
        return .held
    }

    /// libmosquitto took QoS 1 message `mid`.
    public mutating func handedOver(mid: Int32) { inflight.insert(mid) }

    /// The broker acknowledged `mid`.
    public mutating func acknowledged(mid: Int32) { inflight.remove(mid) }

    /// The connection came up or went down.
    public mutating func setConnected(_ up: Bool) { connected = up }

    /// The next waiting messages that may be handed over now (call after a connect or an ack).
    public mutating func drain() -> [OutgoingMessage] {
        guard connected else { return [] }
        var out: [OutgoingMessage] = []
        while inflight.count + out.count < inflightLimit, let m = waiting.popFirst() { out.append(m) }
        return out
    }
}
