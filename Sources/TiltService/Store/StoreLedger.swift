// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// The credit ledger and the quest completions: the parts of the store whose writes must be
/// exactly once (request ids) and whose history seeds the daemon at start.
extension Store {
    // MARK: Credits

    /// Result of adding an earned credit.
    public enum EarnOutcome: Sendable, Equatable {
        case added(balance: Int)
        /// This request id was already in the ledger: nothing changed.
        case alreadyApplied(balance: Int)
    }

    /// Result of a redeem request.
    public enum RedeemOutcome: Sendable, Equatable {
        case redeemed(balance: Int)
        /// This request id was already redeemed: nothing changed (the reply repeats success).
        case alreadyApplied(balance: Int)
        /// Not enough credits: nothing changed.
        case insufficient(balance: Int, needed: Int)
    }

    static func balance(_ db: SQLiteDatabase) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT balance FROM credit_balance WHERE id = 1") ?? 0
    }

    /// Adds an earned credit, once per request id.
    @discardableResult
    public func addCredit(_ g: CreditPolicy.Grant) throws -> EarnOutcome {
        guard g.amount > 0 else { throw Failure.invalidAmount(g.amount) }
        return try pool.write { db in
            if let kind = try String.fetchOne(
                db, sql: "SELECT kind FROM credit_ledger WHERE request_id = ?", arguments: [g.requestId])
            {
                guard kind == "earn" else { throw Failure.requestIdReused(g.requestId) }
                return .alreadyApplied(balance: try Self.balance(db))
            }
            try db.execute(
                sql:
                    "INSERT INTO credit_ledger (request_id, kind, amount, t_ns, fence_key, name) VALUES (?, 'earn', ?, ?, ?, ?)",
                arguments: [g.requestId, g.amount, g.t, g.fenceKey, g.name])
            return .added(balance: try Self.balance(db))
        }
    }

    /// Spends `amount` credits atomically: all or nothing, never below zero, once per request id
    /// (concurrent requests are serialised by SQLite's write lock).
    public func redeem(requestId: String, amount: Int = 10, t: Nanoseconds) throws -> RedeemOutcome {
        guard amount > 0 else { throw Failure.invalidAmount(amount) }
        return try pool.write { db in
            if let kind = try String.fetchOne(
                db, sql: "SELECT kind FROM credit_ledger WHERE request_id = ?", arguments: [requestId])
            {
                guard kind == "redeem" else { throw Failure.requestIdReused(requestId) }
                return .alreadyApplied(balance: try Self.balance(db))
            }
            let balance = try Self.balance(db)
            guard balance >= amount else { return .insufficient(balance: balance, needed: amount) }
            try db.execute(
                sql: "INSERT INTO credit_ledger (request_id, kind, amount, t_ns) VALUES (?, 'redeem', ?, ?)",
                arguments: [requestId, -amount, t])
            return .redeemed(balance: try Self.balance(db))
        }
    }

    /// The current balance.
    public func creditBalance() throws -> Int { try pool.read { try Self.balance($0) } }

    /// Credits earned per place, most first (for the `credits` command).
    public func creditsByPlace() throws -> [(fenceKey: String, name: String, count: Int)] {
        try pool.read { db in
            try SQLiteRow.fetchAll(
                db,
                sql: """
                    SELECT fence_key, MAX(name) AS name, SUM(amount) AS n FROM credit_ledger
                    WHERE kind = 'earn' GROUP BY fence_key ORDER BY n DESC, fence_key
                    """
            ).map { (fenceKey: $0["fence_key"], name: $0["name"], count: $0["n"]) }
        }
    }

    /// The time of the latest credit per fence, to seed `CreditPolicy` at start.
    public func lastCreditTimes() throws -> [String: Nanoseconds] {
        try pool.read { db in
            var out: [String: Nanoseconds] = [:]
            for row in try SQLiteRow.fetchAll(
                db, sql: "SELECT fence_key, MAX(t_ns) AS t FROM credit_ledger WHERE kind = 'earn' GROUP BY fence_key")
            {
                out[row["fence_key"]] = row["t"]
            }
            return out
        }
    }

    /// Every request id in the ledger, in order (for audits and tests).
    public func ledgerRequestIds() throws -> [String] {
        try pool.read { try String.fetchAll($0, sql: "SELECT request_id FROM credit_ledger ORDER BY id") }
    }

    // MARK: Quests

    /// Saved quest state for one grid size, to seed `QuestGrid`.
    public func questCells(cellSize: Double) throws -> [Int64: QuestGrid.CellState] {
        try pool.read { db in
            var out: [Int64: QuestGrid.CellState] = [:]
            for row in try SQLiteRow.fetchAll(
                db, sql: "SELECT cell_id, visits, xp, cooldown_until_ns FROM quest_cells WHERE cell_size_m = ?",
                arguments: [cellSize])
            {
                out[row["cell_id"]] = QuestGrid.CellState(
                    visits: row["visits"], cooldownUntil: row["cooldown_until_ns"], xp: row["xp"])
            }
            return out
        }
    }

    /// Records a completed quest (once per request id when one is given). Returns false when the
    /// request id was already recorded.
    @discardableResult
    public func recordQuest(_ c: QuestGrid.Completion, requestId: String? = nil) throws -> Bool {
        try pool.write { db in
            if let requestId,
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM quest_completions WHERE request_id = ?", arguments: [requestId]) != nil
            {
                return false
            }
            try db.execute(
                sql:
                    "INSERT INTO quest_completions (request_id, cell_size_m, cell_id, t_ns, xp) VALUES (?, ?, ?, ?, ?)",
                arguments: [requestId, c.cellSize, c.cell.id, c.t, c.xp])
            try db.execute(
                sql: """
                    INSERT INTO quest_cells (cell_size_m, cell_id, visits, xp, cooldown_until_ns, last_ns) VALUES (?, ?, 1, ?, ?, ?)
                    ON CONFLICT (cell_size_m, cell_id) DO UPDATE SET
                        visits = visits + 1, xp = xp + excluded.xp,
                        cooldown_until_ns = excluded.cooldown_until_ns, last_ns = excluded.last_ns
                    """, arguments: [c.cellSize, c.cell.id, c.xp, c.cooldownUntil, c.t])
            return true
        }
    }

    /// Experience from all quests.
    public func totalXP() throws -> Int {
        try pool.read { try Int.fetchOne($0, sql: "SELECT COALESCE(SUM(xp), 0) FROM quest_completions") ?? 0 }
    }
}
