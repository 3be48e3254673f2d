// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform
import TiltProtocol

/// tiltd's persistent state in one SQLite file (WAL): finished game rounds, place visits, the
/// credits ledger and quest cells.
///
/// Durability: every public write is one IMMEDIATE transaction (`SQLiteQueue.write`), so a
/// `kill -9` leaves each write either wholly committed or absent; `synchronous = FULL` makes a
/// commit survive power loss too, not only a process crash. Writes that come from an outside request
/// carry a request id stored under a UNIQUE constraint, so a repeated request is answered, not
/// re-applied. The credit balance lives in a one-row table kept by a trigger with
/// `CHECK (balance >= 0)`: even a buggy caller cannot drive it negative, and the ledger is
/// append-only (triggers reject UPDATE and DELETE).
public final class Store: Sendable {
    /// Errors with a message fit for a reply.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// A request id already used for a different kind of operation.
        case requestIdReused(String)
        case invalidAmount(Int)
        /// What went wrong, for the log and `status`.
        public var description: String {
            switch self {
            case .requestIdReused(let id): "request id \"\(id)\" was already used for another operation"
            case .invalidAmount(let n): "amount must be positive, got \(n)"
            }
        }
    }

    /// The database file.
    public let path: String
    let pool: SQLiteQueue

    /// Opens (creating it and its directory if needed) and migrates the store at `path`.
    public init(path: String) throws {
        self.path = path
        let dir = PathName.directory(of: path)
        if !dir.isEmpty { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        // Another process (a test, or a second tiltd refusing to start) may hold the write lock
        // for a moment: wait up to 10 s instead of failing at once.
        pool = try SQLiteQueue(path: path, busyTimeoutMs: 10_000)
        try pool.migrate(Self.migrations)
    }

    /// The schema, one step per release that changed it; never edit an applied step.
    static let migrations: [(id: String, sql: String)] = [
        (
            "v1",
            """
            CREATE TABLE rounds (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                started_ns INTEGER NOT NULL,
                ended_ns INTEGER NOT NULL,
                score INTEGER NOT NULL,
                deck TEXT
            );
            CREATE TABLE round_prompts (
                round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
                idx INTEGER NOT NULL,
                text TEXT NOT NULL,
                decision TEXT NOT NULL CHECK (decision IN ('correct', 'skip', 'none')),
                decided_ns INTEGER,
                PRIMARY KEY (round_id, idx)
            );
            CREATE TABLE visits (
                fence_key TEXT NOT NULL,
                name TEXT NOT NULL,
                entered_ns INTEGER NOT NULL,
                dwelled_ns INTEGER,
                exited_ns INTEGER,
                PRIMARY KEY (fence_key, entered_ns)
            );
            CREATE TABLE credit_ledger (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                request_id TEXT NOT NULL UNIQUE,
                kind TEXT NOT NULL CHECK (kind IN ('earn', 'redeem')),
                amount INTEGER NOT NULL CHECK (amount != 0),
                t_ns INTEGER NOT NULL,
                fence_key TEXT,
                name TEXT
            );
            CREATE INDEX credit_ledger_fence ON credit_ledger(fence_key);
            CREATE TABLE credit_balance (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                balance INTEGER NOT NULL CHECK (balance >= 0)
            );
            INSERT INTO credit_balance (id, balance) VALUES (1, 0);
            CREATE TRIGGER credit_ledger_balance AFTER INSERT ON credit_ledger BEGIN
                UPDATE credit_balance SET balance = balance + NEW.amount WHERE id = 1;
            END;
            CREATE TRIGGER credit_ledger_no_update BEFORE UPDATE ON credit_ledger BEGIN
                SELECT RAISE(ABORT, 'the credit ledger is append-only');
            END;
            CREATE TRIGGER credit_ledger_no_delete BEFORE DELETE ON credit_ledger BEGIN
                SELECT RAISE(ABORT, 'the credit ledger is append-only');
            END;
            CREATE TABLE quest_cells (
                cell_size_m REAL NOT NULL,
                cell_id INTEGER NOT NULL,
                visits INTEGER NOT NULL,
                xp INTEGER NOT NULL,
                cooldown_until_ns INTEGER,
                last_ns INTEGER,
                PRIMARY KEY (cell_size_m, cell_id)
            );
            CREATE TABLE quest_completions (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                request_id TEXT UNIQUE,
                cell_size_m REAL NOT NULL,
                cell_id INTEGER NOT NULL,
                t_ns INTEGER NOT NULL,
                xp INTEGER NOT NULL
            );
            """
        ),
        // The game's own round id (unique across restarts) and its full `result` object, so
        // `history` returns exactly what the `round_ended` event said.
        (
            "v2-round-results",
            """
            ALTER TABLE rounds ADD COLUMN game_round INTEGER;
            ALTER TABLE rounds ADD COLUMN result_json TEXT;
            """
        ),
    ]

    // MARK: Rounds

    /// One prompt of a finished round.
    public struct PromptRecord: Sendable, Equatable {
        /// The prompt shown.
        public var text: String
        /// "correct", "skip" or "none" (shown but undecided when the round ended).
        public var decision: String
        /// When it was answered (sample time), nil if unanswered.
        public var decidedAt: Nanoseconds?
        /// One prompt's outcome.
        public init(text: String, decision: String, decidedAt: Nanoseconds?) {
            self.text = text; self.decision = decision; self.decidedAt = decidedAt
        }
    }

    /// A finished round, as `history` returns it.
    public struct RoundRecord: Sendable, Equatable {
        /// Assigned by the store.
        public var id: Int64?
        /// When the round started (sample time, ns).
        public var startedAt: Nanoseconds
        /// When it ended (sample time, ns).
        public var endedAt: Nanoseconds
        /// Correct answers.
        public var score: Int
        /// The deck's name.
        public var deck: String?
        /// Every prompt shown, in order.
        public var prompts: [PromptRecord]
        /// The game's round id.
        public var gameRound: Int?
        /// The game's `result` object as JSON text.
        public var resultJSON: String?
        /// A round to save (`id` nil) or one read back.
        public init(
            id: Int64? = nil, startedAt: Nanoseconds, endedAt: Nanoseconds, score: Int, deck: String?,
            prompts: [PromptRecord], gameRound: Int? = nil, resultJSON: String? = nil
        ) {
            self.id = id; self.startedAt = startedAt; self.endedAt = endedAt; self.score = score
            self.deck = deck; self.prompts = prompts; self.gameRound = gameRound; self.resultJSON = resultJSON
        }
    }

    /// Saves a finished round with its prompts in one transaction; returns its id.
    @discardableResult
    public func saveRound(_ r: RoundRecord) throws -> Int64 {
        try pool.write { db in
            try db.execute(
                sql:
                    "INSERT INTO rounds (started_ns, ended_ns, score, deck, game_round, result_json) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [r.startedAt, r.endedAt, r.score, r.deck, r.gameRound, r.resultJSON])
            let id = db.lastInsertedRowID
            for (i, p) in r.prompts.enumerated() {
                try db.execute(
                    sql: "INSERT INTO round_prompts (round_id, idx, text, decision, decided_ns) VALUES (?, ?, ?, ?, ?)",
                    arguments: [id, i, p.text, p.decision, p.decidedAt])
            }
            return id
        }
    }

    /// The last `limit` rounds, newest first.
    public func recentRounds(limit: Int) throws -> [RoundRecord] {
        try pool.read { db in
            let rows = try SQLiteRow.fetchAll(
                db,
                sql:
                    "SELECT id, started_ns, ended_ns, score, deck, game_round, result_json FROM rounds ORDER BY id DESC LIMIT ?",
                arguments: [max(0, limit)])
            return try rows.map { row in
                let id: Int64 = row["id"]
                let prompts = try SQLiteRow.fetchAll(
                    db, sql: "SELECT text, decision, decided_ns FROM round_prompts WHERE round_id = ? ORDER BY idx",
                    arguments: [id]
                ).map {
                    PromptRecord(text: $0["text"], decision: $0["decision"], decidedAt: $0["decided_ns"])
                }
                return RoundRecord(
                    id: id, startedAt: row["started_ns"], endedAt: row["ended_ns"], score: row["score"],
                    deck: row["deck"], prompts: prompts, gameRound: row["game_round"], resultJSON: row["result_json"])
            }
        }
    }

    /// The highest game round id stored, so the game's ids stay unique across restarts.
    public func lastGameRound() throws -> Int? {
        try pool.read { try Int.fetchOne($0, sql: "SELECT MAX(game_round) FROM rounds") }
    }

    // MARK: Visits

    /// One visit to a fence.
    public struct VisitRecord: Sendable, Equatable {
        /// The fence's key ("place:…" or "geofence:…").
        public var fenceKey: String
        /// The fence's name.
        public var name: String
        /// When the wearer entered (fix time, ns).
        public var enteredAt: Nanoseconds
        /// When the dwell time was reached, if it was.
        public var dwelledAt: Nanoseconds?
        /// When the wearer left, if they did.
        public var exitedAt: Nanoseconds?
    }

    /// Records a geofence event; the visit is keyed by (fence, enter time), so replaying the same
    /// events changes nothing.
    public func recordVisit(_ e: GeofenceMonitor.Event) throws {
        try pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO visits (fence_key, name, entered_ns) VALUES (?, ?, ?)",
                arguments: [e.fence.key, e.fence.name, e.enteredAt])
            switch e.kind {
            case .enter: break
            case .dwell:
                try db.execute(
                    sql: "UPDATE visits SET dwelled_ns = ? WHERE fence_key = ? AND entered_ns = ?",
                    arguments: [e.t, e.fence.key, e.enteredAt])
            case .exit:
                try db.execute(
                    sql: "UPDATE visits SET exited_ns = ? WHERE fence_key = ? AND entered_ns = ?",
                    arguments: [e.t, e.fence.key, e.enteredAt])
            }
        }
    }

    /// The last `limit` visits, newest first.
    public func recentVisits(limit: Int) throws -> [VisitRecord] {
        try pool.read { db in
            try SQLiteRow.fetchAll(
                db, sql: "SELECT * FROM visits ORDER BY entered_ns DESC, fence_key LIMIT ?", arguments: [max(0, limit)]
            ).map {
                VisitRecord(
                    fenceKey: $0["fence_key"], name: $0["name"], enteredAt: $0["entered_ns"],
                    dwelledAt: $0["dwelled_ns"], exitedAt: $0["exited_ns"])
            }
        }
    }

    // MARK: Health

    /// Runs SQL in a write transaction, bypassing the API: for tests that check the schema's
    /// own guards.
    func executeRaw(_ sql: String) throws {
        try pool.write { try $0.execute(sql: sql) }
    }

    /// `PRAGMA integrity_check`'s answer ("ok" when healthy).
    public func integrityCheck() throws -> String {
        try pool.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }

    /// The journal mode in use ("wal").
    public func journalMode() throws -> String {
        try pool.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") ?? "" }
    }
}
