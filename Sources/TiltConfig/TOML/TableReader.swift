// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// Reads one TOML table with checks: each getter validates type and range and remembers the
/// key, and `finish()` rejects any key that no getter asked for (a typo is an error, not a no-op).
struct TableReader {
    let doc: TOMLDocument
    /// Dotted path of this table ("" for the root).
    let path: String
    let table: JSONObject
    private var seen: Set<String> = []

    init(doc: TOMLDocument, path: String, table: JSONObject) {
        self.doc = doc; self.path = path; self.table = table
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func error(_ key: String, _ message: String) -> ConfigError {
        let p = keyPath(key)
        return ConfigError(file: doc.file, line: doc.line(of: p), key: p, message: message)
    }

    private mutating func raw(_ key: String) -> JSONValue? {
        seen.insert(key)
        return table[key]
    }

    mutating func has(_ key: String) -> Bool { table[key] != nil }

    mutating func string(_ key: String, default d: String, allowed: [String]? = nil) throws(ConfigError) -> String {
        guard let v = raw(key) else { return d }
        guard let s = v.stringValue else { throw error(key, "expected a string, got \(v.typeName)") }
        if let allowed, !allowed.contains(s) {
            throw error(key, "must be one of \(allowed.map { "\"\($0)\"" }.joined(separator: ", ")), got \"\(s)\"")
        }
        return s
    }

    mutating func optionalString(_ key: String) throws(ConfigError) -> String? {
        guard let v = raw(key) else { return nil }
        guard let s = v.stringValue else { throw error(key, "expected a string, got \(v.typeName)") }
        return s
    }

    mutating func bool(_ key: String, default d: Bool) throws(ConfigError) -> Bool {
        guard let v = raw(key) else { return d }
        guard let b = v.boolValue else { throw error(key, "expected true or false, got \(v.typeName)") }
        return b
    }

    mutating func double(_ key: String, default d: Double, in range: ClosedRange<Double>) throws(ConfigError) -> Double
    {
        try optionalDouble(key, in: range) ?? d
    }

    mutating func optionalDouble(_ key: String, in range: ClosedRange<Double>) throws(ConfigError) -> Double? {
        guard let v = raw(key) else { return nil }
        guard let x = v.doubleValue else { throw error(key, "expected a number, got \(v.typeName)") }
        guard range.contains(x) else {
            throw error(key, "\(fmt(x)) is out of range \(fmt(range.lowerBound))…\(fmt(range.upperBound))")
        }
        return x
    }

    mutating func int(_ key: String, default d: Int, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let v = raw(key) else { return d }
        guard case .int(let i) = v else {
            throw error(key, "expected an integer, got \(v.typeName == "number" ? "a fraction" : v.typeName)")
        }
        guard range.contains(Int(i)) else {
            throw error(key, "\(i) is out of range \(range.lowerBound)…\(range.upperBound)")
        }
        return Int(i)
    }

    mutating func doubles(_ key: String, count: Int, in range: ClosedRange<Double>) throws(ConfigError) -> [Double]? {
        guard let v = raw(key) else { return nil }
        guard let a = v.arrayValue else { throw error(key, "expected an array of \(count) numbers, got \(v.typeName)") }
        guard a.count == count else { throw error(key, "expected \(count) numbers, got \(a.count)") }
        var out: [Double] = []
        for e in a {
            guard let x = e.doubleValue else { throw error(key, "expected numbers, found \(e.typeName)") }
            guard range.contains(x) else {
                throw error(key, "\(fmt(x)) is out of range \(fmt(range.lowerBound))…\(fmt(range.upperBound))")
            }
            out.append(x)
        }
        return out
    }

    mutating func vector(_ key: String, in range: ClosedRange<Double>) throws(ConfigError) -> Vector3? {
        guard let a = try doubles(key, count: 3, in: range) else { return nil }
        return Vector3(a[0], a[1], a[2])
    }

    mutating func strings(_ key: String) throws(ConfigError) -> [String]? {
        guard let v = raw(key) else { return nil }
        guard let a = v.arrayValue else { throw error(key, "expected an array of strings, got \(v.typeName)") }
        var out: [String] = []
        for e in a {
            guard let s = e.stringValue else { throw error(key, "expected strings, found \(e.typeName)") }
            out.append(s)
        }
        return out
    }

    mutating func ints(_ key: String, in range: ClosedRange<Int>) throws(ConfigError) -> [Int]? {
        guard let v = raw(key) else { return nil }
        guard let a = v.arrayValue else { throw error(key, "expected an array of integers, got \(v.typeName)") }
        var out: [Int] = []
        for e in a {
            guard case .int(let i) = e, range.contains(Int(i)) else {
                throw error(key, "expected integers in \(range.lowerBound)…\(range.upperBound)")
            }
            out.append(Int(i))
        }
        return out
    }

    /// A sub-table, or nil when absent.
    mutating func table(_ key: String) throws(ConfigError) -> TableReader? {
        guard let v = raw(key) else { return nil }
        guard let o = v.objectValue else { throw error(key, "expected a table [\(keyPath(key))], got \(v.typeName)") }
        return TableReader(doc: doc, path: keyPath(key), table: o)
    }

    /// An array of tables (`[[key]]`), each with its index in the path.
    mutating func tables(_ key: String) throws(ConfigError) -> [TableReader] {
        guard let v = raw(key) else { return [] }
        guard let a = v.arrayValue else { throw error(key, "expected [[\(keyPath(key))]] tables, got \(v.typeName)") }
        var out: [TableReader] = []
        for (i, e) in a.enumerated() {
            guard let o = e.objectValue else { throw error(key, "expected tables, found \(e.typeName)") }
            out.append(TableReader(doc: doc, path: "\(keyPath(key))[\(i)]", table: o))
        }
        return out
    }

    /// Fails on the first key nobody read.
    func finish() throws(ConfigError) {
        for k in table.keys where !seen.contains(k) {
            let what = table[k]?.objectValue != nil ? "unknown table" : "unknown key"
            throw error(k, what)
        }
    }

    private func fmt(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : String(x)
    }
}
