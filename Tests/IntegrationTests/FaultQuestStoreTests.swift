// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// A quest completion is told only once the store has it (as a credit is): `quest.complete` on
/// a full disk is refused, no `quest` `completed` line goes out, and the cell stays completable;
/// once space is freed the same command completes it, once. (Before, the reply and the line went
/// out before the write: a power cut in between lost a completion a client had been told of —
/// scripts/kernel-test's power cuts caught one.) The state directory is a small tmpfs the test
/// fills, as in `FaultDiskFullTests`.
final class FaultQuestStoreTests: XCTestCase {
    var dir = ""
    var state = ""
    var mounted = false
    var daemon: DaemonProcess?

    override func setUpWithError() throws {
        try requireSQLiteCLI()
        dir = makeTempDir("questfull")
        state = "\(dir)/state"
        try FaultDiskFullTests.mountSmallState(at: state)
        mounted = true
    }

    override func tearDown() {
        daemon?.stop(signal: SIGKILL)
        if mounted { try? FaultDiskFullTests.run("/bin/umount", ["-l", state]) }
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Standing still in one place for `seconds`, one fix a second (GPX, replayed in real time).
    func standingGPX(seconds: Int) -> String {
        var out = #"<gpx version="1.1" creator="tiltd tests"><trk><trkseg>"#
        for i in 0..<seconds {
            let t = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: 1_780_000_000 + Double(i)))
            out += #"<trkpt lat="52.5200" lon="13.4050"><time>\#(t)</time><hdop>0.8</hdop><speed>0</speed></trkpt>"#
        }
        return out + "</trkseg></trk></gpx>\n"
    }

    /// Reads lines until the reply to `id`; returns it and whether a `quest` `completed` line came.
    func replyAndCompletion(_ c: LineClient, id: Int) throws -> (reply: JSONValue, completed: Bool) {
        var completed = false
        while true {
            guard let v = try c.readJSON(timeout: 10) else { throw LineClient.Failure(description: "disconnected") }
            if v["class"] == "quest", v["event"] == "completed" { completed = true }
            if v["class"] == "reply", v["id"] == .int(Int64(id)) {
                // A completion is published right after its reply: give it the time to arrive.
                if v["ok"] == .bool(true), !completed {
                    completed = try c.next("quest", timeout: 5) { $0["event"] == "completed" }["event"] == "completed"
                }
                return (v, completed)
            }
        }
    }

    func testACompletionTheStoreCannotKeepIsRefusedAndNotTold() throws {
        try standingGPX(seconds: 600).write(toFile: "\(dir)/still.gpx", atomically: true, encoding: .utf8)
        let db = "\(state)/tiltd.sqlite"
        let config = try writeDaemonConfig(in: dir, storePath: db, "[quests]\nenabled = true")
        daemon = try DaemonProcess(
            [
                "run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--gpx",
                "\(dir)/still.gpx",
            ], logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try c.next("hello")
        _ = try c.request(#"{"cmd":"watch","id":1,"classes":["quest","status","fix"]}"#, id: 1)
        // A fix in the cell (its `available` line may have gone out before this client watched).
        _ = try c.next("fix", timeout: 15)

        // The disk is full: refused, nothing told, nothing stored.
        let filler = "\(state)/filler"
        _ = try FaultDiskFullTests.fill(filler)
        try c.send(#"{"cmd":"quest.complete","id":2}"#)
        let refused = try replyAndCompletion(c, id: 2)
        XCTAssertEqual(refused.reply["error"]?["code"], "unavailable", "\(refused.reply)")
        XCTAssertFalse(refused.completed, "a completion the store does not have was told")

        // Room again: the same cell completes (it was not left cooling down), once.
        try FileManager.default.removeItem(atPath: filler)
        try c.send(#"{"cmd":"quest.complete","id":3}"#)
        let done = try replyAndCompletion(c, id: 3)
        XCTAssertEqual(done.reply["ok"], .bool(true), "\(done.reply)")
        XCTAssertTrue(done.completed)
        XCTAssertEqual(try sqlite(db, "SELECT COUNT(*) FROM quest_completions"), ["1"])
    }
}
