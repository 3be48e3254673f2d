// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// Reload, end to end: the real `tiltd run` (a recorded head nodding, a real gpsd) is reloaded
/// section by section with `tiltd reload` and SIGHUP. Each accepted change shows in behaviour —
/// game rules from the next round, GPS started, a new geofence entered, trust widened — and a
/// bad edit in any section makes `tiltd reload` exit non-zero naming file:line: key while the
/// daemon goes on as before.
final class ReloadDaemonTests: XCTestCase {
    var dir = ""
    var rig: GPSDRig?
    var daemon: DaemonProcess?

    override func setUpWithError() throws {
        try GPSDRig.requireGPSD { XCTSkip($0) }
        dir = makeTempDir("reload")
        rig = try GPSDRig()
    }

    override func tearDown() {
        if let daemon, (testRun?.hasSucceeded ?? true) == false { print("tiltd log:\n\(daemon.log)") }
        daemon?.stop(signal: SIGKILL)
        rig?.tearDown()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// A head nodding down to 50° tilt and back every 3 s (upright is 90°), at 50 Hz.
    static func noddingRecording(seconds: Double) -> String {
        let rate = 50.0
        func tiltDeg(_ s: Double) -> Double {
            guard s >= 2 else { return 90 }
            let x = (s - 2).truncatingRemainder(dividingBy: 3)
            if x < 0.3 { return 90 - 40 * x / 0.3 }
            if x < 1.5 { return 50 }
            if x < 1.8 { return 50 + 40 * (x - 1.5) / 0.3 }
            return 90
        }
        var out = [RecordingFormat.banner, RecordingFormat.header]
        for i in 0..<Int(seconds * rate) {
            let s = Double(i) / rate
            let r = tiltDeg(s) * .pi / 180
            let accel = SyntheticIMU.gravityInSensor(Quaternion(roll: r, pitch: 0, yaw: 0))
            let gyro = Vector3((tiltDeg(s + 1 / rate) * .pi / 180 - r) * rate, 0, 0)
            out.append(RecordingFormat.format(IMUSample(t: 1_000_000_000 + Int64(s * 1e9), accel: accel, gyro: gyro)))
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// The config file, section by section; `sections` are written in this order.
    struct ConfigFile {
        static let order = [
            "imu", "calibration", "socket", "store", "gps", "game", "places", "geofence", "quests",
            "credits", "snooze", "course", "log",
        ]
        var sections: [String: String]
        var path: String

        func write(_ override: [String: String] = [:]) throws -> String {
            let text = Self.order.compactMap { override[$0] ?? sections[$0] }.joined(separator: "\n") + "\n"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return text
        }
    }

    func reload(_ args: [String] = []) throws -> (Int32, String) {
        try runTiltd(["reload", "--socket", "\(dir)/tiltd.sock"] + args)
    }

    func testEachSectionReloadsOrIsRefusedWithFileLineKey() throws {
        let rig = try XCTUnwrap(rig)
        let track = testTrack(count: 4000)
        try rig.startReceiver(lines: track.flatMap(\.sentences), interval: 0.05)
        try rig.startGPSD()
        try Self.noddingRecording(seconds: 150).write(toFile: "\(dir)/nods.csv", atomically: true, encoding: .utf8)
        var config = ConfigFile(
            sections: [
                "socket": "[socket]\npath = \"\(dir)/tiltd.sock\"\nmode = \"0666\"\nattitude_hz = 5",
                "store": "[store]\npath = \"\(dir)/tiltd.sqlite\"",
                "game": "[game]\nround_s = 120\nseed = 3",
                "log": "[log]\nlevel = \"info\"",
            ], path: "\(dir)/tiltd.toml")
        _ = try config.write()
        let d = try DaemonProcess(
            ["run", "--config", config.path, "--replay", "\(dir)/nods.csv"], logPath: "\(dir)/log")
        daemon = d
        let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        _ = try c.next("hello")
        _ = try c.next("attitude", timeout: 10)
        /// `tiltd reload`, which must succeed; its `config` status line is read too.
        func reloadApplied() throws -> String {
            let (status, out) = try reload()
            XCTAssertEqual(status, 0, out)
            let loaded = try c.next("status", timeout: 10) { $0["source"] == "config" }
            XCTAssertEqual(loaded["state"], "loaded", "\(loaded)")
            return out
        }
        var nextID = 100
        func request(_ cmd: String, _ extra: String = "") throws -> JSONValue {
            nextID += 1
            return try c.request(#"{"cmd":"\#(cmd)","id":\#(nextID)\#(extra)}"#, id: nextID, timeout: 10)
        }

        // [game]: a nod to 50° answers with the default threshold (63°).
        try waitUntil("samples streaming", timeout: 10) { try request("game.start")["ok"] == .bool(true) }
        _ = try c.next("game", timeout: 15) { $0["kind"] == "correct" }
        // A threshold of 40° is accepted during the round, for the next one…
        config.sections["game"] = "[game]\nround_s = 120\nseed = 3\nlow_threshold_deg = 40"
        _ = try config.write()
        let out = try reloadApplied()
        XCTAssertTrue(out.contains("game") && out.contains("next round"), out)
        // …so this round still counts the nods,
        _ = try c.next("game", timeout: 15) { $0["kind"] == "correct" }
        XCTAssertEqual(try request("game.stop")["ok"], .bool(true))
        // and the next one does not: 50° is not below 40°.
        let rules = try request("status")["game"]?["config"]
        XCTAssertEqual(rules?["low_threshold_deg"]?.doubleValue, 40, "\(String(describing: rules))")
        XCTAssertEqual(try request("game.start")["ok"], .bool(true))
        let started = try c.next("game", timeout: 10) { $0["kind"] == "round_started" }
        let t0 = try XCTUnwrap(started["t_ns"]?.intValue)
        var answers = 0
        // Two full nods of sample time.
        try waitUntil("7 s of samples in round 2", timeout: 20) {
            guard let v = try c.readJSON(timeout: 10) else { return false }
            if v["class"] == "game", v["kind"] == "correct" || v["kind"] == "skip" { answers += 1 }
            return v["class"] == "attitude" && (v["t_ns"]?.intValue ?? 0) > t0 + 7_000_000_000
        }
        XCTAssertEqual(answers, 0, "the new threshold did not apply to the next round")
        XCTAssertEqual(try request("game.stop")["ok"], .bool(true))

        // [gps] by SIGHUP: gpsd is started.
        config.sections["gps"] = "[gps]\nenabled = true\nserver = \"127.0.0.1:\(rig.gpsdPort)\""
        _ = try config.write()
        kill(d.pid, SIGHUP)
        let loaded = try c.next("status", timeout: 10) { $0["source"] == "config" }
        XCTAssertEqual(loaded["state"], "loaded", "\(loaded)")
        _ = try c.next("status", timeout: 20) { $0["source"] == "gps" && $0["state"] == "streaming" }
        let fix = try c.next("fix", timeout: 20) { $0["lat"] != nil }

        // [[geofence]]: one ahead on the track fires.
        let now = try XCTUnwrap(fix["time_ns"]?.intValue) / 1_000_000_000
        let ahead = try XCTUnwrap(track.first { $0.time == now + 150 })
        config.sections["geofence"] =
            "[[geofence]]\nname = \"ahead\"\nlat = \(ahead.lat)\nlon = \(ahead.lon)\nradius_m = 30\ndwell_s = 0"
        _ = try config.write()
        _ = try reloadApplied()
        let enter = try c.next("place", timeout: 30) { $0["event"] == "enter" }
        XCTAssertEqual(enter["fence"], "geofence:ahead")

        // [socket] trust: nobody may now stop a round (connected after the reload).
        XCTAssertEqual(
            try exchangeAsNobody([#"{"cmd":"game.stop","id":1}"#], socket: "\(dir)/tiltd.sock")
                .first { $0["class"] == "reply" }?["error"]?["code"], "forbidden")
        // …and fan-out goes from io_uring (where the kernel has it) to write(2).
        let writesBefore = try XCTUnwrap(try request("stats")["fanout_writes"]?.stringValue)
        XCTAssertTrue(writesBefore == "io_uring" || writesBefore.hasPrefix("write (io_uring_setup"), writesBefore)
        config.sections["socket"] =
            "[socket]\npath = \"\(dir)/tiltd.sock\"\nmode = \"0666\"\nattitude_hz = 5\ntrusted_uids = [65534]\nio_uring = false"
        _ = try config.write()
        _ = try reloadApplied()
        XCTAssertEqual(try request("stats")["fanout_writes"], "write (socket.io_uring = false)")
        _ = try c.next("attitude", timeout: 10)
        XCTAssertEqual(
            try exchangeAsNobody([#"{"cmd":"game.stop","id":1}"#], socket: "\(dir)/tiltd.sock")
                .first { $0["class"] == "reply" }?["error"]?["code"], "not_running")

        // [credits]: a redeem without an amount asks for the new default.
        config.sections["credits"] = "[credits]\nredeem_amount = 7"
        _ = try config.write()
        _ = try reloadApplied()
        let redeem = try request("credits.redeem")
        XCTAssertEqual(redeem["error"]?["code"], "insufficient_credits", redeem.jsonText)
        XCTAssertTrue(redeem["error"]?["message"]?.stringValue?.hasSuffix("below 7") ?? false, redeem.jsonText)

        // [log] style: from the reload on, lines have the journal's priority prefix and no
        // timestamp (the reload's own notice is logged after the new style applies).
        XCTAssertFalse(d.log.contains("\n<5>"), d.log)
        config.sections["log"] = "[log]\nlevel = \"info\"\nstyle = \"journal\""
        _ = try config.write()
        XCTAssertTrue(try reloadApplied().contains("log"))
        XCTAssertTrue(d.log.split(separator: "\n").contains { $0.hasPrefix("<5>") && $0.contains("reloaded") }, d.log)

        // [calibration]: the sampler restarts with it (the recording from its start) and attitude goes on.
        let lastT = try XCTUnwrap(try c.next("attitude", timeout: 10)["t_ns"]?.intValue)
        config.sections["calibration"] = "[calibration]\ngyro_bias = [0.001, 0, 0]"
        let good = try config.write()
        let restarted = try reloadApplied()
        XCTAssertTrue(restarted.contains("sampler restarted"), restarted)
        _ = try c.next("attitude", timeout: 10) { ($0["t_ns"]?.intValue ?? .max) < lastT }

        // A bad edit in each section: refused with file:line: key; nothing changes.
        let bad: [(section: String, text: String, key: String)] = [
            ("imu", "[imu]\nrate_hz = 5", "imu.rate_hz"),
            ("calibration", "[calibration]\ngyro_bias = [99, 0, 0]", "calibration.gyro_bias"),
            ("socket", "[socket]\npath = \"\(dir)/tiltd.sock\"\nattitude_hz = \"fast\"", "socket.attitude_hz"),
            ("socket", "[socket]\npath = \"\(dir)/elsewhere.sock\"", "socket.path"),
            ("store", "[store]\npath = \"\(dir)/other.sqlite\"", "store.path"),
            ("gps", "[gps]\nserver = \"127.0.0.1:0\"", "gps.server"),
            ("game", "[game]\nlow_threshold_deg = 200", "game.low_threshold_deg"),
            ("places", "[places]\nfile = \"\(dir)/missing.geojson\"", "places.file"),
            ("geofence", "[[geofence]]\nname = \"ahead\"\nlat = 100\nlon = 8", "geofence[0].lat"),
            ("quests", "[quests]\ncell_m = 1", "quests.cell_m"),
            ("credits", "[credits]\nredeem_amount = 0", "credits.redeem_amount"),
            ("snooze", "[snooze]\ndistance_m = -1", "snooze.distance_m"),
            ("course", "[course]\noff_speed = 5", "course.off_speed"),
            ("log", "[log]\nlevel = \"loud\"", "log.level"),
            ("log", "[log]\nstyle = \"json\"", "log.style"),
        ]
        for b in bad {
            let text = try config.write([b.section: b.text])
            let leaf = String(b.key.split(separator: ".").last!.prefix { $0 != "[" })
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let header = try XCTUnwrap(lines.firstIndex { $0 == b.text.split(separator: "\n")[0] })
            let line = try XCTUnwrap(lines[header...].firstIndex { $0.hasPrefix("\(leaf) =") }) + 1
            let (status, out) = try reload()
            XCTAssertNotEqual(status, 0, "\(b.key): \(out)")
            XCTAssertTrue(out.contains("\(config.path):\(line): \(b.key)"), "\(b.key) at line \(line): \(out)")
            let refused = try c.next("status", timeout: 10) { $0["source"] == "config" }
            XCTAssertEqual(refused["state"], "error", "\(refused)")
        }
        XCTAssertEqual(try config.write(), good)

        // The old behaviour stayed: the same rules, gpsd still read, the socket and trust as they were.
        let after = try request("status")
        XCTAssertEqual(after["game"]?["config"]?["low_threshold_deg"]?.doubleValue, 40)
        XCTAssertEqual(after["sources"]?.arrayValue?.first { $0["source"] == "gps" }?["state"], "streaming", "\(after)")
        let lastFix = try XCTUnwrap(after["fix"]?["time_ns"]?.intValue)
        _ = try c.next("fix", timeout: 10) { ($0["time_ns"]?.intValue ?? 0) > lastFix }
        let stats = try request("stats")
        XCTAssertEqual(stats["reloads"]?["refused"]?.intValue, Int64(bad.count), "\(stats)")
        XCTAssertEqual(stats["reloads"]?["applied"]?.intValue, 7, "\(stats)")
        XCTAssertEqual(
            try exchangeAsNobody([#"{"cmd":"game.stop","id":1}"#], socket: "\(dir)/tiltd.sock")
                .first { $0["class"] == "reply" }?["error"]?["code"], "not_running")
        let late = try LineClient(path: "\(dir)/tiltd.sock")
        XCTAssertEqual(try late.next("hello")["watch"]?["attitude_hz"]?.doubleValue, 5)

        // [snooze]: the new distance is the snooze command's default.
        config.sections["snooze"] = "[snooze]\ndistance_m = 123"
        _ = try config.write()
        _ = try reloadApplied()
        XCTAssertEqual(try request("snooze")["until_moved_m"]?.doubleValue, 123)
        XCTAssertTrue(d.isRunning)
    }
}
