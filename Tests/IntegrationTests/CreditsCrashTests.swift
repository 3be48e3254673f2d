// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// `kill -9` of the real daemon while it writes credits: every credit a client was told about
/// is in the ledger after a restart, none is there twice, and SQLite finds the file intact.
///
/// A `credit` `earned` event is published only after its transaction committed, so every one a
/// client saw must survive the kill. The walk passes 12 places with 10 credit-earning geofences
/// each (GPX replayed at 10×, a place every 0.5 s): every enter, dwell and exit is a burst of ten
/// writes, and the kill comes in the middle of a burst of credits, with the rest still queued.
final class CreditsCrashTests: XCTestCase {
    var dir = ""
    var daemon: DaemonProcess?

    override func setUpWithError() throws {
        try requireSQLiteCLI()
        dir = makeTempDir("crash")
    }

    override func tearDown() {
        daemon?.stop(signal: SIGKILL)
        try? FileManager.default.removeItem(atPath: dir)
    }

    func testSIGKILLDuringCreditWritesLosesNothingCommitted() throws {
        let walk = GPSWalk(count: 120, prefix: "f", perStop: 10, staySeconds: 3)
        try walk.gpx().write(toFile: "\(dir)/walk.gpx", atomically: true, encoding: .utf8)
        let config = try writeDaemonConfig(in: dir, walk.geofenceTOML())
        let db = "\(dir)/tiltd.sqlite"
        let expected = Set(walk.fences.indices.map(walk.creditRequestId))
        var seen: [String: String] = [:]  // request id → fence key, over all runs

        // Each round replays the same walk on the same store: visits committed before an earlier
        // kill come round again and must not be credited twice (they publish nothing); new
        // ones are credited until the kill.
        for (round, newCredits) in [15, 23, 27].enumerated() {
            // Paced (not as fast as possible) so that a client connecting a little late on a
            // loaded machine still sees enough of the walk.
            let d = try DaemonProcess(
                ["run", "--config", config, "--gpx", "\(dir)/walk.gpx", "--gpx-speed", "10"],
                logPath: "\(dir)/log-\(round)")
            daemon = d
            let c = try LineClient(path: "\(dir)/tiltd.sock")
            _ = try c.request(#"{"cmd":"watch","id":1,"classes":["credit"]}"#, id: 1)
            var thisRound = 0
            var lastBalance = -1
            while thisRound < newCredits {
                let e: JSONValue
                do { e = try c.next("credit", timeout: 20) { $0["event"] == "earned" } } catch {
                    throw LineClient.Failure(
                        description: "round \(round): \(thisRound) of \(newCredits) new credits: \(error)\n\(d.log)")
                }
                let id = try XCTUnwrap(e["request_id"]?.stringValue)
                let balance = try XCTUnwrap(e["balance"]?.intValue)
                XCTAssertNil(seen[id], "round \(round): credit \(id) published twice")
                XCTAssertGreaterThan(Int(balance), lastBalance, "balance grows with each credit")
                lastBalance = Int(balance)
                seen[id] = e["fence"]?.stringValue
                thisRound += 1
            }
            XCTAssertEqual(d.stop(signal: SIGKILL, timeout: 5), SIGKILL, "round \(round): killed by SIGKILL")
            XCTAssertTrue(
                FileManager.default.fileExists(atPath: "\(db)-wal"),
                "killed with its WAL open (a real crash, not a clean close)")

            // Restart on the same store, without fixes: the ledger as the crash left it.
            let again = try DaemonProcess(["run", "--config", config], logPath: "\(dir)/log-\(round)-restart")
            daemon = again
            let q = try LineClient(path: "\(dir)/tiltd.sock")
            let credits = try q.credits(id: 2)
            XCTAssertGreaterThanOrEqual(credits.balance, seen.count, "round \(round): a credit the client saw was lost")
            for (id, key) in seen {
                XCTAssertEqual(credits.perFence[key], 1, "round \(round): \(id) at \(key)")
            }
            XCTAssertTrue(
                credits.perFence.values.allSatisfy { $0 == 1 }, "one visit per fence, one credit: \(credits.perFence)")
            XCTAssertEqual(again.stop(), 0, again.log)

            let audit = try LedgerAudit(db: db)
            audit.assertConsistent("after kill \(round)")
            XCTAssertTrue(
                Set(seen.keys).isSubset(of: audit.earnedIds),
                "round \(round): seen credits missing from the ledger: \(Set(seen.keys).subtracting(audit.earnedIds).sorted())"
            )
            XCTAssertTrue(
                audit.earnedIds.isSubset(of: expected),
                "credits for visits that never happened: \(audit.earnedIds.subtracting(expected))")
            XCTAssertEqual(audit.balance, credits.balance)
            print(
                "tiltd crash round \(round): \(seen.count) credits seen in all, \(audit.earnedIds.count) committed at the kill"
            )
        }

        // Finally the whole walk, uninterrupted: exactly one credit per visit in the end.
        let d = try DaemonProcess(
            ["run", "--config", config, "--gpx", "\(dir)/walk.gpx", "--fast"], logPath: "\(dir)/log-final")
        daemon = d
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        try waitUntil("all 120 credits", timeout: 60) { try c.credits(id: 3).balance >= 120 }
        XCTAssertEqual(try c.credits(id: 4).balance, 120)
        XCTAssertEqual(d.stop(), 0, d.log)
        let audit = try LedgerAudit(db: db)
        audit.assertConsistent("after the full walk")
        XCTAssertEqual(audit.earnedIds, expected)
        XCTAssertEqual(audit.requestIds.count, 120)
    }
}
