// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import TiltCore
import XCTest

@testable import TiltService

/// What the store is handed or finds at open (issue 37): texts with a NUL, NULL and blob
/// columns, a database that is not WAL or is damaged, and state that cannot be read at start.
final class StoreHostileTextTests: XCTestCase {
    /// Two request ids that differ only after a NUL are two redeems, not one repeated: the
    /// text is bound with its length (it was cut at the NUL).
    func testRequestIdsWithANulAreKeptWhole() throws {
        let s = try Store(path: makeTempStorePath())
        for i in 0..<3 { try s.addCredit(grant("earn-\(i)")) }
        XCTAssertEqual(try s.redeem(requestId: "r\u{0}a", amount: 1, t: 0), .redeemed(balance: 2))
        XCTAssertEqual(try s.redeem(requestId: "r\u{0}b", amount: 1, t: 0), .redeemed(balance: 1))
        XCTAssertEqual(try s.redeem(requestId: "r\u{0}a", amount: 1, t: 0), .alreadyApplied(balance: 1))
    }

    /// Text read back keeps a NUL inside; an empty blob in a text column reads as "" (its
    /// pointer is NULL, which `String(cString:)` crashed on); NULL is `.null`.
    func testColumnsWithNulEmptyBlobsAndNullReadBack() throws {
        let path = makeTempStorePath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let db = try SQLiteDatabase(path: path, busyTimeoutMs: 1000)
        try db.execute(sql: "CREATE TABLE t (v TEXT)")
        try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: ["a\u{0}b"])
        try db.execute(sql: "INSERT INTO t (v) VALUES (X'')")
        try db.execute(sql: "INSERT INTO t (v) VALUES (NULL)")
        let rows = try db.rows(sql: "SELECT v FROM t ORDER BY rowid")
        XCTAssertEqual(rows.map { $0.values[0] }, [.text("a\u{0}b"), .text(""), .null])
    }

    /// A file that is not a database (or is damaged) is refused at open with what SQLite said,
    /// not taken for an empty store.
    func testADamagedFileIsRefusedAtOpen() throws {
        let path = makeTempStorePath()
        do {
            // Closed at the end of this block: the WAL is checkpointed into the file.
            let s = try Store(path: path)
            for i in 0..<300 { try s.addCredit(grant("c\(i)")) }
        }
        // Clobber every page after the first (the schema's), keeping the size.
        let h = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        let size = try h.seekToEnd()
        XCTAssertGreaterThan(size, 8192)
        try h.seek(toOffset: 4096)
        h.write(Data(repeating: 0xA5, count: Int(size - 4096)))
        try h.close()
        XCTAssertThrowsError(try Store(path: path)) { error in
            XCTAssertFalse("\(error)".isEmpty)
        }
    }

    /// State that exists but cannot be read at start is a failure the daemon refuses to start
    /// on (before: empty cooldowns and round ids, a credit earned twice); no file is none.
    func testSeedsOfAnUnreadableDatabaseSayWhy() throws {
        let missing = StoreWorker(path: makeTempStorePath(), logger: Logger(label: "t"))
        XCTAssertNil(missing.seeds(cellSize: 100).failure, "no file yet: nothing to lose")
        let path = makeTempStorePath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))
        let garbage = StoreWorker(path: path, logger: Logger(label: "t"))
        let failure = try XCTUnwrap(garbage.seeds(cellSize: 100).failure)
        XCTAssertTrue(failure.contains(path), failure)
    }
}
