// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// One simulated device for the MQTT tests: a real `tiltd run` replaying a recording and a real
/// `tiltd mqtt` bridging it to the test's Mosquitto, each in its own directory.
final class MQTTDevice {
    let name: String
    let dir: String
    let config: String
    let recording: String
    let speed: Double
    private(set) var daemon: DaemonProcess?
    private(set) var bridge: DaemonProcess?
    private var runs = 0

    /// Writes the device's config: `[mqtt]` with `mqtt` extra lines.
    init(
        name: String, base: String, brokerPort: Int, recording: String, speed: Double, mqtt: String, extra: String = ""
    ) throws {
        self.name = name
        dir = "\(base)/\(name)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        config = "\(dir)/tiltd.toml"
        self.recording = recording
        self.speed = speed
        try """
        [socket]
        path = "\(dir)/tiltd.sock"
        [store]
        path = "\(dir)/tiltd.sqlite"
        [mqtt]
        name = "\(name)"
        broker = "127.0.0.1:\(brokerPort)"
        \(mqtt)
        \(extra)
        """.write(toFile: config, atomically: true, encoding: .utf8)
    }

    var socket: String { "\(dir)/tiltd.sock" }

    func startDaemon() throws {
        runs += 1
        daemon = try DaemonProcess(
            ["run", "--config", config, "--replay", recording, "--speed", "\(speed)"],
            logPath: "\(dir)/daemon-\(runs).log")
    }

    func startBridge() throws {
        runs += 1
        bridge = try DaemonProcess(["mqtt", "--config", config], logPath: "\(dir)/bridge-\(runs).log")
    }

    /// Kills the daemon without a goodbye.
    func killDaemon() { daemon?.stop(signal: SIGKILL) }
    func killBridge() { bridge?.stop(signal: SIGKILL) }

    /// Stops both; returns the exit statuses (daemon, bridge).
    @discardableResult
    func stop() -> (Int32?, Int32?) {
        let b = bridge?.stop()
        let d = daemon?.stop()
        bridge = nil; daemon = nil
        return (d, b)
    }

    /// Every log this device wrote, for failure messages.
    var logs: String {
        let files =
            (try? FileManager.default.contentsOfDirectory(atPath: dir))?.filter { $0.hasSuffix(".log") }.sorted() ?? []
        return files.map { f in
            "--- \(name)/\(f)\n" + ((try? String(contentsOfFile: "\(dir)/\(f)", encoding: .utf8)) ?? "")
        }
        .joined(separator: "\n")
    }
}

/// Skips (or fails under CI=true) when mosquitto is missing.
func requireMosquitto() throws {
    if let reason = MosquittoRig.unavailableReason {
        if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail("mosquitto required in CI: \(reason)") }
        throw XCTSkip(reason)
    }
}

func json(_ s: String) -> JSONValue? { try? JSONParser.parse(s) }

/// The fields Home Assistant documents for MQTT sensors, binary sensors and events (its
/// `sensor.mqtt`, `binary_sensor.mqtt` and `event.mqtt` pages): a discovery config using any
/// other key is ignored or rejected by Home Assistant. Shared keys first.
enum HomeAssistantSchema {
    static let common: Set<String> = [
        "availability", "availability_mode", "availability_template", "availability_topic", "device", "device_class",
        "enabled_by_default", "encoding", "entity_category", "entity_picture", "icon", "json_attributes_template",
        "json_attributes_topic", "name", "object_id", "default_entity_id", "origin", "payload_available",
        "payload_not_available", "qos",
        "state_topic", "unique_id", "value_template", "platform",
    ]
    static let perComponent: [String: Set<String>] = [
        "sensor": [
            "expire_after", "force_update", "last_reset_value_template", "options", "suggested_display_precision",
            "state_class", "unit_of_measurement",
        ],
        "binary_sensor": ["expire_after", "force_update", "off_delay", "payload_off", "payload_on"],
        "event": ["event_types"],
    ]
    static let required: [String: Set<String>] = [
        "sensor": ["state_topic"], "binary_sensor": ["state_topic"], "event": ["state_topic", "event_types"],
    ]
    static let deviceKeys: Set<String> = [
        "configuration_url", "connections", "hw_version", "identifiers", "manufacturer", "model", "model_id", "name",
        "serial_number", "suggested_area", "sw_version", "via_device",
    ]
    static let originKeys: Set<String> = ["name", "sw_version", "support_url"]
    static let sensorStateClasses: Set<String> = ["measurement", "total", "total_increasing", "measurement_angle"]

    /// Problems with one config payload, empty when it follows the schema.
    static func problems(component: String, config: JSONObject) -> [String] {
        var out: [String] = []
        guard let extra = perComponent[component] else { return ["unknown component \(component)"] }
        for k in config.keys where !common.contains(k) && !extra.contains(k) {
            out.append("\(component): unknown key \(k)")
        }
        for k in required[component] ?? [] where config[k] == nil { out.append("\(component): missing \(k)") }
        if config["unique_id"]?.stringValue == nil { out.append("no unique_id (device registry needs it)") }
        if let d = config["device"]?.objectValue {
            for k in d.keys where !deviceKeys.contains(k) { out.append("device: unknown key \(k)") }
            if d["identifiers"] == nil && d["connections"] == nil {
                out.append("device: needs identifiers or connections")
            }
        } else {
            out.append("no device")
        }
        if let o = config["origin"]?.objectValue {
            for k in o.keys where !originKeys.contains(k) { out.append("origin: unknown key \(k)") }
            if o["name"] == nil { out.append("origin: missing name") }
        }
        if let sc = config["state_class"]?.stringValue, !sensorStateClasses.contains(sc) {
            out.append("bad state_class \(sc)")
        }
        if component == "event", config["event_types"]?.arrayValue?.allSatisfy({ $0.stringValue != nil }) != true {
            out.append("event_types must be a list of strings")
        }
        return out
    }
}
