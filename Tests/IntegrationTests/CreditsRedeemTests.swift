// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// Two clients of the real daemon redeem credits at once: the ledger stays exact.
final class CreditsRedeemTests: XCTestCase {
    var dir = ""
    var daemon: DaemonProcess?

    override func setUpWithError() throws {
        try requireSQLiteCLI()
        dir = makeTempDir("redeem")
    }

    override func tearDown() {
        daemon?.stop(signal: SIGKILL)
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Sends `lines` in one write, then reads until every id in `ids` has its reply.
    static func pipeline(
        _ c: LineClient, _ lines: [String], ids: Set<Int64>, timeout: Double = 15
    ) throws -> [Int64: JSONValue] {
        try c.send(Array(lines.map { $0 + "\n" }.joined().utf8))
        var replies: [Int64: JSONValue] = [:]
        let deadline = Date().addingTimeInterval(timeout)
        while replies.count < ids.count {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                throw LineClient.Failure(description: "replies for \(ids.subtracting(replies.keys).sorted()) missing")
            }
            let r = try c.next("reply", timeout: left)
            if let id = r["id"]?.intValue, ids.contains(id) { replies[id] = r }
        }
        return replies
    }

    /// Runs `body(0)` and `body(1)` on two threads at the same time; rethrows the first error.
    static func together(_ body: @Sendable (Int) throws -> Void) throws {
        let errors = Mutex<[any Error]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { k in
            do { try body(k) } catch { errors.withLock { $0.append(error) } }
        }
        if let e = errors.withLock({ $0.first }) { throw e }
    }

    func testTwoClientsRedeemAtOnceAndTheLedgerStaysExact() throws {
        // Seed the balance the way a wearer would: a walk (GPX, replayed as fast as possible)
        // that dwells at four credit-earning geofences.
        let walk = GPSWalk(count: 4, prefix: "cafe")
        try walk.gpx().write(toFile: "\(dir)/walk.gpx", atomically: true, encoding: .utf8)
        let config = try writeDaemonConfig(in: dir, walk.geofenceTOML())
        let d = try DaemonProcess(
            ["run", "--config", config, "--gpx", "\(dir)/walk.gpx", "--fast"], logPath: "\(dir)/log")
        daemon = d
        let c1 = try LineClient(path: "\(dir)/tiltd.sock")
        let c2 = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try c1.next("hello")
        _ = try c2.next("hello")
        var seeded = try c1.credits(id: 1)
        try waitUntil("the walk's four credits", timeout: 20) {
            seeded = try c1.credits(id: 1)
            return seeded.balance >= 4
        }
        XCTAssertEqual(seeded.balance, 4)
        XCTAssertEqual(seeded.perFence, Dictionary(uniqueKeysWithValues: walk.fences.map { ($0.key, 1) }))

        // The same request id from both clients at the same moment: applied once.
        let shared = Mutex<[JSONValue]>([])
        try Self.together { k in
            let c = k == 0 ? c1 : c2
            let r = try Self.pipeline(
                c, [#"{"cmd":"credits.redeem","id":10,"amount":1,"request_id":"shared-1"}"#], ids: [10])
            shared.withLock { $0.append(r[10]!) }
        }
        let sharedReplies = shared.withLock { $0 }
        XCTAssertTrue(sharedReplies.allSatisfy { $0["ok"] == .bool(true) }, "\(sharedReplies)")
        XCTAssertEqual(sharedReplies.compactMap { $0["redeemed"]?.intValue }.sorted(), [0, 1], "\(sharedReplies)")
        XCTAssertEqual(sharedReplies.filter { $0["already_applied"] == .bool(true) }.count, 1, "\(sharedReplies)")
        XCTAssertEqual(sharedReplies.compactMap { $0["balance"]?.intValue }, [3, 3], "\(sharedReplies)")

        // Ten distinct requests of 1 credit, five from each client, against a balance of 3.
        let replies = Mutex<[JSONValue]>([])
        try Self.together { k in
            let c = k == 0 ? c1 : c2
            let ids = (0..<5).map { Int64(100 + k * 5 + $0) }
            let lines = ids.map { #"{"cmd":"credits.redeem","id":\#($0),"amount":1,"request_id":"r-\#($0)"}"# }
            let r = try Self.pipeline(c, lines, ids: Set(ids))
            replies.withLock { $0.append(contentsOf: r.values) }
        }
        let all = replies.withLock { $0 }
        XCTAssertEqual(all.count, 10)
        let ok = all.filter { $0["ok"] == .bool(true) }
        let refused = all.filter { $0["ok"] == .bool(false) }
        XCTAssertEqual(ok.count, 3, "exactly the balance is spent: \(all)")
        XCTAssertEqual(refused.count, 7, "\(all)")
        XCTAssertTrue(refused.allSatisfy { $0["error"]?["code"] == "insufficient_credits" }, "\(refused)")
        XCTAssertEqual(
            Set(ok.compactMap { $0["balance"]?.intValue }), [0, 1, 2], "each success saw its own balance: \(ok)")
        XCTAssertTrue(all.allSatisfy { ($0["balance"]?.intValue ?? 0) >= 0 })

        // Repeating the shared id after the balance is gone is still "already applied", not a refusal.
        let again = try c2.request(#"{"cmd":"credits.redeem","id":20,"amount":1,"request_id":"shared-1"}"#, id: 20)
        XCTAssertEqual(again["ok"], .bool(true), "\(again)")
        XCTAssertEqual(again["already_applied"], .bool(true), "\(again)")
        XCTAssertEqual(again["balance"]?.intValue, 0)

        // A redeem cannot take an earned credit's id (it would swallow the credit that visit
        // earns later), nor an empty one.
        for (id, rid) in [(22, "dwell:place:bakery1:1777716024000000000"), (23, "")] {
            let r = try c2.request(
                #"{"cmd":"credits.redeem","id":\#(id),"amount":1,"request_id":"\#(rid)"}"#, id: id)
            XCTAssertEqual(r["error"]?["code"], "bad_argument", "\(rid): \(r)")
        }

        let after = try c2.credits(id: 21)
        XCTAssertEqual(after.balance, 0)
        XCTAssertEqual(after.perFence, seeded.perFence, "redeeming leaves the earned counts alone")
        XCTAssertEqual(d.stop(), 0, d.log)

        // The file itself: four redeems, the four earned credits, sums agree, ids unique.
        let audit = try LedgerAudit(db: "\(dir)/tiltd.sqlite")
        audit.assertConsistent("after the redeem race")
        XCTAssertEqual(audit.balance, 0)
        XCTAssertEqual(audit.redeemCount, 4)
        XCTAssertEqual(audit.requestIds.filter { $0 == "shared-1" }.count, 1)
        XCTAssertEqual(audit.earnedIds, Set(walk.fences.indices.map(walk.creditRequestId)))
        let succeeded = Set(ok.compactMap { $0["request_id"]?.stringValue }).union(["shared-1"])
        XCTAssertEqual(
            Set(audit.requestIds).subtracting(audit.earnedIds), succeeded,
            "the ledger holds exactly the redeems that were answered ok")
    }
}
