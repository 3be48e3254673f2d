import Foundation
import TestSupport
import TiltCore
import XCTest

/// `tiltd mqtt` against a real Mosquitto and a real daemon replaying the bundled recording.
final class MQTTBridgeTests: XCTestCase {
    var dir = ""
    var broker: MosquittoRig?
    var devices: [MQTTDevice] = []

    override func setUpWithError() throws {
        try requireMosquitto()
        dir = makeTempDir("mqtt")
        broker = try MosquittoRig(dir: dir)
    }

    override func tearDown() {
        let failed = (testRun?.totalFailureCount ?? 0) > 0
        for d in devices {
            let (ds, bs) = d.stop()
            if failed { print(d.logs) }
            XCTAssertEqual(bs ?? 0, 0, "bridge \(d.name) exits 0 on SIGTERM")
            XCTAssertEqual(ds ?? 0, 0, "daemon \(d.name) exits 0 on SIGTERM")
        }
        if failed, let b = broker { print("--- mosquitto\n\(b.brokerLog.suffix(4000))") }
        broker?.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    func device(_ name: String, mqtt: String, speed: Double = 4, extra: String = "") throws -> MQTTDevice {
        let d = try MQTTDevice(name: name, base: dir, brokerPort: broker!.port, recording: "\(repositoryRoot)/config/demo/head.csv",
                               speed: speed, mqtt: mqtt, extra: extra)
        devices.append(d)
        return d
    }

    func testTopicsAndHomeAssistantDiscovery() throws {
        let b = try XCTUnwrap(broker)
        let sub = try b.subscribe(["tiltd/kitchen/#", "homeassistant/#"])
        let d = try device("kitchen", mqtt: "", speed: 2)
        try d.startDaemon()
        try d.startBridge()
        try sub.wait("tiltd/kitchen/status") { $0 == "online" }
        // Every entity's discovery config, checked against Home Assistant's documented fields.
        var configs: [String: JSONObject] = [:]
        try waitUntil("8 discovery configs", timeout: 15) {
            for m in sub.messages where m.topic.hasPrefix("homeassistant/") {
                if let o = json(m.payload)?.objectValue { configs[m.topic] = o }
            }
            return configs.count >= 8
        }
        let expected = ["sensor/kitchen/roll", "sensor/kitchen/pitch", "sensor/kitchen/score", "sensor/kitchen/credit_balance",
                        "sensor/kitchen/fix_age", "binary_sensor/kitchen/at_rest", "event/kitchen/game_decision", "event/kitchen/place"]
        XCTAssertEqual(Set(configs.keys), Set(expected.map { "homeassistant/\($0)/config" }))
        for (topic, c) in configs {
            let component = String(topic.split(separator: "/")[1])
            XCTAssertEqual(HomeAssistantSchema.problems(component: component, config: c), [], topic)
            XCTAssertEqual(c["availability_topic"], "tiltd/kitchen/status", topic)
            XCTAssertEqual(c["device"]?["identifiers"], ["tiltd_kitchen"], topic)
        }
        XCTAssertEqual(configs["homeassistant/event/kitchen/game_decision/config"]?["event_types"], ["correct", "skip"])

        // The socket's lines, as they are: attitude (rate-limited to 2 Hz), status per source.
        let att = try sub.wait("tiltd/kitchen/attitude")
        XCTAssertEqual(json(att)?["class"], "attitude")
        XCTAssertNotNil(json(att)?["roll_deg"]?.doubleValue)
        let imu = try sub.wait("tiltd/kitchen/status/imu") { json($0)?["state"] == "streaming" }
        XCTAssertEqual(json(imu)?["class"], "status")
        let first = sub.payloads("tiltd/kitchen/attitude").count
        let t0 = Date()
        try waitUntil("4 s of attitude", timeout: 10) { Date().timeIntervalSince(t0) >= 4 }
        let rate = Double(sub.payloads("tiltd/kitchen/attitude").count - first) / Date().timeIntervalSince(t0)
        XCTAssertGreaterThan(rate, 1.0, "attitude flows")
        XCTAssertLessThanOrEqual(rate, 2.5, "attitude is limited to [mqtt] attitude_hz = 2 (the daemon replays at 120 Hz)")

        // A retained message reaches a subscriber that comes later: HA restarting sees the state.
        let late = try b.subscribe(["tiltd/kitchen/status", "homeassistant/sensor/kitchen/roll/config"])
        try late.wait("tiltd/kitchen/status") { $0 == "online" }
        try late.wait("homeassistant/sensor/kitchen/roll/config")
        XCTAssertTrue(late.messages.allSatisfy(\.retained))
        late.stop()

        // The bridge goes away without a goodbye: the broker publishes its will.
        d.killBridge()
        try sub.wait("tiltd/kitchen/status", timeout: 10) { $0 == "offline" }

        // Discovery off: the next run clears the configs (empty retained payloads).
        try """
        [socket]
        path = "\(d.dir)/tiltd.sock"
        [store]
        path = "\(d.dir)/tiltd.sqlite"
        [mqtt]
        name = "kitchen"
        broker = "127.0.0.1:\(b.port)"
        discovery = false
        """.write(toFile: d.config, atomically: true, encoding: .utf8)
        try d.startBridge()
        try waitUntil("the 8 configs removed", timeout: 15) {
            Set(sub.messages.filter { $0.topic.hasPrefix("homeassistant/") && $0.payload.isEmpty }.map(\.topic)).count == 8
        }
        let after = try b.subscribe(["homeassistant/#", "tiltd/kitchen/status"])
        try after.wait("tiltd/kitchen/status") { $0 == "online" }
        XCTAssertEqual(after.messages.filter { $0.topic.hasPrefix("homeassistant/") }.count, 0, "no retained config is left")
        after.stop()
        sub.stop()
    }

    func testCommandsOnlyWhenAllowedAndBadInputChangesNothing() throws {
        let b = try XCTUnwrap(broker)
        let sub = try b.subscribe(["tiltd/den/reply", "tiltd/den/game"])
        let d = try device("den", mqtt: #"allowed_commands = ["status", "game.start"]"#, speed: 1)
        try d.startDaemon()
        try d.startBridge()
        let client = try LineClient(path: d.socket, timeout: 15)
        _ = try client.next("hello")
        _ = try client.request(#"{"cmd":"watch","id":1,"classes":["game"],"attitude_hz":0}"#, id: 1)
        // Until the bridge has the daemon, a forwarded command is answered `unavailable`.
        var probes = 0
        try waitUntil("the bridge to reach the daemon", timeout: 15) {
            probes += 1
            try b.publish("tiltd/den/cmd", #"{"cmd":"status","id":"probe-\#(probes)"}"#)
            return sub.payloads("tiltd/den/reply").contains { json($0)?["ok"] == .bool(true) }
        }
        func reply(_ id: String) throws -> JSONValue {
            try XCTUnwrap(json(try sub.wait("tiltd/den/reply") { json($0)?["id"] == .string(id) }))
        }
        // Refused: not allowed, unknown, malformed, oversized. None reaches the daemon.
        try b.publish("tiltd/den/cmd", #"{"cmd":"game.stop","id":"a"}"#)
        XCTAssertEqual(try reply("a")["error"]?["code"], "forbidden")
        try b.publish("tiltd/den/cmd", #"{"cmd":"fly","id":"b"}"#)
        XCTAssertEqual(try reply("b")["error"]?["code"], "unknown_command")
        try b.publish("tiltd/den/cmd", #"{"cmd":"game.start","id":"c""#)
        try sub.wait("tiltd/den/reply") { json($0)?["error"]?["code"] == "invalid_json" }
        try b.publish("tiltd/den/cmd", #"{"cmd":"game.start","id":"d","pad":""# + String(repeating: "x", count: 5000) + #""}"#)
        try sub.wait("tiltd/den/reply") { json($0)?["error"]?["code"] == "line_too_long" }
        let st = try client.request(#"{"cmd":"status","id":2}"#, id: 2)
        XCTAssertEqual(st["game"]?["state"], "idle", "no refused command started a round")
        XCTAssertEqual(st["clients"], .int(2), "the bridge is the other client")

        // Allowed: the round starts, the reply comes back with the sender's id.
        try b.publish("tiltd/den/cmd", #"{"cmd":"game.start","id":"go","round_s":30}"#)
        let ok = try reply("go")
        XCTAssertEqual(ok["ok"], .bool(true), "\(ok)")
        XCTAssertEqual(ok["cmd"], "game.start")
        let started = try client.next("game", timeout: 10) { $0["kind"] == "round_started" }
        let onMQTT = try sub.wait("tiltd/den/game") { json($0)?["kind"] == "round_started" }
        XCTAssertEqual(json(onMQTT)?["round"], started["round"])
    }
}
