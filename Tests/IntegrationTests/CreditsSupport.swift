// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

// Helpers for the daemon-level credit, crash and fault tests: a config written into a test's
// directory, the `credits` reply decoded, and the SQLite file checked with the sqlite3 CLI
// (Debian's sqlite3, installed by scripts/install-deps --test) — the test looks at the file itself,
// not through the daemon's own store code.

/// Writes `DIR/tiltd.toml` with the socket and store in `dir` (or `storePath`) and `extra` appended.
func writeDaemonConfig(in dir: String, storePath: String? = nil, _ extra: String = "") throws -> String {
    let path = "\(dir)/tiltd.toml"
    try """
    [socket]
    path = "\(dir)/tiltd.sock"
    [store]
    path = "\(storePath ?? "\(dir)/tiltd.sqlite")"
    [log]
    level = "notice"
    \(extra)
    """.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// The `credits` reply: the balance and credits earned per fence key.
struct CreditsReply: Equatable {
    var balance: Int
    var perFence: [String: Int]

    init(_ reply: JSONValue) throws {
        guard reply["ok"] == .bool(true), let b = reply["balance"]?.intValue else {
            throw LineClient.Failure(description: "credits failed: \(reply)")
        }
        balance = Int(b)
        perFence = [:]
        for p in reply["places"]?.arrayValue ?? [] {
            if let k = p["fence"]?.stringValue, let n = p["count"]?.intValue { perFence[k] = Int(n) }
        }
    }
}

extension LineClient {
    /// Sends `credits` and decodes the reply.
    func credits(id: Int, timeout: Double = 10) throws -> CreditsReply {
        try CreditsReply(request(#"{"cmd":"credits","id":\#(id)}"#, id: id, timeout: timeout))
    }
}

/// Runs `sqlite3 DB SQL` and returns its output lines. Fails the caller on a non-zero exit.
func sqlite(_ db: String, _ sql: String) throws -> [String] {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    p.arguments = ["-batch", db, sql]
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    let errors = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else {
        throw LineClient.Failure(
            description:
                "sqlite3 \(db) \"\(sql)\" exited \(p.terminationStatus): \(String(decoding: errors, as: UTF8.self))")
    }
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// The sqlite3 CLI is needed by these tests: missing → skip locally, fail in CI.
func requireSQLiteCLI() throws {
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") { return }
    if ProcessInfo.processInfo.environment["CI"] == "true" {
        throw LineClient.Failure(description: "/usr/bin/sqlite3 missing (apt sqlite3)")
    }
    throw XCTSkip("/usr/bin/sqlite3 is not installed")
}

/// What the ledger file says, read with the sqlite3 CLI.
struct LedgerAudit {
    var integrity: String
    var balance: Int
    var ledgerSum: Int
    var requestIds: [String]
    var earnedIds: Set<String>
    var redeemCount: Int

    init(db: String) throws {
        integrity = try sqlite(db, "PRAGMA integrity_check;").joined(separator: "; ")
        balance = Int(try sqlite(db, "SELECT balance FROM credit_balance WHERE id = 1;").first ?? "") ?? -1
        ledgerSum = Int(try sqlite(db, "SELECT COALESCE(SUM(amount), 0) FROM credit_ledger;").first ?? "") ?? -1
        requestIds = try sqlite(db, "SELECT request_id FROM credit_ledger ORDER BY id;")
        earnedIds = Set(try sqlite(db, "SELECT request_id FROM credit_ledger WHERE kind = 'earn';"))
        redeemCount = Int(try sqlite(db, "SELECT COUNT(*) FROM credit_ledger WHERE kind = 'redeem';").first ?? "") ?? -1
    }

    /// Integrity ok, balance = sum of the ledger and never negative, request ids unique.
    func assertConsistent(_ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(integrity, "ok", "PRAGMA integrity_check (\(context))", file: file, line: line)
        XCTAssertEqual(balance, ledgerSum, "balance row = sum of the ledger (\(context))", file: file, line: line)
        XCTAssertGreaterThanOrEqual(balance, 0, context, file: file, line: line)
        XCTAssertEqual(
            Set(requestIds).count, requestIds.count, "duplicate request ids (\(context)): \(requestIds)", file: file,
            line: line)
    }
}

/// A duration in seconds, for messages and rates.
func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
}
