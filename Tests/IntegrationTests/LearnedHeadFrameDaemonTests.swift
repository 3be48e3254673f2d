// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltPlatform
import TiltProtocol
import XCTest

/// The head frame learned from wear, in the real daemon (issue 30): `tiltd run --replay` of a
/// synthetic wearer on a skewed mount — half a minute at a desk looking down and back up, then a
/// minute of walking — and `[game] head_frame`.
final class LearnedHeadFrameDaemonTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = makeTempDir("headframe") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// Head frame → sensor frame: far from the convention (y up, z back).
    static let mount = Quaternion(roll: 1.2, pitch: -0.7, yaw: 2.1)
    static let headUp = Vector3(0, 0, 1)
    static let headForward = Vector3(1, 0, 0)
    static let headLeft = Vector3(0, 1, 0)
    static let t0: Nanoseconds = 1_000_000_000

    /// The recording, at 100 Hz, in the sensor frame. At the desk the head pitches 15–45° down
    /// and back (4 s a cycle, up to 24 °/s): the tilts give the ear-to-ear axis, the looks down
    /// the sign. Walking: 1.8 steps/s, the head bobbing about the ear-to-ear axis, the body
    /// swaying it at the stride frequency, looking ahead.
    static func writeRecording(to path: String, deskSeconds: Double = 30, walkSeconds: Double = 60) throws {
        var text = RecordingFormat.banner + "\n" + RecordingFormat.header + "\n"
        let step = 2 * Double.pi * 1.8
        for i in 0..<Int((deskSeconds + walkSeconds) * 100) {
            let s = Double(i) / 100
            var accel: Vector3
            var rate: Vector3
            if s < deskSeconds {
                let down = (30 + 15 * sin(2 * .pi * s / 4)) * .pi / 180
                let downRate = 15 * .pi / 180 * 2 * .pi / 4 * cos(2 * .pi * s / 4)
                accel = (headUp * cos(down) - headForward * sin(down)) * 9.81
                rate = headLeft * downRate  // face down: positive about left
            } else {
                accel =
                    headUp * (9.81 + 1.5 * sin(step * s)) + headForward * (-0.8 * cos(step * s))
                    + headLeft * (0.6 * sin(step / 2 * s))
                rate =
                    headLeft * (0.25 * sin(step * s + 0.7)) + headForward * (0.35 * sin(step / 2 * s))
                    + headUp * (0.3 * sin(step / 2 * s + 1))
            }
            let a = mount.rotate(accel)
            let w = mount.rotate(rate)
            text += "\(t0 + Nanoseconds(s * 1e9)),\(a.x),\(a.y),\(a.z),\(w.x),\(w.y),\(w.z)\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func degrees(_ a: Vector3, _ b: Vector3) -> Double {
        acos(max(-1, min(1, a.normalized.dot(b.normalized)))) * 180 / .pi
    }

    static func vector(_ v: JSONValue?) -> Vector3? {
        guard let a = v?.arrayValue, a.count == 3, let x = a[0].doubleValue, let y = a[1].doubleValue,
            let z = a[2].doubleValue
        else { return nil }
        return Vector3(x, y, z)
    }

    /// `orientation` (of a hello) says `learned`, its axes within 10° of the mount's.
    static func assertLearnedTheMount(_ o: JSONValue, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(o["source"], "learned", "\(o)", file: file, line: line)
        let up = try XCTUnwrap(vector(o["up"]), file: file, line: line)
        let forward = try XCTUnwrap(vector(o["forward"]), file: file, line: line)
        XCTAssertLessThan(degrees(up, mount.rotate(headUp)), 10, "\(o)", file: file, line: line)
        XCTAssertLessThan(degrees(forward, mount.rotate(headForward)), 10, "\(o)", file: file, line: line)
    }

    /// Reads game lines until a `head_frame` event; returns it.
    func headFrameEvent(_ c: LineClient, timeout: Double) throws -> JSONValue {
        try c.next("game", timeout: timeout) { $0["kind"] == "head_frame" }
    }

    func testAWearerWhoNeverCalibratedGetsTheLearnedFrameAndAssumedTakesItBack() throws {
        let recording = "\(dir)/wear.csv"
        try Self.writeRecording(to: recording)
        let config = try writeDaemonConfig(in: dir, "[log]\nlevel = \"warning\"")
        let d = try DaemonProcess(
            ["run", "--config", config, "--replay", recording, "--speed", "20"], logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        let hello = try c.next("hello")
        XCTAssertEqual(hello["game"]?["orientation"]?["source"], "assumed", "\(hello)")
        // 90 s of wear at 20× take 4.5 s; the frame comes after some 20–30 s of the walk.
        let adopted = try headFrameEvent(c, timeout: 30)
        XCTAssertEqual(adopted["orientation"]?["source"], "learned", "\(adopted)")
        // A client joining now sees it in hello, the frame's axes within 10° of the mount's.
        let late = try LineClient(path: "\(dir)/tiltd.sock")
        let o = try XCTUnwrap(late.next("hello")["game"]?["orientation"])
        try Self.assertLearnedTheMount(o)

        // `[game] head_frame = "assumed"` by reload: back to the convention, said in a game line.
        _ = try writeDaemonConfig(in: dir, "[log]\nlevel = \"warning\"\n[game]\nhead_frame = \"assumed\"")
        let (status, out) = try runTiltd(["reload", "--socket", "\(dir)/tiltd.sock"])
        XCTAssertEqual(status, 0, out)
        let dropped = try headFrameEvent(c, timeout: 10)
        XCTAssertEqual(dropped["orientation"]?["source"], "assumed", "\(dropped)")
        let after = try LineClient(path: "\(dir)/tiltd.sock")
        XCTAssertEqual(try after.next("hello")["game"]?["orientation"]?["source"], "assumed")
        XCTAssertEqual(d.stop(), 0, d.log)
    }

    func testAnExplicitCalibrationWins() throws {
        let recording = "\(dir)/wear.csv"
        try Self.writeRecording(to: recording)
        // The calibration file's head frame (here in the main file: the same keys) is the
        // convention's, not the mount's: it must stay in use however long the wearer walks.
        let config = try writeDaemonConfig(
            in: dir, "[log]\nlevel = \"warning\"\n[calibration]\nhead_up = [0, 1, 0]\nhead_forward = [0, 0, -1]")
        let d = try DaemonProcess(
            ["run", "--config", config, "--replay", recording, "--speed", "20"], logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        XCTAssertEqual(try c.next("hello")["game"]?["orientation"]?["source"], "calibrated")
        // Past the end of the walk (sample time): no head_frame line came, the frame is unchanged.
        let deadline = Date().addingTimeInterval(30)
        while true {
            XCTAssertLessThan(Date(), deadline, "the replay did not reach the end of the walk")
            guard Date() < deadline, let v = try c.readJSON(timeout: 5) else { break }
            XCTAssertFalse(v["class"] == "game" && v["kind"] == "head_frame", "\(v)")
            if v["class"] == "attitude", (v["t_ns"]?.intValue ?? 0) >= Self.t0 + 88_000_000_000 { break }
        }
        let late = try LineClient(path: "\(dir)/tiltd.sock")
        let o = try XCTUnwrap(late.next("hello")["game"]?["orientation"])
        XCTAssertEqual(o["source"], "calibrated", "\(o)")
        XCTAssertEqual(Self.vector(o["up"]), Vector3(0, 1, 0))
        XCTAssertEqual(d.stop(), 0, d.log)
    }
}
