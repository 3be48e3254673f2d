// SPDX-License-Identifier: Apache-2.0
import CLibMosquitto
import FoundationEssentials
import Glibc

/// What libmosquitto's network thread reports, handed on in the order it happened.
public enum MQTTEvent: Sendable {
    /// The broker accepted (`code` 0) or refused (CONNACK code) the connection.
    case connected(code: Int32)
    /// The connection ended; `code` 0 means we asked for it.
    case disconnected(code: Int32)
    /// A message arrived on a subscribed topic.
    case message(topic: String, payload: [UInt8], retained: Bool)
    /// The broker acknowledged the QoS ≥ 1 message with this id (for QoS 0: it was written).
    case published(mid: Int32)
}

/// An error from libmosquitto, with its text.
public struct MQTTError: Error, CustomStringConvertible {
    /// libmosquitto's error number (MOSQ_ERR_*).
    public var code: Int32
    /// What was being done.
    public var operation: String
    /// The operation and libmosquitto's text for the code.
    public var description: String { "\(operation): \(String(cString: mosquitto_strerror(code)))" }
}

/// A thin Swift face on one libmosquitto client running its own network thread
/// (`mosquitto_loop_start`). libmosquitto is thread-safe in that mode, so `publish` and
/// `subscribe` may be called from any thread; every callback is turned into an `MQTTEvent` and
/// passed to `onEvent` on libmosquitto's thread (keep it short: hand the event on).
///
/// Reconnecting is libmosquitto's: after a lost connection its thread reconnects with
/// exponential backoff (`reconnectDelay`), and the session's unacknowledged QoS 1 messages are
/// sent again.
public final class MosquittoClient: @unchecked Sendable {
    // @unchecked: the handle is only used through libmosquitto's thread-safe calls
    // (mosquitto_threaded_set is implied by loop_start); `onEvent` is immutable.
    private let handle: OpaquePointer
    private let onEvent: @Sendable (MQTTEvent) -> Void

    private static let libraryInit: Void = { mosquitto_lib_init() }()

    /// A client with `clientID`; a clean session means the broker forgets our subscriptions and
    /// queued messages when we disconnect.
    public init(clientID: String, cleanSession: Bool = true, onEvent: @escaping @Sendable (MQTTEvent) -> Void) throws {
        _ = Self.libraryInit
        self.onEvent = onEvent
        guard let h = mosquitto_new(clientID, cleanSession, nil) else {
            throw MQTTError(code: Int32(MOSQ_ERR_NOMEM.rawValue), operation: "mosquitto_new")
        }
        handle = h
        mosquitto_user_data_set(h, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(h) { _, obj, rc in MosquittoClient.from(obj)?.onEvent(.connected(code: rc)) }
        mosquitto_disconnect_callback_set(h) { _, obj, rc in MosquittoClient.from(obj)?.onEvent(.disconnected(code: rc))
        }
        mosquitto_publish_callback_set(h) { _, obj, mid in MosquittoClient.from(obj)?.onEvent(.published(mid: mid)) }
        mosquitto_message_callback_set(h) { _, obj, msg in
            guard let c = MosquittoClient.from(obj), let m = msg?.pointee, let topic = m.topic else { return }
            let payload =
                m.payloadlen > 0 && m.payload != nil
                ? Array(UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen))) : []
            c.onEvent(.message(topic: String(cString: topic), payload: payload, retained: m.retain))
        }
    }

    private static func from(_ obj: UnsafeMutableRawPointer?) -> MosquittoClient? {
        obj.map { Unmanaged<MosquittoClient>.fromOpaque($0).takeUnretainedValue() }
    }

    deinit {
        mosquitto_loop_stop(handle, true)
        mosquitto_destroy(handle)
    }

    private func check(_ rc: Int32, _ op: String) throws {
        if rc != MOSQ_ERR_SUCCESS.rawValue { throw MQTTError(code: rc, operation: op) }
    }

    /// Username and password for the broker.
    public func setCredentials(username: String, password: String?) throws {
        try check(mosquitto_username_pw_set(handle, username, password), "username/password")
    }

    /// TLS, the broker verified against the CA file `caFile` or the hashed CA directory `caPath`
    /// (the system store), optionally with a client certificate and key.
    public func setTLS(caFile: String?, caPath: String?, certFile: String?, keyFile: String?) throws {
        try check(mosquitto_tls_set(handle, caFile, caPath, certFile, keyFile, nil), "TLS setup")
    }

    /// The message the broker publishes for us if we vanish without saying goodbye.
    public func setWill(topic: String, payload: [UInt8], qos: Int32, retain: Bool) throws {
        try check(
            payload.withUnsafeBytes { mosquitto_will_set(handle, topic, Int32($0.count), $0.baseAddress, qos, retain) },
            "last will")
    }

    /// Reconnect backoff: from `initial` seconds doubling to `maximum`.
    public func setReconnectDelay(initial: UInt32, maximum: UInt32) throws {
        try check(mosquitto_reconnect_delay_set(handle, initial, maximum, true), "reconnect delay")
    }

    /// Starts the network thread and the first connection attempt (which completes, or fails
    /// and is retried, in the background: watch for `.connected`).
    public func start(host: String, port: Int, keepalive: Int) throws {
        _ = mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)
        let rc = mosquitto_connect_async(handle, host, Int32(port), Int32(keepalive))
        // A refused or unresolvable first attempt is not fatal: the loop thread keeps retrying.
        if rc != MOSQ_ERR_SUCCESS.rawValue && rc != MOSQ_ERR_ERRNO.rawValue && rc != MOSQ_ERR_EAI.rawValue {
            throw MQTTError(code: rc, operation: "connect to \(host):\(port)")
        }
        try check(mosquitto_loop_start(handle), "start network thread")
        if rc != MOSQ_ERR_SUCCESS.rawValue { onEvent(.disconnected(code: rc)) }
    }

    /// Publishes; returns the message id (matched by `.published`). While disconnected, a
    /// QoS ≥ 1 message is queued by libmosquitto and sent after the reconnect.
    @discardableResult
    public func publish(_ topic: String, _ payload: [UInt8], qos: Int32, retain: Bool) throws -> Int32 {
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes {
            mosquitto_publish(handle, &mid, topic, Int32($0.count), $0.baseAddress, qos, retain)
        }
        if rc != MOSQ_ERR_SUCCESS.rawValue && !(rc == MOSQ_ERR_NO_CONN.rawValue && qos > 0) {
            throw MQTTError(code: rc, operation: "publish \(topic)")
        }
        return mid
    }

    /// Subscribes to `pattern` (MQTT wildcards allowed).
    public func subscribe(_ pattern: String, qos: Int32) throws {
        try check(mosquitto_subscribe(handle, nil, pattern, qos), "subscribe \(pattern)")
    }

    /// Unsubscribes from `pattern`.
    public func unsubscribe(_ pattern: String) throws {
        try check(mosquitto_unsubscribe(handle, nil, pattern), "unsubscribe \(pattern)")
    }

    /// Disconnects cleanly (the broker does not send the will) and stops the network thread.
    public func stop() {
        _ = mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
    }

    /// The broker's reason for refusing a connection (a CONNACK code), in words.
    public static func connackText(_ code: Int32) -> String { String(cString: mosquitto_connack_string(code)) }

    /// Whether `topic` matches the subscription `pattern` (MQTT wildcard rules).
    public static func topic(_ topic: String, matches pattern: String) -> Bool {
        var r = false
        _ = mosquitto_topic_matches_sub(pattern, topic, &r)
        return r
    }
}
