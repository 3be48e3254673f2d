// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// A TOML syntax error and the 1-based line it is on.
struct TOMLSyntaxError: Error, Equatable {
    /// The 1-based line where the problem was found.
    var line: Int
    /// What is wrong, in plain words, starting with `syntax error: `.
    var message: String
}

/// A TOML 1.0 parser that needs only the standard library (no Foundation, so no ICU).
///
/// Values come out as `JSONValue`s: integers as `.int`, floats (`inf` and `nan` too) as `.double`,
/// and dates, times and date-times as `.string`s of the text as written (after checking it), since
/// the configuration only ever passes them on. `TOMLValueReader` reads the pieces; this type reads
/// the statements (`key = value`, `[table]`, `[[array of tables]]`) and applies TOML's rules on
/// which tables may be defined or extended where.
enum TOMLParser {
    /// The message for a table header whose `[` or `[[` is not followed by a key.
    static let badHeader = "syntax error: a table header needs a name after '[' or '[[', like [imu] or [[geofence]]"

    /// Parses a TOML document. `lines` maps each key path to the 1-based line that set it.
    ///
    /// Paths join keys with dots, unquoted (`["x y".z]` gives `x y.z`); the n-th `[[geofence]]`
    /// table is `geofence[n]` (so its keys are `geofence[0].lat`, …) and `geofence` alone is the
    /// line of the first. A dotted key `a.b.c = 1` also gives a line to `a` and `a.b` unless they
    /// already have one: the first line wins.
    static func parse(_ text: String) throws(TOMLSyntaxError) -> (root: JSONObject, lines: [String: Int]) {
        var r = TOMLValueReader(text)
        let root = TOMLTableBuilder()
        var lines: [String: Int] = [:]
        var table = root, path = ""
        // Each header starts a new section. Tables that dotted keys create or add to are tagged with
        // their section: only that section's dotted keys may add to them later.
        var section = 0
        while true {
            r.skipSpaces()
            guard let c = r.peek() else { break }
            if c == 0x0A {
                r.pos += 1
                r.line += 1
            } else if c == UInt8(ascii: "#") {
                try r.finishLine(after: "a comment")
            } else if c == UInt8(ascii: "[") {
                section += 1
                (table, path) = try readHeader(&r, root: root, lines: &lines)
                try r.finishLine(after: "the table header")
            } else if TOMLValueReader.startsKey(c) {
                let line = r.line
                let key = try r.readKey()
                guard r.peek() == UInt8(ascii: "=") else { throw r.error("expected '=' after the key") }
                r.pos += 1
                r.skipSpaces()
                if r.peek() == nil || r.peek() == 0x0A || r.peek() == UInt8(ascii: "#") {
                    throw r.error("expected a value after '='")
                }
                let value = try r.readValue()
                try table.insert(key, value, section: section, line: line)
                var p = path
                for (n, part) in key.enumerated() {
                    p = path.isEmpty && n == 0 ? part : p + "." + part
                    if lines[p] == nil { lines[p] = line }
                }
                try r.finishLine(after: "the value")
            } else {
                throw r.error("expected a key, a [table] header or a comment, found \(r.found())")
            }
        }
        return (root.json(), lines)
    }

