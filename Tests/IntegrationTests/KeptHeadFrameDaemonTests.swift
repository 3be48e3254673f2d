// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltPlatform
import XCTest

/// The head frame learned from wear is kept across restarts (`head-frame.json` beside the
/// store's database), in the real daemon: learned on one run, in use from the first sample of
/// the next, and a damaged file is reported and ignored.
final class KeptHeadFrameDaemonTests: XCTestCase {
    typealias Wear = LearnedHeadFrameDaemonTests
    var dir = ""
    override func setUp() { dir = makeTempDir("keptframe") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testAFrameLearnedInOneRunIsInUseFromTheStartOfTheNext() throws {
        let recording = "\(dir)/wear.csv"
        try Wear.writeRecording(to: recording)
        let config = try writeDaemonConfig(in: dir, "[log]\nlevel = \"warning\"")
        let kept = "\(dir)/head-frame.json"
        var d = try DaemonProcess(
            ["run", "--config", config, "--replay", recording, "--speed", "20"], logPath: "\(dir)/log")
        var c = try LineClient(path: "\(dir)/tiltd.sock")
        XCTAssertEqual(try c.next("hello")["game"]?["orientation"]?["source"], "assumed")
        let adopted = try c.next("game", timeout: 30) { $0["kind"] == "head_frame" }
        XCTAssertEqual(adopted["orientation"]?["source"], "learned", "\(adopted)")
        try waitUntil("the learned frame is kept in \(kept)") { FileManager.default.fileExists(atPath: kept) }
        XCTAssertEqual(d.stop(), 0, d.log)

        // The next run replays two seconds of a still head only: nothing to learn from, yet the
        // frame in use from the start is the one learned before, the mount's.
        let still = "\(dir)/still.csv"
        try Wear.writeRecording(to: still, deskSeconds: 0, walkSeconds: 0)
        var text = try String(contentsOfFile: still, encoding: .utf8)
        let up = Wear.mount.rotate(Wear.headUp) * 9.81
        for i in 0..<200 { text += "\(Wear.t0 + Nanoseconds(i) * 10_000_000),\(up.x),\(up.y),\(up.z),0,0,0\n" }
        try text.write(toFile: still, atomically: true, encoding: .utf8)
        d = try DaemonProcess(["run", "--config", config, "--replay", still], logPath: "\(dir)/log2")
        c = try LineClient(path: "\(dir)/tiltd.sock")
        let o = try XCTUnwrap(c.next("hello")["game"]?["orientation"])
        try Wear.assertLearnedTheMount(o)
        // Still in use once the still samples have been played: the learner that saw nothing
        // does not withdraw it.
        _ = try c.next("attitude", timeout: 10) { ($0["t_ns"]?.intValue ?? 0) >= Wear.t0 + 1_500_000_000 }
        let late = try LineClient(path: "\(dir)/tiltd.sock")
        XCTAssertEqual(try late.next("hello")["game"]?["orientation"]?["source"], "learned")
        XCTAssertEqual(d.stop(), 0, d.log)
    }

    func testADamagedKeptFrameIsReportedAndIgnored() throws {
        let config = try writeDaemonConfig(in: dir, "[log]\nlevel = \"warning\"")
        try #"{"up":[0,0,1],"forward":"#.write(toFile: "\(dir)/head-frame.json", atomically: true, encoding: .utf8)
        let d = try DaemonProcess(
            ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv"], logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        XCTAssertEqual(try c.next("hello")["game"]?["orientation"]?["source"], "assumed")
        XCTAssertTrue(d.log.contains("not a kept head frame"), d.log)
        XCTAssertEqual(try c.request(#"{"cmd":"ping","id":1}"#, id: 1)["ok"], .bool(true))
        XCTAssertEqual(d.stop(), 0, d.log)
    }
}
