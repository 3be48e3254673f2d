// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltPlatform
import TiltProtocol
import XCTest

@testable import TiltService

extension XCTestCase {
    /// A fresh store path in its own temporary directory, removed when the test ends.
    func makeTempStorePath(_ name: String = "tiltd.sqlite") -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-store-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir.appendingPathComponent(name).path
    }
}

func grant(_ id: String, fence: String = "place:cafe", t: Nanoseconds = 0, amount: Int = 1) -> CreditPolicy.Grant {
    CreditPolicy.Grant(requestId: id, fenceKey: fence, name: "Café", t: t, amount: amount)
}

final class StoreTests: XCTestCase {
    func testOpensInWALAndMigrationsAreIdempotent() throws {
        let path = makeTempStorePath()
        let s = try Store(path: path)
        XCTAssertEqual(try s.journalMode(), "wal")
        try s.addCredit(grant("a"))
        let again = try Store(path: path)  // reopening re-runs the migrator: no-op
        XCTAssertEqual(try again.creditBalance(), 1)
        XCTAssertEqual(try again.integrityCheck(), "ok")
    }

    /// A file from the GRDB days opens as it is: its migrations count as applied, its rows read
    /// back, and new rows follow on.
    func testOpensAStoreWrittenThroughGRDB() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/store-grdb/tiltd.sqlite")
        let path = makeTempStorePath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
        let s = try Store(path: path)
        let rounds = try s.recentRounds(limit: 10)
        XCTAssertEqual(rounds.count, 1)
        XCTAssertEqual(rounds.first?.prompts.map(\.text), ["Café Central", "Pizzeria"])
        XCTAssertEqual(rounds.first?.prompts.map(\.decision), ["correct", "skip"])
        XCTAssertEqual(rounds.first?.resultJSON, "{\"score\":1}")
        XCTAssertEqual(try s.lastGameRound(), 7)
        XCTAssertEqual(try s.creditBalance(), 3)
        XCTAssertEqual(try s.recentVisits(limit: 5).first?.dwelledAt, 601_000)
        let id = try s.saveRound(
            .init(startedAt: 70_000, endedAt: 130_000, score: 0, deck: nil, prompts: [], gameRound: 8))
        XCTAssertEqual(id, 2)
        XCTAssertEqual(
            try s.pool.read {
                try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
            },
            ["v1", "v2-round-results"])
        XCTAssertEqual(try s.integrityCheck(), "ok")
    }

    func testRoundHistoryKeepsPromptsInOrderNewestFirst() throws {
        let s = try Store(path: makeTempStorePath())
        let r1 = Store.RoundRecord(
            startedAt: 1_000, endedAt: 61_000, score: 2, deck: "demo",
            prompts: [
                .init(text: "Café Kompass", decision: "correct", decidedAt: 5_000),
                .init(text: "Brotzeit", decision: "skip", decidedAt: 9_000),
                .init(text: "Nudelwerk", decision: "none", decidedAt: nil),
            ])
        let r2 = Store.RoundRecord(startedAt: 100_000, endedAt: 160_000, score: 0, deck: nil, prompts: [])
        let id1 = try s.saveRound(r1)
        let id2 = try s.saveRound(r2)
        XCTAssertLessThan(id1, id2)
        var e1 = r1; e1.id = id1
        var e2 = r2; e2.id = id2
        XCTAssertEqual(try s.recentRounds(limit: 10), [e2, e1])
        XCTAssertEqual(try s.recentRounds(limit: 1), [e2])
        // A bad decision string is refused by the schema and the whole round is rolled back.
        let bad = Store.RoundRecord(
            startedAt: 0, endedAt: 1, score: 1, deck: nil,
            prompts: [.init(text: "x", decision: "maybe", decidedAt: nil)])
        XCTAssertThrowsError(try s.saveRound(bad))
        XCTAssertEqual(try s.recentRounds(limit: 10).count, 2)
    }

    func testCreditsEarnOncePerRequestRedeemAllOrNothing() throws {
        let s = try Store(path: makeTempStorePath())
        for i in 0..<12 {
            try s.addCredit(grant("dwell:\(i)", fence: i < 8 ? "place:a" : "place:b", t: Nanoseconds(i)))
        }
        XCTAssertEqual(try s.addCredit(grant("dwell:3")), .alreadyApplied(balance: 12))
        XCTAssertEqual(try s.redeem(requestId: "r1", amount: 10, t: 100), .redeemed(balance: 2))
        XCTAssertEqual(try s.redeem(requestId: "r1", amount: 10, t: 101), .alreadyApplied(balance: 2))
        XCTAssertEqual(try s.redeem(requestId: "r2", amount: 10, t: 102), .insufficient(balance: 2, needed: 10))
        XCTAssertThrowsError(try s.redeem(requestId: "dwell:0", amount: 1, t: 103)) {
            XCTAssertEqual($0 as? Store.Failure, .requestIdReused("dwell:0"))
        }
        XCTAssertThrowsError(try s.redeem(requestId: "r3", amount: 0, t: 104))
        XCTAssertEqual(try s.creditBalance(), 2)
        let per = try s.creditsByPlace()
        XCTAssertEqual(per.map(\.fenceKey), ["place:a", "place:b"])
        XCTAssertEqual(per.map(\.count), [8, 4])
        XCTAssertEqual(try s.lastCreditTimes(), ["place:a": 7, "place:b": 11])
    }

    func testSchemaRefusesNegativeBalanceAndLedgerEdits() throws {
        let path = makeTempStorePath()
        let s = try Store(path: path)
        try s.addCredit(grant("a"))
        // Go around the API: the database itself refuses.
        XCTAssertThrowsError(
            try s.executeRaw("INSERT INTO credit_ledger (request_id, kind, amount, t_ns) VALUES ('x', 'redeem', -5, 0)")
        )
        XCTAssertThrowsError(try s.executeRaw("DELETE FROM credit_ledger"))
        XCTAssertThrowsError(try s.executeRaw("UPDATE credit_ledger SET amount = 100"))
        XCTAssertEqual(try s.creditBalance(), 1)
        XCTAssertEqual(try s.ledgerRequestIds(), ["a"])
    }

    func testConcurrentRedeemsFromTwoClientsSpendOnce() async throws {
        let path = makeTempStorePath()
        // Two separate connections pools on one file, as two processes would have.
        let a = try Store(path: path), b = try Store(path: path)
        for round in 0..<20 {
            for i in 0..<15 { try a.addCredit(grant("earn-\(round)-\(i)")) }  // balance 15 (+ leftovers)
            let before = try a.creditBalance()
            async let ra = Task.detached { try a.redeem(requestId: "redeem-\(round)-a", amount: 10, t: 0) }.value
            async let rb = Task.detached { try b.redeem(requestId: "redeem-\(round)-b", amount: 10, t: 0) }.value
            let results = try await [ra, rb]
            let redeemed = results.filter { if case .redeemed = $0 { return true } else { return false } }.count
            // With 15..24 credits exactly one of two 10-credit redeems can succeed.
            XCTAssertEqual(redeemed, before >= 20 ? 2 : 1, "round \(round): \(results)")
            XCTAssertEqual(try a.creditBalance(), before - 10 * redeemed)
            // The same request id sent by both clients at once is applied once.
            try a.addCredit(grant("top-\(round)", amount: 10))
            let mid = try a.creditBalance()
            async let sa = Task.detached { try a.redeem(requestId: "same-\(round)", amount: 10, t: 0) }.value
            async let sb = Task.detached { try b.redeem(requestId: "same-\(round)", amount: 10, t: 0) }.value
            let same = try await [sa, sb]
            XCTAssertEqual(
                same.filter { if case .redeemed = $0 { return true } else { return false } }.count, 1, "\(same)")
            XCTAssertEqual(
                same.filter { if case .alreadyApplied = $0 { return true } else { return false } }.count, 1, "\(same)")
            XCTAssertEqual(try b.creditBalance(), mid - 10)
        }
        XCTAssertGreaterThanOrEqual(try a.creditBalance(), 0)
        XCTAssertEqual(try a.integrityCheck(), "ok")
    }

    func testVisitsAndQuestsPersistAndSeedTheCore() throws {
        let path = makeTempStorePath()
        let s = try Store(path: path)
        let fence = Fence(Geofence(name: "home", lat: 52.52, lon: 13.4, radius: 30))
        for (kind, t) in [(GeofenceMonitor.Kind.enter, 10), (.dwell, 610), (.exit, 700)] {
            try s.recordVisit(
                GeofenceMonitor.Event(kind: kind, fence: fence, t: Nanoseconds(t), enteredAt: 10, distance: 1))
        }
        // Replayed:
        try s.recordVisit(GeofenceMonitor.Event(kind: .enter, fence: fence, t: 10, enteredAt: 10, distance: 1))
        XCTAssertEqual(
            try s.recentVisits(limit: 5).map { [$0.enteredAt, $0.dwelledAt, $0.exitedAt] }, [[10, 610, 700]])

        var q = QuestGrid()
        _ = q.update(Fix(mode: 3, time: 5_000_000_000, lat: 52.52, lon: 13.4, eph: 5))
        guard case .success(let c) = q.complete() else { return XCTFail("no completion") }
        XCTAssertTrue(try s.recordQuest(c, requestId: "q1"))
        XCTAssertFalse(try s.recordQuest(c, requestId: "q1"))
        // A restarted daemon seeds the grid from the store: the cell is still cooling.
        let reopened = try Store(path: path)
        var q2 = QuestGrid(cells: try reopened.questCells(cellSize: 200))
        _ = q2.update(Fix(mode: 3, time: 6_000_000_000, lat: 52.52, lon: 13.4, eph: 5))
        XCTAssertEqual(q2.complete(), .failure(.coolingDown(until: c.cooldownUntil)))
        XCTAssertEqual(try reopened.questCells(cellSize: 100), [:])
        XCTAssertEqual(try reopened.totalXP(), 100)
    }
}
