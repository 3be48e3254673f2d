// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// The real `tiltd run` on the bundled recording: what the README's demo shows.
final class ReplayDaemonTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = makeTempDir("replay") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func writeConfig(_ extra: String = "") throws -> String { try writeDaemonConfig(in: dir, extra) }

    func testReplayStreamsHelloStatusAndAttitude() throws {
        let config = try writeConfig()
        let d = try DaemonProcess(
            ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--speed", "4"],
            logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        let hello = try c.next("hello")
        XCTAssertEqual(hello["protocol"], .int(1))
        let status = try c.next("status", timeout: 10) { $0["state"] == "streaming" }
        XCTAssertEqual(status["source"], "imu")
        // The recording starts with 5 s still at roll +90° (IMU on the forehead, head upright).
        let a = try c.next("attitude", timeout: 10)
        let roll = try XCTUnwrap(a["roll_deg"]?.doubleValue)
        XCTAssertEqual(roll, 90, accuracy: 3, "upright head reads roll ≈ 90°, got \(roll)")
        XCTAssertEqual(a["q"]?.arrayValue?.count, 4)
        XCTAssertNotNil(a["t_ns"]?.intValue)
        XCTAssertEqual(d.stop(), 0, d.log)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/tiltd.sock"), "socket removed on exit")
    }

    func testFastReplaySeesTheNodDown() throws {
        let config = try writeConfig("[log]\nlevel = \"warning\"")
        let d = try DaemonProcess(
            [
                "run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--speed", "10",
                "--exit-when-done",
            ],
            logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try c.request(#"{"cmd":"watch","id":1,"attitude_hz":1000}"#, id: 1)
        var minRoll = 180.0, maxRoll = 0.0
        while let v = try c.readJSON(timeout: 20) {
            if v["class"] == "attitude", let r = v["roll_deg"]?.doubleValue {
                minRoll = min(minRoll, abs(r)); maxRoll = max(maxRoll, abs(r))
            }
        }
        // The script nods down to 25° and tilts up to 155°.
        XCTAssertEqual(minRoll, 25, accuracy: 4)
        XCTAssertEqual(maxRoll, 155, accuracy: 4)
        XCTAssertEqual(d.waitForExit(timeout: 10), 0, d.log)
    }

    func testMalformedConfigIsRefusedWithFileLineAndKey() throws {
        let path = "\(dir)/bad.toml"
        try "[imu]\nrate_hz = 60\nsample_rate = 100\n".write(toFile: path, atomically: true, encoding: .utf8)
        let (status, out) = try runTiltd(["run", "--config", path])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(out.contains("\(path):3: imu.sample_rate: unknown key"), out)

        let (s2, out2) = try runTiltd(["check-config", "--config", path])
        XCTAssertNotEqual(s2, 0)
        XCTAssertTrue(out2.contains("\(path):3"), out2)
    }

    /// A start that fails (the socket path is a regular file) says why and stops every part in
    /// order: the sampler is stopped before the event loop it hands samples to.
    func testAFailedStartSaysWhyAndStopsInOrder() throws {
        FileManager.default.createFile(atPath: "\(dir)/not-a-socket", contents: Data("keep me".utf8))
        let path = "\(dir)/tiltd.toml"
        try """
        [socket]
        path = "\(dir)/not-a-socket"
        [store]
        path = "\(dir)/tiltd.sqlite"
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let (status, out) = try runTiltd(
            ["run", "--config", path, "--replay", "\(repositoryRoot)/config/demo/head.csv"])
        XCTAssertEqual(status, 1, out)
        XCTAssertTrue(out.contains("not-a-socket exists and is not a socket; refusing to replace it"), out)
        XCTAssertFalse(out.contains("EventLoop"), "nothing is handed to a stopped event loop: \(out)")
        XCTAssertEqual(try String(contentsOfFile: "\(dir)/not-a-socket", encoding: .utf8), "keep me")
    }

    func testAMistypedRecordingIsAnError() throws {
        // Before, the replay "finished" at once: the daemon served nothing, and with
        // --exit-when-done it exited 0.
        let config = try writeConfig()
        for (args, says) in [
            (["--replay", "\(dir)/no-such.csv", "--exit-when-done"], "--replay \(dir)/no-such.csv: No such file"),
            (["--replay", dir], "--replay \(dir): is a directory"),
            (
                ["--replay", "\(repositoryRoot)/config/demo/head.csv", "--gpx", "\(dir)/no-such.gpx"],
                "--gpx \(dir)/no-such.gpx: No such file"
            ),
        ] {
            let (status, out) = try runTiltd(["run", "--config", config] + args, timeout: 10)
            XCTAssertEqual(status, 1, out)
            XCTAssertTrue(out.contains(says), out)
            XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/tiltd.sock"), "it never listened")
        }
    }

    func testARoundEndsWhenTheRecordingRunsOut() throws {
        // The round's clock is the samples': before, a round longer than the recording stayed
        // in `prompt` for good once the replay ended, and clients waited for its end forever.
        let config = try writeConfig("[game]\nround_s = 600")
        let d = try DaemonProcess(
            [
                "run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--fast",
                "--hold-until-round",
            ],
            logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try c.next("hello")
        _ = try c.next("attitude", timeout: 10)
        let started = try c.request(#"{"cmd":"game.start","id":1}"#, id: 1, timeout: 10)
        XCTAssertEqual(started["ok"], .bool(true), "\(started)")
        let ended = try c.next("game", timeout: 30) { $0["kind"] == "round_ended" }
        XCTAssertEqual(ended["result"]?["reason"], "recording_ended", "\(ended)")
        XCTAssertEqual(d.stop(), 0, d.log)
    }

    func testCheckConfigReadsThePlacesFileAsTheDaemonDoes() throws {
        // It passed a places file `tiltd run` refuses at start.
        try #"{"type":"Feature"}"#.write(toFile: "\(dir)/bad.geojson", atomically: true, encoding: .utf8)
        let config = try writeConfig("[places]\nfile = \"\(dir)/bad.geojson\"")
        for command in ["check-config", "run"] {
            let (status, out) = try runTiltd([command, "--config", config], timeout: 10)
            XCTAssertEqual(status, 1, "\(command): \(out)")
            XCTAssertTrue(out.contains("places.file: \(dir)/bad.geojson: places file must be"), "\(command): \(out)")
        }
    }

    func testCheckConfigPrintsEffectiveValues() throws {
        let path = try writeConfig("[imu]\nrate_hz = 100")
        let (status, out) = try runTiltd(["check-config", "--config", path])
        XCTAssertEqual(status, 0, out)
        XCTAssertTrue(out.contains("rate_hz = 100"), out)
        XCTAssertTrue(out.contains("device = \"auto\""), out)
    }

    func testRecordCutsARecordingThatReplaysIdentically() throws {
        let out = "\(dir)/cut.csv"
        let (status, log) = try runTiltd([
            "record", "--config", "\(dir)/none.toml", "--replay", "\(repositoryRoot)/config/demo/head.csv", "--seconds",
            "2", "--out", out,
        ])
        XCTAssertEqual(status, 0, log)
        let rows = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").filter {
            !$0.hasPrefix("#") && !$0.hasPrefix("t_ns")
        }
        XCTAssertEqual(rows.count, 120, "2 s at 60 Hz")
        let original = try String(contentsOfFile: "\(repositoryRoot)/config/demo/head.csv", encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("t_ns") }
        // Same samples (numbers compare equal; formatting may drop trailing zeros).
        let parsed = try rows.map { try XCTUnwrap(RecordingFormat.parse(line: $0)) }
        let expected = try original.prefix(120).map { try XCTUnwrap(RecordingFormat.parse(line: $0)) }
        XCTAssertTrue(parsed == expected, "the cut differs from the original's first 2 s")
    }
}
