// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// A round a client saw end is in the history, even after `kill -9` at any moment: the daemon
/// publishes `round_ended`/`stopped` only once the round is committed.
final class RoundHistoryCrashTests: XCTestCase {
    func testKillNineLosesNoFinishedRound() throws {
        let dir = makeTempDir("rounds")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = "\(dir)/tiltd.toml"
        try """
        [socket]
        path = "\(dir)/tiltd.sock"
        attitude_hz = 0
        [store]
        path = "\(dir)/tiltd.sqlite"
        [game]
        round_s = 5
        """.write(toFile: config, atomically: true, encoding: .utf8)

        var seenRounds = Set<Int64>()
        for attempt in 0..<3 {
            let d = try DaemonProcess(
                ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--speed", "10"],
                logPath: "\(dir)/log\(attempt)")
            let c = try LineClient(path: "\(dir)/tiltd.sock")
            _ = try c.next("hello")
            var id = 1
            // A round starts once samples flow (until then the daemon answers `unavailable`).
            try waitUntil("a round to start") {
                id += 1
                return try c.request(#"{"cmd":"game.start","id":\#(id)}"#, id: id)["ok"] == .bool(true)
            }
            var endsThisRun = 0
            // Kill after a varying number of round ends, mid-way through the next round.
            let killAfter = 2 + attempt
            while endsThisRun < killAfter {
                guard let v = try c.readJSON(timeout: 20) else { break }
                guard v["class"] == "game", let kind = v["kind"]?.stringValue else { continue }
                if kind == "round_ended" || kind == "stopped" {
                    seenRounds.insert(try XCTUnwrap(v["round"]?.intValue))
                    endsThisRun += 1
                    id += 1
                    // Alternate: let the next round time out, or stop it early.
                    try c.send(#"{"cmd":"game.start","id":\#(id)}"#)
                } else if kind == "prompt", id % 2 == 0 {
                    id += 1
                    try c.send(#"{"cmd":"game.stop","id":\#(id)}"#)
                }
            }
            XCTAssertEqual(endsThisRun, killAfter, d.log)
            kill(d.pid, SIGKILL)
            _ = d.waitForExit(timeout: 10)
        }

        // A fresh daemon on the same store has every round a client saw end.
        let d = try DaemonProcess(
            ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv"],
            logPath: "\(dir)/log-final")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        let h = try c.request(#"{"cmd":"history","id":1,"n":1000}"#, id: 1)
        let stored = Set((h["rounds"]?.arrayValue ?? []).compactMap { $0["round"]?.intValue })
        XCTAssertTrue(seenRounds.isSubset(of: stored), "lost rounds: \(seenRounds.subtracting(stored).sorted())")
        XCTAssertEqual(seenRounds.count, 2 + 3 + 4)
        // Round ids stay unique across restarts.
        let ids = (h["rounds"]?.arrayValue ?? []).compactMap { $0["round"]?.intValue }
        XCTAssertEqual(ids.count, Set(ids).count, "duplicate round ids: \(ids)")
        XCTAssertEqual(d.stop(), 0)

        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        check.arguments = ["\(dir)/tiltd.sqlite", "PRAGMA integrity_check;"]
        let out = Pipe()
        check.standardOutput = out
        try check.run()
        check.waitUntilExit()
        XCTAssertEqual(
            String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(
                in: .whitespacesAndNewlines), "ok")
    }
}
