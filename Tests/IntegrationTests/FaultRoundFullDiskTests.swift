// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// A round that ends while the disk is full (issue 37): its commit fails, and then its end must
/// not be announced (`stopped`/`round_ended` tell clients the round is stored, and `history`
/// would lack it). Clients get the store's `retrying` status instead. Same 1 MiB tmpfs as
/// `FaultDiskFullTests` (root in scripts/fakehw-ns's mount namespace).
final class FaultRoundFullDiskTests: XCTestCase {
    var dir = ""
    var state = ""
    var mounted = false
    var daemon: DaemonProcess?

    override func setUpWithError() throws {
        dir = makeTempDir("roundfull")
        state = "\(dir)/state"
        try FaultDiskFullTests.mountSmallState(at: state)
        mounted = true
    }

    override func tearDown() {
        daemon?.stop(signal: SIGKILL)
        if mounted { try? FaultDiskFullTests.run("/bin/umount", ["-l", state]) }
        try? FileManager.default.removeItem(atPath: dir)
    }

    func testARoundWhoseCommitFailsIsNotAnnouncedAsEnded() throws {
        let config = try writeDaemonConfig(in: dir, storePath: "\(state)/tiltd.sqlite", "[game]\nround_s = 60")
        daemon = try DaemonProcess(
            ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--speed", "1"],
            logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try c.next("hello")
        _ = try c.next("attitude", timeout: 10)
        // The store exists (a first write), then the disk fills.
        XCTAssertEqual(try c.request(#"{"cmd":"credits","id":1}"#, id: 1)["ok"], .bool(true))
        _ = try c.request(#"{"cmd":"watch","id":2,"classes":["game","status"]}"#, id: 2)
        let started = try c.request(#"{"cmd":"game.start","id":3}"#, id: 3, timeout: 10)
        XCTAssertEqual(started["ok"], .bool(true), "\(started)")
        _ = try FaultDiskFullTests.fill("\(state)/filler")
        let stopped = try c.request(#"{"cmd":"game.stop","id":4}"#, id: 4, timeout: 10)
        XCTAssertEqual(stopped["ok"], .bool(true), "\(stopped)")
        // The failed commit says so; anything published with it comes before a later reply.
        var seen: [JSONValue] = []
        var status: JSONValue?
        while status == nil, let v = try c.readJSON(timeout: 15) {
            seen.append(v)
            if v["class"] == "status", v["source"] == "store",
                v["message"]?.stringValue?.contains("saving round") ?? false
            {
                status = v
            }
        }
        XCTAssertEqual(status?["state"], "retrying", "the store says the round's commit failed: \(seen)")
        try c.send(#"{"cmd":"ping","id":5}"#)
        while let v = try c.readJSON(timeout: 10), !(v["class"] == "reply" && v["id"] == .int(5)) { seen.append(v) }
        let ends = seen.filter { $0["class"] == "game" && ($0["kind"] == "stopped" || $0["kind"] == "round_ended") }
        XCTAssertEqual(ends.count, 0, "a round end published although its commit failed: \(ends)")
        XCTAssertTrue(daemon!.isRunning, daemon!.log)
    }
}
