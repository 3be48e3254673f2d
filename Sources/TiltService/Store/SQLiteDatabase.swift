// SPDX-License-Identifier: Apache-2.0
import CSQLite3
import Synchronization
import TiltCore

/// One connection to an SQLite file through the system's libsqlite3 (Debian's libsqlite3-dev):
/// statements with bound values, rows by column name, and the few GRDB-shaped calls the store
/// uses (`write`, `read`, `T.fetchOne`, `SQLiteRow.fetchAll`).
///
/// Why not GRDB, the well-kept package this replaced: it imports Foundation, which links ICU's
/// 30+ MB of data into the daemon (docs/hardware.md, "Footprint"). The store needs a handful of
/// synchronous statements on its own worker, which the C API gives directly.
///
/// Not `Sendable`: the connection is opened without SQLite's own mutex. `SQLiteQueue` holds it
/// in a `Mutex`, which lends it to one thread at a time, which is all SQLite asks.
final class SQLiteDatabase {
    private var handle: OpaquePointer?

    /// Opens (creating) the file; a locked database is waited for up to `busyTimeoutMs`.
    init(path: String, busyTimeoutMs: Int32) throws(SQLiteError) {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            handle = nil
            throw SQLiteError(code: rc, message: message, sql: nil)
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMs)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one statement with `arguments` bound to its `?` in order, or (without arguments)
    /// any number of statements separated by `;` (schema, pragmas).
    func execute(sql: String, arguments: [any SQLiteBindable] = []) throws(SQLiteError) {
        if arguments.isEmpty {
            var message: UnsafeMutablePointer<CChar>?
            let rc = sqlite3_exec(handle, sql, nil, nil, &message)
            guard rc == SQLITE_OK else {
                let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
                sqlite3_free(message)
                throw SQLiteError(code: rc, message: text, sql: sql)
            }
        } else {
            _ = try rows(sql: sql, arguments: arguments)
        }
    }

    /// Runs one statement and returns every row it yields.
    func rows(sql: String, arguments: [any SQLiteBindable] = []) throws(SQLiteError) -> [SQLiteRow] {
        var statement: OpaquePointer?
        var rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, sql) }
        defer { sqlite3_finalize(statement) }
        // SQLITE_TRANSIENT: SQLite copies the text before the temporary C string goes away.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (i, a) in arguments.enumerated() {
            let index = Int32(i + 1)
            switch a.sqliteValue {
            case .null: rc = sqlite3_bind_null(statement, index)
            case .integer(let v): rc = sqlite3_bind_int64(statement, index, v)
            case .real(let v): rc = sqlite3_bind_double(statement, index, v)
            case .text(let v):
                // With its length, not as a C string: a text with a NUL (a client's request_id)
                // was cut there, and two different ids could be stored as one.
                var text = v
                rc = text.withUTF8 { bytes in
                    // An empty text has no base address; bound as "" (a NULL pointer would be NULL).
                    guard let base = bytes.baseAddress else {
                        return sqlite3_bind_text(statement, index, "", 0, transient)
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text64(
                            statement, index, $0, sqlite3_uint64(bytes.count), transient, UInt8(SQLITE_UTF8))
                    }
                }
            }
            guard rc == SQLITE_OK else { throw error(rc, sql) }
        }
        let columns = sqlite3_column_count(statement)
        let names = (0..<columns).map { String(cString: sqlite3_column_name(statement, $0)) }
        var out: [SQLiteRow] = []
        while true {
            rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return out }
            guard rc == SQLITE_ROW else { throw error(rc, sql) }
            var values: [SQLiteValue] = []
            values.reserveCapacity(Int(columns))
            for c in 0..<columns {
                switch sqlite3_column_type(statement, c) {
                case SQLITE_INTEGER: values.append(.integer(sqlite3_column_int64(statement, c)))
                case SQLITE_FLOAT: values.append(.real(sqlite3_column_double(statement, c)))
                case SQLITE_NULL: values.append(.null)
                default:
                    // Text (or a blob) with its length: a NUL inside is kept, and a NULL pointer
                    // (an empty blob, out of memory) is an empty text, not a crash.
                    let text = sqlite3_column_text(statement, c)
                    let count = Int(sqlite3_column_bytes(statement, c))
                    values.append(
                        .text(
                            text.map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) }
                                ?? ""))
                }
            }
            out.append(SQLiteRow(names: names, values: values))
        }
    }

    /// The rowid of the last INSERT on this connection.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    private func error(_ rc: Int32, _ sql: String) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}

/// The store's connection behind a lock: every `write` is one IMMEDIATE transaction (the write
/// lock taken up front, so two writers never deadlock upgrading a read lock) and every `read`
/// one deferred transaction, so a read sees one consistent state.
final class SQLiteQueue: Sendable {
    private let database: Mutex<SQLiteDatabase>

    /// Opens `path` in WAL mode with `synchronous = FULL` and foreign keys on.
    init(path: String, busyTimeoutMs: Int32 = 10_000) throws(SQLiteError) {
        let db = try SQLiteDatabase(path: path, busyTimeoutMs: busyTimeoutMs)
        // journal_mode answers with the mode in force: SQLite keeps the old one when it cannot
        // switch (a read-only directory for the -wal file), and the store's commits assume WAL.
        let mode = try db.rows(sql: "PRAGMA journal_mode = WAL").first?.values.first
        guard mode == .text("wal") else {
            throw SQLiteError(
                code: SQLITE_ERROR, message: "journal_mode is \(mode.map { "\($0)" } ?? "unknown"), not wal",
                sql: "PRAGMA journal_mode = WAL")
        }
        try db.execute(sql: "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON")
        // A damaged file is found at open, not by the first write that needs the damaged page.
        let check = try db.rows(sql: "PRAGMA quick_check").compactMap { $0.values.first }
        guard check == [.text("ok")] else {
            throw SQLiteError(
                code: SQLITE_CORRUPT,
                message: "quick_check: " + check.prefix(5).map { "\($0)" }.joined(separator: "; "),
                sql: "PRAGMA quick_check")
        }
        database = Mutex(db)
    }

