// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// `[imu] mount_matrix` is applied in one place for every source: the real daemon on fake IIO
/// hardware and the real daemon replaying the same samples give the same attitude, and a held
/// `--fast` replay plays once a client starts a round.
final class ReplayMountTests: FakeHardwareDaemonTestCase {
    override var tempTag: String { "mount" }
    /// Its daemons' exit status is not part of what it checks.
    override var checksExitStatus: Bool { false }

    func writeConfig(_ path: String, mount: String?) throws {
        try """
        [imu]
        \(mount.map { "mount_matrix = \($0)" } ?? "")
        [socket]
        path = "\(dir)/tiltd.sock"
        attitude_hz = 1000
        [store]
        path = "\(dir)/tiltd.sqlite"
        """.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Connects, watches every attitude, optionally starts a round; reads attitudes until `count`.
    func attitudes(count: Int, startRound: Bool) throws -> [Int64: (Double, Double, Double)] {
        let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        _ = try c.next("hello")
        try c.send(#"{"cmd":"watch","id":1,"classes":["attitude","game"],"attitude_hz":1000}"#)
        _ = try c.next("reply") { $0["id"] == .int(1) }
        var out: [Int64: (Double, Double, Double)] = [:]
        func keep(_ v: JSONValue) {
            if v["class"] == "attitude", let t = v["t_ns"]?.intValue, let r = v["roll_deg"]?.doubleValue,
                let p = v["pitch_deg"]?.doubleValue, let y = v["yaw_deg"]?.doubleValue
            {
                out[t] = (r, p, y)
            }
        }
        if startRound {
            // Refused ("unavailable") until the first sample has arrived; then the replay goes on.
            var id = 1
            try waitUntil("a round started", timeout: 20) {
                id += 1
                try c.send(#"{"cmd":"game.start","id":\#(id)}"#)
                while true {
                    guard let v = try c.readJSON(timeout: 10) else {
                        throw LineClient.Failure(description: "tiltd closed the connection")
                    }
                    keep(v)
                    if v["class"] == "reply", v["id"] == .int(Int64(id)) { return v["ok"] == .bool(true) }
                }
            }
        }
        try waitUntil("\(count) attitudes", timeout: 20) {
            guard let v = try c.readJSON(timeout: 20) else {
                throw LineClient.Failure(description: "tiltd closed the connection")
            }
            if v["class"] == "attitude", let t = v["t_ns"]?.intValue, let r = v["roll_deg"]?.doubleValue,
                let p = v["pitch_deg"]?.doubleValue, let y = v["yaw_deg"]?.doubleValue
            {
                out[t] = (r, p, y)
            }
            return out.count >= count
        }
        return out
    }

    func testAReplayAppliesTheMountMatrixExactlyAsTheLiveDevice() throws {
        let d = FakeIIODevice.mpu6050()
        let s = try FakeScenario([d])
        scenario = s
        let mounted = "\(dir)/mounted.toml", plain = "\(dir)/plain.toml"
        // The board turned 90° about its y axis, as on the head-gestures headset (X back, Z left).
        try writeConfig(mounted, mount: "[0, 0, -1, 0, 1, 0, 1, 0, 0]")
        try writeConfig(plain, mount: nil)
        daemon = try DaemonProcess(["run", "--config", mounted], logPath: "\(dir)/live.log")
        let writer = try ScanWriter(scenario: s, device: d, timeout: 15)
        // Tilted and turning about a skew axis, so every axis of the matrix matters.
        let motion = Motion(start: Quaternion(roll: 0.4, pitch: -0.3, yaw: 0.2), bodyRate: Vector3(0.3, -0.2, 0.5))
        var scans: [ScanWriter.Scan] = [], raw: [IMUSample] = []
        let n = 180
        for i in 0..<n {
            let t = 10_000_000_000 + Int64((Double(i) * 1e9 / 60).rounded())
            let truth = motion.reading(at: Double(i) / 60)
            let a = d.rawCounts(truth.accel, group: d.accel!), g = d.rawCounts(truth.gyro, group: d.gyro!)
            scans.append(ScanWriter.scan(t: t, accel: a, gyro: g))
            raw.append(IMUSample(t: t, accel: d.decoded(a, group: d.accel!), gyro: d.decoded(g, group: d.gyro!)))
        }
        let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        _ = try c.next("hello")
        try c.send(#"{"cmd":"watch","id":1,"classes":["attitude"],"attitude_hz":1000}"#)
        _ = try c.next("reply") { $0["id"] == .int(1) }
        try writer.write(scans)
        var live: [Int64: (Double, Double, Double)] = [:]
        try waitUntil("\(n) live attitudes", timeout: 20) {
            guard let v = try c.readJSON(timeout: 20) else {
                throw LineClient.Failure(description: "tiltd closed the connection")
            }
            if v["class"] == "attitude", let t = v["t_ns"]?.intValue, let r = v["roll_deg"]?.doubleValue,
                let p = v["pitch_deg"]?.doubleValue, let y = v["yaw_deg"]?.doubleValue
            {
                live[t] = (r, p, y)
            }
            return live.count >= n
        }
        XCTAssertEqual(daemon?.stop(), 0)
        daemon = nil

        // The samples the device delivered (before the config's mount matrix), as a recording.
        let rec = "\(dir)/rec.csv"
        try ([RecordingFormat.banner, RecordingFormat.header] + raw.map(RecordingFormat.format)).joined(separator: "\n")
            .write(toFile: rec, atomically: true, encoding: .utf8)
        func replay(_ config: String) throws -> [Int64: (Double, Double, Double)] {
            let p = try DaemonProcess(
                ["run", "--config", config, "--replay", rec, "--fast", "--hold-until-round", "--exit-when-done"],
                logPath: "\(dir)/replay.log")
            daemon = p
            // The first sample came before we connected; the rest waited for the round.
            let got = try attitudes(count: n - 1, startRound: true)
            XCTAssertEqual(p.waitForExit(timeout: 20), 0, "the replay ends and the daemon exits: \(p.log)")
            daemon = nil
            return got
        }
        let same = try replay(mounted)
        var compared = 0
        for (t, l) in live {
            guard let r = same[t] else { continue }
            compared += 1
            XCTAssertEqual(r.0, l.0, accuracy: 0.05, "roll at \(t)")
            XCTAssertEqual(r.1, l.1, accuracy: 0.05, "pitch at \(t)")
            var dy = abs(r.2 - l.2)
            if dy > 180 { dy = 360 - dy }
            XCTAssertLessThan(dy, 0.05, "yaw at \(t)")
        }
        XCTAssertGreaterThanOrEqual(compared, n - 1)
        // Without the matrix the same recording gives another attitude: the matrix really applied.
        let other = try replay(plain)
        let differs = live.contains { t, l in other[t].map { abs($0.0 - l.0) > 10 || abs($0.1 - l.1) > 10 } ?? false }
        XCTAssertTrue(differs, "the mount matrix changed nothing")
    }
}
