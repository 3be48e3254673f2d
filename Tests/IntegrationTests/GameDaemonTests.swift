// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// The tilt game end to end: the real daemon on fake IIO hardware, several clients, one host.
final class GameDaemonTests: XCTestCase {
    private var dir = ""
    private var scenario: FakeScenario?
    private var daemon: DaemonProcess?

    override func setUpWithError() throws {
        if let reason = FakeHarness.unavailableReason {
            if FakeHarness.isCI { XCTFail("fake-hardware harness required in CI: \(reason)") }
            throw XCTSkip(reason)
        }
        dir = makeTempDir("game")
    }

    override func tearDown() {
        if let daemon {
            XCTAssertEqual(daemon.stop(), 0, daemon.log)
            if (testRun?.hasSucceeded ?? true) == false { print("tiltd log:\n\(daemon.log)") }
        }
        scenario?.remove()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Scans of a head whose |roll| follows `rollDeg(t)` (degrees), at `rate` Hz from `t0`.
    func headScans(
        _ d: FakeIIODevice, seconds: Double, rate: Double, t0: Int64, rollDeg: (Double) -> Double
    ) -> [ScanWriter.Scan] {
        let n = Int(seconds * rate)
        var out: [ScanWriter.Scan] = []
        for i in 0..<n {
            let s = Double(i) / rate
            let r = rollDeg(s) * .pi / 180
            let rNext = rollDeg(s + 1 / rate) * .pi / 180
            let q = Quaternion(roll: r, pitch: 0, yaw: 0)
            let accel = q.conjugate.rotate(Vector3(0, 0, 9.80665))
            let gyro = Vector3((rNext - r) * rate, 0, 0)
            out.append(
                ScanWriter.scan(
                    t: t0 + Int64(s * 1e9), accel: d.rawCounts(accel, group: d.accel!),
                    gyro: d.rawCounts(gyro, group: d.gyro!)))
        }
        return out
    }

    /// Upright, then nod down and back, tilt up and back, every 1.5 s: answers to every prompt.
    static func nodding(_ s: Double) -> Double {
        let phase = s.truncatingRemainder(dividingBy: 3)
        func bump(_ x: Double, to target: Double) -> Double {
            // 0.25 s down, 0.5 s held, 0.25 s back, then upright.
            if x < 0.25 { return 90 + (target - 90) * x / 0.25 }
            if x < 0.75 { return target }
            if x < 1.0 { return target + (90 - target) * (x - 0.75) / 0.25 }
            return 90
        }
        if s < 1 { return 90 }
        return phase < 1.5 ? bump(phase, to: 30) : bump(phase - 1.5, to: 150)
    }

    func testTwoClientsSeeTheSameRoundAndALateJoinerSeesItToo() throws {
        let d = FakeIIODevice.mpu6050()
        let s = try FakeScenario([d])
        scenario = s
        try """
        [imu]
        rate_hz = 100
        [socket]
        path = "\(dir)/tiltd.sock"
        attitude_hz = 0
        [store]
        path = "\(dir)/tiltd.sqlite"
        [game]
        round_s = 8
        seed = 7
        """.write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)
        let dp = try DaemonProcess(["run", "--config", "\(dir)/tiltd.toml"], logPath: "\(dir)/log")
        daemon = dp
        let a = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        let b = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        let helloA = try a.next("hello"); _ = try b.next("hello")
        // Streaming may have begun before we connected (then the hello said so).
        let streaming =
            helloA["sources"]?.arrayValue?.contains { $0["source"] == "imu" && $0["state"] == "streaming" } ?? false
        if !streaming { _ = try a.next("status", timeout: 10) { $0["source"] == "imu" && $0["state"] == "streaming" } }
        let writer = try ScanWriter(scenario: s, device: d, timeout: 15)
        defer { writer.close() }
        let t0: Int64 = 50_000_000_000
        // Some upright samples first, so the game has a time and a tilt.
        let upright = headScans(d, seconds: 0.5, rate: 100, t0: t0) { _ in 90 }
        try writer.write(upright)
        // A round starts at the daemon's latest sample time. The scans reach the daemon through
        // its sampler thread, the command through its socket: nothing orders the two, so wait
        // until every upright sample is in. (Started first, the round would begin at t = 0 and
        // the first sample, at t0, would end it by timeout.)
        var statusID = 100
        try waitUntil("the daemon to take in the \(upright.count) upright samples") {
            statusID += 1
            let st = try a.request(#"{"cmd":"status","id":\#(statusID)}"#, id: statusID)
            return (st["samples"]?.intValue ?? 0) >= Int64(upright.count)
        }
        let lastUpright = try XCTUnwrap(upright.last?["timestamp"])

        let reply = try a.request(#"{"cmd":"game.start","id":1}"#, id: 1, timeout: 10)
        XCTAssertEqual(reply["ok"], .bool(true), reply.jsonText)

        // Half the round, then a third client joins mid-round, then the rest.
        let motion = headScans(d, seconds: 9, rate: 100, t0: t0 + 500_000_000, rollDeg: Self.nodding)
        try writer.write(Array(motion.prefix(400)))
        var linesA: [String] = [], linesB: [String] = []
        func collect(_ c: LineClient, into lines: inout [String], until kind: String) throws {
            while true {
                guard let l = try c.readLine(timeout: 15) else { throw LineClient.Failure(description: "closed") }
                let v = try JSONParser.parse(l)
                if v["class"] == "game" {
                    lines.append(l)
                    if v["kind"]?.stringValue == kind { return }
                    // Fail now, with the reason, rather than wait out the timeout for a prompt
                    // that a finished round will never show.
                    if v["kind"]?.stringValue == "round_ended" {
                        throw LineClient.Failure(description: "the round ended while waiting for \(kind): \(l)")
                    }
                }
            }
        }
        try collect(a, into: &linesA, until: "prompt")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        let lateHello = try c.next("hello")
        let game = try XCTUnwrap(lateHello["game"])
        XCTAssertNotEqual(game["state"], "idle", "the late joiner sees the running round: \(game.jsonText)")
        XCTAssertEqual(game["round"], reply["round"])
        XCTAssertNotNil(game["remaining_ms"]?.intValue)

        try writer.write(Array(motion.dropFirst(400)))
        try collect(a, into: &linesA, until: "round_ended")
        try collect(b, into: &linesB, until: "round_ended")

        // Host-authoritative: both clients got the same game lines, byte for byte, in order.
        XCTAssertEqual(linesA, linesB)
        let kinds = linesA.compactMap { try? JSONParser.parse($0)["kind"]?.stringValue }
        XCTAssertEqual(kinds.first, "round_started")
        // The round began at the newest sample the daemon had when the command arrived.
        XCTAssertEqual(try JSONParser.parse(linesA[0])["t_ns"]?.intValue, lastUpright, linesA[0])
        XCTAssertGreaterThanOrEqual(kinds.filter { $0 == "correct" }.count, 2, "\(kinds)")
        XCTAssertGreaterThanOrEqual(kinds.filter { $0 == "skip" }.count, 2, "\(kinds)")
        // Answers alternate as the head did: up first (at 1.5 s), then down (at 3 s), …
        let answers = kinds.filter { $0 == "correct" || $0 == "skip" }
        for (i, k) in answers.enumerated() { XCTAssertEqual(k, i % 2 == 0 ? "skip" : "correct", "\(answers)") }
        let end = try JSONParser.parse(linesA.last!)
        XCTAssertEqual(end["result"]?["reason"], "timeout")
        XCTAssertEqual(end["score"]?.intValue, Int64(answers.filter { $0 == "correct" }.count))

        // The finished round is in the history.
        let h = try a.request(#"{"cmd":"history","id":2,"n":1}"#, id: 2)
        XCTAssertEqual(h["rounds"]?.arrayValue?.first?["round"], reply["round"])
        XCTAssertEqual(h["rounds"]?.arrayValue?.first?["score"], end["score"])
    }
}