    /// Runs `body` in an IMMEDIATE transaction; rolls back when it throws.
    func write<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try transaction("BEGIN IMMEDIATE", body)
    }

    /// Runs `body` in a read transaction.
    func read<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try transaction("BEGIN DEFERRED", body)
    }

    private func transaction<T>(_ begin: String, _ body: (SQLiteDatabase) throws -> T) throws -> T {
        try database.withLock { db in
            try db.execute(sql: begin)
            do {
                let result = try body(db)
                try db.execute(sql: "COMMIT")
                return result
            } catch {
                try? db.execute(sql: "ROLLBACK")
                throw error
            }
        }
    }

    /// Applies the migrations not yet applied, in order, each in its own transaction. Applied
    /// ones are recorded in `grdb_migrations`, the table GRDB kept, so a file written by an
    /// earlier tiltd (which used GRDB) carries on where it was.
    func migrate(_ migrations: [(id: String, sql: String)]) throws {
        try write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        }
        let applied = Set(try read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") })
        for m in migrations where !applied.contains(m.id) {
            try write { db in
                try db.execute(sql: m.sql)
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [m.id])
            }
        }
    }
}

/// A failed SQLite call: the extended result code, SQLite's message and the statement.
struct SQLiteError: Error, CustomStringConvertible {
    var code: Int32
    var message: String
    var sql: String?
    var description: String {
        "SQLite error \(code): \(message)" + (sql.map { " - while executing `\($0)`" } ?? "")
    }
}

/// A value in or out of SQLite.
enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// A Swift value that binds to a `?`.
protocol SQLiteBindable { var sqliteValue: SQLiteValue { get } }
extension Int: SQLiteBindable { var sqliteValue: SQLiteValue { .integer(Int64(self)) } }
extension Int64: SQLiteBindable { var sqliteValue: SQLiteValue { .integer(self) } }
extension Double: SQLiteBindable { var sqliteValue: SQLiteValue { .real(self) } }
extension String: SQLiteBindable { var sqliteValue: SQLiteValue { .text(self) } }
extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
}

/// A Swift value a column converts to; Optional reads NULL as nil.
protocol SQLiteColumnValue { init?(sqlite: SQLiteValue) }

extension SQLiteColumnValue {
    /// The first column of the first row, nil when there is no row or it is NULL.
    static func fetchOne(_ db: SQLiteDatabase, sql: String, arguments: [any SQLiteBindable] = []) throws -> Self? {
        guard let v = try db.rows(sql: sql, arguments: arguments).first?.values.first else { return nil }
        return Self(sqlite: v)
    }

    /// The first column of every row (NULLs and other types left out).
    static func fetchAll(_ db: SQLiteDatabase, sql: String, arguments: [any SQLiteBindable] = []) throws -> [Self] {
        try db.rows(sql: sql, arguments: arguments).compactMap { $0.values.first.flatMap(Self.init(sqlite:)) }
    }
}

extension Int64: SQLiteColumnValue {
    init?(sqlite v: SQLiteValue) {
        switch v {
        case .integer(let i): self = i
        case .real(let d): self = Int64(d)
        default: return nil
        }
    }
}
extension Int: SQLiteColumnValue {
    init?(sqlite v: SQLiteValue) {
        guard let i = Int64(sqlite: v) else { return nil }
        self = Int(i)
    }
}
extension Bool: SQLiteColumnValue {
    init?(sqlite v: SQLiteValue) {
        guard let i = Int64(sqlite: v) else { return nil }
        self = i != 0
    }
}
extension Double: SQLiteColumnValue {
    init?(sqlite v: SQLiteValue) {
        switch v {
        case .integer(let i): self = Double(i)
        case .real(let d): self = d
        default: return nil
        }
    }
}
extension String: SQLiteColumnValue {
    init?(sqlite v: SQLiteValue) {
        guard case .text(let s) = v else { return nil }
        self = s
    }
}
extension Optional: SQLiteColumnValue where Wrapped: SQLiteColumnValue {
    init?(sqlite v: SQLiteValue) { self = v == .null ? .none : Wrapped(sqlite: v) }
}

/// One result row; values by column name.
struct SQLiteRow {
    let names: [String]
    let values: [SQLiteValue]

    /// Every row `sql` yields.
    static func fetchAll(_ db: SQLiteDatabase, sql: String, arguments: [any SQLiteBindable] = []) throws -> [SQLiteRow]
    {
        try db.rows(sql: sql, arguments: arguments)
    }

    /// The column `name` as `T`. A missing column or a value of another type is a mistake in the
    /// statement (the schema's types are fixed), so it stops here.
    subscript<T: SQLiteColumnValue>(_ name: String) -> T {
        guard let i = names.firstIndex(of: name) else { preconditionFailure("no column \(name) in \(names)") }
        guard let v = T(sqlite: values[i]) else { preconditionFailure("column \(name): \(values[i]) is not \(T.self)") }
        return v
    }
}