    /// Reads a `[table]` or `[[array of tables]]` header (at its `[`), then finds or makes its table.
    /// Returns the table and its path for `lines`.
    private static func readHeader(
        _ r: inout TOMLValueReader, root: TOMLTableBuilder, lines: inout [String: Int]
    )
        throws(TOMLSyntaxError) -> (TOMLTableBuilder, String)
    {
        let isArray = r.peek(1) == UInt8(ascii: "[")
        r.pos += isArray ? 2 : 1
        r.skipSpaces()
        // The message is relied on by tests: `[[[imu]`, a lone `[` and `[=x]` once crashed toml++.
        guard let c = r.peek(), TOMLValueReader.startsKey(c) else {
            throw TOMLSyntaxError(line: r.line, message: badHeader)
        }
        let key = try r.readKey()
        let name = isArray ? "[[\(key.joined(separator: "."))]]" : "[\(key.joined(separator: "."))]"
        guard r.peek() == UInt8(ascii: "]"), !isArray || r.peek(1) == UInt8(ascii: "]") else {
            throw r.error("expected '\(isArray ? "]]" : "]")' to close the table header, found \(r.found())")
        }
        r.pos += isArray ? 2 : 1
        var table = root, path = ""
        for (n, part) in key.enumerated() {
            path += (n == 0 ? "" : ".") + part
            let last = n == key.count - 1
            switch table.member(part) {
            case nil:
                let t = TOMLTableBuilder()
                t.fromHeader = last
                if last && isArray {
                    table.set(part, .tables([t]))
                    lines[path] = lines[path] ?? r.line
                    path += "[0]"
                } else {
                    table.set(part, .table(t))
                }
                table = t
            case .table(let t):
                if last {
                    if isArray {
                        throw r.error("\(name) cannot add to '\(path)', which is a table, not an array of tables")
                    }
                    if t.fromHeader { throw r.error("table \(name) is defined twice") }
                    if t.dottedSection != nil { throw r.error("table \(name) was already defined with dotted keys") }
                    t.fromHeader = true
                }
                table = t
            case .tables(let ts):
                // A header below `[[a]]` continues the latest `a` table.
                guard last else {
                    path += "[\(ts.count - 1)]"
                    table = ts[ts.count - 1]
                    continue
                }
                guard isArray else { throw r.error("\(name) is already an array of tables, written [\(name)]") }
                let t = TOMLTableBuilder()
                t.fromHeader = true
                table.set(part, .tables(ts + [t]))
                path += "[\(ts.count)]"
                table = t
            case .value:
                throw r.error("'\(path)' is already a value, so \(name) cannot define a table there")
            }
        }
        if lines[path] == nil { lines[path] = r.line }
        return (table, path)
    }
}

/// A table while a document is being read: its members in order, and what TOML's rules need to
/// know about how it was made. Inline tables and arrays are finished values (`.value`) as soon as
/// they are read, which is what makes them impossible to extend later.
final class TOMLTableBuilder {
    /// What a key of a table holds.
    enum Member {
        /// A finished value (including inline tables and arrays, which cannot be extended).
        case value(JSONValue)
        /// A table that headers or dotted keys may still add to.
        case table(TOMLTableBuilder)
        /// The tables of `[[name]]` headers, in order.
        case tables([TOMLTableBuilder])
    }

    private var order: [String] = []
    private var members: [String: Member] = [:]
    /// Defined by its own `[header]` (or as an element of an array of tables): no other header and
    /// no dotted key may define it again.
    var fromHeader = false
    /// The section whose dotted keys created or added to this table: no other section's dotted keys
    /// and no header may.
    var dottedSection: Int?

    /// What `key` holds, if anything.
    func member(_ key: String) -> Member? { members[key] }

    /// Sets what `key` holds; a new key goes last.
    func set(_ key: String, _ member: Member) {
        if members.updateValue(member, forKey: key) == nil { order.append(key) }
    }

    /// Sets `key` (dotted: `a.b.c`) to `value`, making the tables between as dotted keys do.
    /// `section` is the current header's section (any constant inside an inline table).
    func insert(_ key: [String], _ value: JSONValue, section: Int, line: Int) throws(TOMLSyntaxError) {
        func fail(_ message: String) -> TOMLSyntaxError {
            TOMLSyntaxError(line: line, message: "syntax error: " + message)
        }
        let full = key.joined(separator: ".")
        var table = self
        for n in 0..<(key.count - 1) {
            let name = key[...n].joined(separator: ".")
            switch table.member(key[n]) {
            case nil:
                let t = TOMLTableBuilder()
                t.dottedSection = section
                table.set(key[n], .table(t))
                table = t
            case .table(let t):
                guard !t.fromHeader, t.dottedSection == nil || t.dottedSection == section else {
                    throw fail("the dotted key '\(full)' cannot add to table '\(name)', which is defined elsewhere")
                }
                t.dottedSection = section
                table = t
            case .tables:
                throw fail("the dotted key '\(full)' cannot add to '\(name)', which is an array of tables")
            case .value:
                throw fail("'\(name)' is already a value, so the dotted key '\(full)' cannot add to it")
            }
        }
        switch table.member(key[key.count - 1]) {
        case nil: table.set(key[key.count - 1], .value(value))
        case .value: throw fail("duplicate key '\(full)'")
        case .table, .tables: throw fail("duplicate key '\(full)' (already a table)")
        }
    }

    /// The finished table.
    func json() -> JSONObject {
        var o = JSONObject()
        for key in order {
            switch members[key] {
            case .value(let v): o[key] = v
            case .table(let t): o[key] = .object(t.json())
            case .tables(let ts): o[key] = .array(ts.map { .object($0.json()) })
            case nil: break
            }
        }
        return o
    }
}
