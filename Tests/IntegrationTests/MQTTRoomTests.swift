// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// A shared round across three devices (three daemons replaying the head recording, three
/// bridges) through a real Mosquitto with passwords and the example ACL: every decision counts
/// once on the host's scoreboard, through a broker restart and a player's daemon killed and
/// restarted mid-round; forged and malformed messages are refused; the host's loss ends the
/// round for everyone.
final class MQTTRoomTests: XCTestCase {
    var dir = ""
    var broker: MosquittoRig?
    var devices: [MQTTDevice] = []
    let users = ["pi-a": "pw-a", "pi-b": "pw-b", "pi-c": "pw-c", "pi-d": "pw-d", "admin": "pw-admin"]

    override func setUpWithError() throws {
        try requireMosquitto()
        dir = makeTempDir("room")
        // The ACL shipped in config/mosquitto/tiltd.acl, with the room's host named.
        let acl =
            try String(contentsOfFile: "\(repositoryRoot)/config/mosquitto/tiltd.acl", encoding: .utf8)
            + "\nuser pi-a\ntopic write tiltd/room/party/state\n\nuser admin\ntopic readwrite #\n"
        broker = try MosquittoRig(dir: dir, users: users, acl: acl)
    }

    override func tearDown() {
        let failed = (testRun?.totalFailureCount ?? 0) > 0
        for d in devices {
            d.stop()
            if failed { print(d.logs.suffix(20_000)) }
        }
        if failed, let b = broker { print("--- mosquitto\n\(b.brokerLog.suffix(6000))") }
        broker?.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// The bundled recording three times over, so a round has ~15 answers per player (the
    /// recording has 6 deliberate ones in 54 s) and a restarted daemon replays them again.
    func loopedRecording() throws -> String {
        let lines = try String(contentsOfFile: "\(repositoryRoot)/config/demo/head.csv", encoding: .utf8).split(
            separator: "\n")
        let header = lines.filter { $0.hasPrefix("#") || $0.hasPrefix("t_ns") }
        let rows = lines.filter { !$0.hasPrefix("#") && !$0.hasPrefix("t_ns") && !$0.isEmpty }
        let times = rows.map { Int64($0.split(separator: ",")[0])! }
        let span = times.last! - times.first! + (times[1] - times[0])
        var out = header.map(String.init)
        for k in 0..<3 {
            for (r, t) in zip(rows, times) {
                out.append("\(t + Int64(k) * span)," + r.split(separator: ",", maxSplits: 1)[1])
            }
        }
        let path = "\(dir)/head-x3.csv"
        try out.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testThreeDevicesPlayARoundEveryDecisionCountsOnce() throws {
        let b = try XCTUnwrap(broker)
        let admin = ("admin", "pw-admin")
        let rec = try loopedRecording()
        // A persistent observer of every decision, kept across the broker restart.
        let decisions = try b.subscribe(["tiltd/room/party/player/+/decision"], user: admin, clientID: "observer")
        let watch = try b.subscribe(["tiltd/room/party/state", "tiltd/pi-a/reply", "tiltd/+/room"], user: admin)
        for name in ["pi-a", "pi-b", "pi-c", "pi-d"] {
            let host = name == "pi-a"
            let d = try MQTTDevice(
                name: name, base: dir, brokerPort: b.port, recording: rec, speed: 3,
                mqtt: """
                    username = "\(name)"
                    password_file = "\(dir)/\(name)/password"
                    room = "party"
                    room_host = \(host)
                    room_round_s = 40
                    room_seed = 3
                    allowed_commands = \(host ? #"["room.start", "room.stop", "room.state"]"# : "[]")
                    """)
            try users[name]!.write(toFile: "\(d.dir)/password", atomically: true, encoding: .utf8)
            chmod("\(d.dir)/password", 0o600)
            devices.append(d)
        }
        let late = devices.removeLast()  // joins during the second round
        for d in devices { try d.startDaemon(); try d.startBridge() }
        let (a, _, c) = (devices[0], devices[1], devices[2])

        // Everyone joined (the host's state lists three players here).
        func state() -> JSONValue? { watch.payloads("tiltd/room/party/state").last.flatMap(json) }
        func player(_ s: JSONValue?, _ id: String) -> JSONValue? {
            s?["players"]?.arrayValue?.first { $0["player"] == .string(id) }
        }
        try waitUntil("three players here", timeout: 20) {
            let s = state()
            return ["pi-a", "pi-b", "pi-c"].allSatisfy { player(s, $0)?["presence"] == "here" }
        }
        // A socket client on pi-b's daemon: it sees the shared round as game lines.
        let screen = try LineClient(path: devices[1].socket, timeout: 15)
        _ = try screen.next("hello")
        _ = try screen.request(#"{"cmd":"watch","id":1,"classes":["game"],"attitude_hz":0}"#, id: 1)
        try b.publish("tiltd/pi-a/cmd", #"{"cmd":"room.start","id":1}"#, user: admin)
        let started = try XCTUnwrap(json(try watch.wait("tiltd/pi-a/reply") { json($0)?["id"] == 1 }))
        XCTAssertEqual(started["ok"], .bool(true), "\(started)")
        let round = try XCTUnwrap(started["round"]?.intValue)

        // Answers flow; then the broker restarts mid-round.
        try waitUntil("answers from every player", timeout: 20) {
            let s = state()
            return ["pi-a", "pi-b", "pi-c"].allSatisfy { (player(s, $0)?["index"]?.intValue ?? 0) >= 1 }
        }
        b.stop()
        try b.start()
        // pi-c's daemon dies and comes back (its replay starts over) while the round runs.
        let beforeKill = player(state(), "pi-c")?["index"]?.intValue ?? 0
        c.killDaemon()
        try waitUntil("the host to see pi-c away", timeout: 20) { player(state(), "pi-c")?["presence"] == "away" }
        try c.startDaemon()
        try waitUntil("pi-c answering again", timeout: 25) {
            (player(state(), "pi-c")?["index"]?.intValue ?? 0) > beforeKill
        }

        // Bad input on the room's topics changes nothing (and is answered on the host's reply topic).
        let rev = state()?["rev"]
        try b.publish("tiltd/room/party/player/pi-b/decision", "{oops", user: ("pi-b", "pw-b"))
        try watch.wait("tiltd/pi-a/reply") { json($0)?["error"]?["code"] == "invalid_json" }
        try b.publish(
            "tiltd/room/party/player/pi-b/decision",
            #"{"room":"party","player":"pi-c","round":\#(round),"index":0,"decision":"correct","request_id":"x-1"}"#,
            user: ("pi-b", "pw-b"))
        try watch.wait("tiltd/pi-a/reply") { json($0)?["error"]?["code"] == "forged" }
        try b.publish(
            "tiltd/room/party/player/pi-b/decision",
            #"{"room":"lobby","player":"pi-b","round":\#(round),"index":0,"decision":"correct","request_id":"x-2"}"#,
            user: ("pi-b", "pw-b"))
        try watch.wait("tiltd/pi-a/reply") { json($0)?["error"]?["code"] == "wrong_room" }
        // The ACL stops pi-b writing pi-c's topic at the broker: the host never hears of it.
        try b.publish(
            "tiltd/room/party/player/pi-c/decision",
            #"{"room":"party","player":"pi-c","round":\#(round),"index":99,"decision":"correct","request_id":"x-3"}"#,
            user: ("pi-b", "pw-b"))
        XCTAssertFalse(decisions.payloads("tiltd/room/party/player/pi-c/decision").contains { $0.contains("x-3") })

        // The round runs out on the host's clock.
        let ended = try XCTUnwrap(
            json(try watch.wait("tiltd/room/party/state", timeout: 60) { json($0)?["state"] == "ended" }))
        XCTAssertEqual(ended["reason"], "timeout")
        XCTAssertNotEqual(ended["rev"], rev)
        XCTAssertTrue(a.logs.contains("refused decision on pi-b's topic: forged"), "the host logs the refusal")

        // Every answer counted once: for each player, the host counted exactly the answers with
        // index 0..<n, each once, and the score is the number of correct ones among them.
        try waitUntil("the observer to catch up", timeout: 10) {
            decisions.payloads("tiltd/room/party/player/pi-c/decision").count > 0
        }
        for id in ["pi-a", "pi-b", "pi-c"] {
            let p = try XCTUnwrap(player(ended, id))
            let n = Int(p["index"]?.intValue ?? -1)
            var byIndex: [Int: String] = [:]
            for s in decisions.payloads("tiltd/room/party/player/\(id)/decision") {
                guard let v = json(s), v["round"]?.intValue == round, let i = v["index"]?.intValue,
                    let d = v["decision"]?.stringValue
                else { continue }
                if let old = byIndex[Int(i)] { XCTAssertEqual(old, d, "a re-sent decision is the same decision") }
                byIndex[Int(i)] = d
            }
            XCTAssertGreaterThanOrEqual(n, 4, "\(id) answered several prompts")
            XCTAssertEqual(Set(byIndex.keys.filter { $0 < n }), Set(0..<n), "\(id): every counted answer was sent")
            XCTAssertTrue(byIndex.keys.allSatisfy { $0 <= n }, "\(id): nothing was sent beyond one late answer")
            XCTAssertEqual(
                p["score"]?.intValue, Int64((0..<n).filter { byIndex[$0] == "correct" }.count), "\(id)'s score")
        }
        // The broker restart did not look like the host's loss to anyone.
        XCTAssertFalse(
            watch.messages.contains { $0.topic.hasSuffix("/room") && json($0.payload)?["reason"] == "host_lost" },
            "no device took the broker restart for the host's loss")
        print("scoreboard of round \(round): \(ended["players"]?.jsonText ?? "")")

        // Every device shows the host's result.
        for d in devices {
            let view = try XCTUnwrap(
                json(
                    try watch.wait("tiltd/\(d.name)/room") {
                        json($0)?["state"] == "ended" && json($0)?["round"]?.intValue == round
                    }))
            XCTAssertEqual(view["class"], "game")
            XCTAssertEqual(view["kind"], "shared")
            XCTAssertEqual(view["players"]?.arrayValue?.count, 3)
        }

        // pi-b's socket clients saw the same result as a game line of kind shared.
        let shared = try screen.next("game", timeout: 10) {
            $0["kind"] == "shared" && $0["state"] == "ended" && $0["round"]?.intValue == round
        }
        XCTAssertEqual(shared["player"], "pi-b")
        XCTAssertEqual(shared["players"]?.arrayValue?.count, 3)
        XCTAssertEqual(shared["score"], player(ended, "pi-b")?["score"])

        // Host loss: a new round starts, the host's bridge dies; every player's round ends.
        try b.publish("tiltd/pi-a/cmd", #"{"cmd":"room.start","id":2}"#, user: admin)
        try watch.wait("tiltd/pi-b/room") {
            json($0)?["state"] == "playing" && json($0)?["round"]?.intValue == round + 1
        }
        // A late joiner gets the whole state from the broker (retained) and is in the room.
        devices.append(late)
        try late.startBridge()
        let lateView = try XCTUnwrap(
            json(try watch.wait("tiltd/pi-d/room") { json($0)?["round"]?.intValue == round + 1 }))
        XCTAssertEqual(lateView["state"], "playing")
        XCTAssertEqual(lateView["deck_size"], started["deck_size"])
        try waitUntil("the host to list pi-d", timeout: 15) { player(state(), "pi-d") != nil }
        a.killBridge()
        for d in devices.dropFirst() {
            try watch.wait("tiltd/\(d.name)/room", timeout: 20) {
                json($0)?["reason"] == "host_lost" && json($0)?["state"] == "ended"
                    && json($0)?["round"]?.intValue == round + 1
            }
        }
        decisions.stop()
        watch.stop()
    }
}
