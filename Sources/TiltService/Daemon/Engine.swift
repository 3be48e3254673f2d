import Foundation
import Logging
import NIOCore
import TiltCore
import TiltSensors

/// The daemon's state and the only place it changes: sensor outputs and client requests
/// arrive here on the hub's event loop, one at a time, and every change is published to all
/// clients (host-authoritative).
public final class Engine: RequestHandler, @unchecked Sendable {
    public let hub: Hub
    let logger: Logger
    public private(set) var config: Configuration

    /// Latest status per source ("imu", "gps").
    private(set) var statuses: [String: SourceStatus] = [:]
    private(set) var samplesSeen = 0
    private var rateMeter = RateMeter()
    public private(set) var lastAttitude: Attitude?
    /// Called on every sample; drives the systemd watchdog from the sampling path.
    public var onSample: (@Sendable () -> Void)?

    public init(hub: Hub, config: Configuration, logger: Logger) {
        self.hub = hub; self.config = config; self.logger = logger
        hub.handler = self
    }

    /// Applies a reloaded configuration (on the loop). New connections get the new socket
    /// settings; connected clients keep theirs.
    public func apply(_ new: Configuration) {
        config = new
        hub.socketConfig = new.socket
    }

    // MARK: sensor input (on the loop)

    /// A calibrated sample and the attitude computed from it.
    public func ingest(sample: IMUSample, attitude: Attitude) {
        samplesSeen += 1
        rateMeter.add(sample.t)
        lastAttitude = attitude
        hub.publish(Event(.sample, t: sample.t, .sample(sample)))
        hub.publish(Event(.attitude, t: attitude.t, .attitude(attitude)))
        onSample?()
    }

    public func ingest(status: SourceStatus) {
        statuses[status.source] = status
        switch status.state {
        case .retrying: logger.warning("\(status.source): \(status.message)")
        default: logger.info("\(status.source): \(status.message)")
        }
        hub.publish(Event(.status, t: nil, fields: Self.json(status)))
    }

    static func json(_ s: SourceStatus) -> JSONObject {
        var o = JSONObject()
        o["source"] = .string(s.source)
        o["state"] = .string(s.state.rawValue)
        o["message"] = .string(s.message)
        if let d = s.device { o["device"] = .string(d) }
        if let r = s.rateHz { o["rate_hz"] = .number(r) }
        if let r = s.retryIn { o["retry_in_s"] = .number(r) }
        return o
    }

    // MARK: requests

    public func helloFields(for client: ClientSession) -> JSONObject {
        var o = JSONObject()
        o["sources"] = .array(statuses.keys.sorted().map { .object(Self.json(statuses[$0]!)) })
        o["watch"] = .object(client.watchState)
        return o
    }

    public func handle(_ request: Request, from client: ClientSession) {
        let cmd = request.command
        switch cmd {
        case .watch(let w):
            client.apply(w)
            client.reply(.reply(id: request.id, cmd: cmd.name, result: ["watch": .object(client.watchState)]))
        case .ping:
            client.reply(.reply(id: request.id, cmd: cmd.name, result: ["pong": true]))
        case .status:
            client.reply(.reply(id: request.id, cmd: cmd.name, result: statusFields()))
        default:
            client.reply(.reply(id: request.id, cmd: cmd.name, error: ProtocolError(.unavailable, "\(cmd.name) is not available in this build")))
        }
    }

    /// The body of a `status` reply.
    public func statusFields() -> JSONObject {
        var o = JSONObject()
        o["version"] = .string(TiltdVersion.string)
        o["sources"] = .array(statuses.keys.sorted().map { .object(Self.json(statuses[$0]!)) })
        o["samples"] = .int(Int64(samplesSeen))
        if let r = rateMeter.rateHz { o["sample_rate_hz"] = .number((r * 10).rounded() / 10) }
        o["clients"] = .int(Int64(hub.clientCount))
        o["dropped_lines"] = .int(Int64(hub.sessions.reduce(0) { $0 + $1.droppedTotal }))
        return o
    }

    /// One line for systemd's STATUS= and logs: "60 Hz from mpu6050, 3 clients, gpsd ok".
    public func statusLine() -> String {
        var parts: [String] = []
        if let imu = statuses["imu"] {
            if imu.state == .streaming, let r = rateMeter.rateHz {
                parts.append("\(Int(r.rounded())) Hz from \(imu.device ?? "imu")")
            } else {
                parts.append("imu \(imu.state.rawValue): \(imu.message)")
            }
        }
        parts.append("\(hub.clientCount) client\(hub.clientCount == 1 ? "" : "s")")
        if let gps = statuses["gps"] { parts.append("gpsd \(gps.state == .streaming ? "ok" : gps.state.rawValue)") }
        return parts.joined(separator: ", ")
    }
}

/// Measures the sample rate from sample times over the last ~second.
struct RateMeter {
    private var times: [Nanoseconds] = []
    private var head = 0

    mutating func add(_ t: Nanoseconds) {
        times.append(t)
        // Keep about one second; compact occasionally instead of shifting every sample.
        while head < times.count, t - times[head] > 1_000_000_000 { head += 1 }
        if head > 4096 { times.removeFirst(head); head = 0 }
    }

    var rateHz: Double? {
        let n = times.count - head
        guard n >= 2 else { return nil }
        let span = Double(times[times.count - 1] - times[head]) * 1e-9
        return span > 0 ? Double(n - 1) / span : nil
    }
}
