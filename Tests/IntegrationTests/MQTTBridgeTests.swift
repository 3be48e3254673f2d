// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
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
        let d = try MQTTDevice(
            name: name, base: dir, brokerPort: broker!.port, recording: "\(repositoryRoot)/config/demo/head.csv",
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
        try waitUntil("9 discovery configs", timeout: 15) {
            for m in sub.messages where m.topic.hasPrefix("homeassistant/") {
                if let o = json(m.payload)?.objectValue { configs[m.topic] = o }
            }
            return configs.count >= 9
        }
        let expected = [
            "sensor/kitchen/roll", "sensor/kitchen/pitch", "sensor/kitchen/heading", "sensor/kitchen/score",
            "sensor/kitchen/credit_balance",
            "sensor/kitchen/fix_age", "binary_sensor/kitchen/at_rest", "event/kitchen/game_decision",
            "event/kitchen/place",
        ]
        XCTAssertEqual(Set(configs.keys), Set(expected.map { "homeassistant/\($0)/config" }))
        for (topic, c) in configs {
            let component = String(topic.split(separator: "/")[1])
            XCTAssertEqual(HomeAssistantSchema.problems(component: component, config: c), [], topic)
            XCTAssertEqual(c["availability_topic"], "tiltd/kitchen/status", topic)
            XCTAssertEqual(c["device"]?["identifiers"], ["tiltd_kitchen"], topic)
        }
        XCTAssertEqual(
            configs["homeassistant/event/kitchen/game_decision/config"]?["event_types"], ["correct", "skip"])
        // The heading: degrees, a measurement, from the attitude lines, with its source as an attribute.
        let heading = try XCTUnwrap(configs["homeassistant/sensor/kitchen/heading/config"])
        XCTAssertEqual(heading["unit_of_measurement"], "°")
        XCTAssertEqual(heading["state_class"], "measurement")
        XCTAssertEqual(heading["state_topic"], "tiltd/kitchen/attitude")
        XCTAssertEqual(heading["json_attributes_topic"], "tiltd/kitchen/attitude")
        let template = try XCTUnwrap(heading["value_template"]?.stringValue)
        XCTAssertTrue(template.contains("value_json.true_heading_deg") && template.contains("value_json.heading_deg"))
        XCTAssertTrue(heading["json_attributes_template"]?.stringValue?.contains("heading_source") ?? false)

        // The socket's lines, as they are: attitude (rate-limited to 2 Hz), status per source.
        let att = try sub.wait("tiltd/kitchen/attitude")
        XCTAssertEqual(json(att)?["class"], "attitude")
        XCTAssertNotNil(json(att)?["roll_deg"]?.doubleValue)
        XCTAssertEqual(json(att)?["heading_source"], "none", "no magnetometer, no fix: no heading")
        let imu = try sub.wait("tiltd/kitchen/status/imu") { json($0)?["state"] == "streaming" }
        XCTAssertEqual(json(imu)?["class"], "status")
        let first = sub.payloads("tiltd/kitchen/attitude").count
        let t0 = Date()
        try waitUntil("4 s of attitude", timeout: 10) { Date().timeIntervalSince(t0) >= 4 }
        let rate = Double(sub.payloads("tiltd/kitchen/attitude").count - first) / Date().timeIntervalSince(t0)
        XCTAssertGreaterThan(rate, 1.0, "attitude flows")
        XCTAssertLessThanOrEqual(
            rate, 2.5, "attitude is limited to [mqtt] attitude_hz = 2 (the daemon replays at 120 Hz)")

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
        try waitUntil("the 9 configs removed", timeout: 15) {
            Set(sub.messages.filter { $0.topic.hasPrefix("homeassistant/") && $0.payload.isEmpty }.map(\.topic)).count
                == 9
        }
        let after = try b.subscribe(["homeassistant/#", "tiltd/kitchen/status"])
        try after.wait("tiltd/kitchen/status") { $0 == "online" }
        XCTAssertEqual(
            after.messages.filter { $0.topic.hasPrefix("homeassistant/") }.count, 0, "no retained config is left")
        after.stop()
        sub.stop()

        // A clean stop: the bridge's own retained status says so, then it goes offline.
        let end = try b.subscribe(["tiltd/kitchen/status", "tiltd/kitchen/status/mqtt"])
        try end.wait("tiltd/kitchen/status") { $0 == "online" }
        let (_, bridgeExit) = d.stop()
        XCTAssertEqual(bridgeExit, 0)
        try end.wait("tiltd/kitchen/status/mqtt", timeout: 10) { json($0)?["state"]?.stringValue == "stopped" }
        try end.wait("tiltd/kitchen/status", timeout: 10) { $0 == "offline" }
        end.stop()
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
        try b.publish(
            "tiltd/den/cmd", #"{"cmd":"game.start","id":"d","pad":""# + String(repeating: "x", count: 5000) + #""}"#)
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

    /// The broker goes away while fixes and places stream (all QoS 1 here): the bridge keeps the
    /// newest `buffer_messages`, drops and counts the rest, and delivers the kept ones after the
    /// reconnect — the daemon's lines that never reach a subscriber are exactly the dropped ones.
    func testBrokerAwayBoundedBufferLosesOnlyWhatItReports() throws {
        let b = try XCTUnwrap(broker)
        let obs = try b.subscribe(["tiltd/walker/#"], clientID: "observer")
        // QoS 1 for status, game and fix (compared below by seq); 0 for the rest, whose Home
        // Assistant event copies carry no seq and would blur the count.
        let d = try device(
            "walker",
            mqtt: "buffer_messages = 10\nattitude_hz = 0\n[mqtt.qos]\nfix = 1\nplace = 0\nquest = 0\ncredit = 0",
            speed: 1)
        let daemon = try DaemonProcess(
            [
                "run", "--config", d.config, "--replay", d.recording, "--gpx", "\(repositoryRoot)/config/demo/walk.gpx",
                "--gpx-speed", "20",
            ],
            logPath: "\(d.dir)/daemon-gpx.log")
        defer { daemon.stop() }
        let client = try LineClient(path: d.socket, timeout: 15)
        _ = try client.next("hello")
        _ = try client.request(
            #"{"cmd":"watch","id":1,"classes":["status","game","fix","place","quest","credit"],"attitude_hz":0}"#, id: 1
        )
        try d.startBridge()
        try obs.wait("tiltd/walker/fix", timeout: 15)
        b.stop()
        try waitUntil("the bridge to drop messages", timeout: 20) { d.logs.contains("messages dropped so far") }
        try b.start()
        try obs.wait("tiltd/walker/status/mqtt", timeout: 20) {
            json($0)?["message"]?.stringValue?.hasPrefix("connected to 127") == true
        }
        // Let live fixes through after the buffered ones, then compare every daemon line (by seq).
        let seen0 = obs.payloads("tiltd/walker/fix").count
        try waitUntil("live fixes again", timeout: 10) { obs.payloads("tiltd/walker/fix").count >= seen0 + 15 }
        let qos1 = ["status", "game", "fix"]
        let observed = Set(
            obs.messages.filter { !$0.topic.contains("/event/") }.compactMap { json($0.payload) }
                .filter { qos1.contains($0["class"]?.stringValue ?? "") }.compactMap { $0["seq"]?.intValue })
        let (first, last) = (try XCTUnwrap(observed.min()), try XCTUnwrap(observed.max()))
        var sent: [Int64] = []
        while sent.last.map({ $0 < last }) ?? true {
            guard let v = try client.readJSON(timeout: 10) else { break }
            if qos1.contains(v["class"]?.stringValue ?? ""), let s = v["seq"]?.intValue { sent.append(s) }
        }
        let window = sent.filter { $0 >= first && $0 <= last }
        let missing = window.filter { !observed.contains($0) }
        // The bridge's count, as it reports it (within a second of the last drop, which may come
        // while it drains the buffer after the reconnect), is exactly the number missing.
        var reported: Int64 = -1
        do {
            try waitUntil("the reported drop count to equal the \(missing.count) lines missing", timeout: 10) {
                reported = obs.payloads("tiltd/walker/status/mqtt").last.flatMap(json)?["dropped"]?.intValue ?? -1
                return reported == Int64(missing.count)
            }
        } catch {
            XCTFail(
                "missing \(missing) (window \(first)…\(last)), reported \(reported): \(error); \(obs.payloads("tiltd/walker/status/mqtt").last ?? "")"
            )
        }
        XCTAssertGreaterThan(missing.count, 0, "the buffer did overflow")
        XCTAssertGreaterThan(window.count - missing.count, 10, "the buffered lines arrived after the reconnect")
        obs.stop()
    }

    /// A password file others can read is refused before anything connects, naming the setting.
    func testGroupReadablePasswordFileIsRefused() throws {
        let d = try device("locked", mqtt: "username = \"locked\"\npassword_file = \"pw\"")
        try "secret\n".write(toFile: "\(d.dir)/pw", atomically: true, encoding: .utf8)
        chmod("\(d.dir)/pw", 0o640)
        let (status, out) = try runTiltd(["mqtt", "--config", d.config])
        XCTAssertEqual(status, 1, out)
        XCTAssertTrue(
            out.contains("\(d.config):9: mqtt.password_file: \(d.dir)/pw is readable by group or others (mode 640)"),
            out)
    }
}
