import Foundation
import TOMLKit
import TiltCore

/// A parsed TOML file: its values as a `JSONValue` tree plus the line each key was set on.
///
/// TOMLKit (toml++) does the parsing; it reports lines only for syntax errors, so the key lines
/// come from a light scan of the text (`KeyLocator`) that understands table headers, arrays of
/// tables and dotted keys — enough to point at the line of any key a person wrote.
public struct TOMLDocument: Sendable {
    /// The file the text came from (used in errors).
    public let file: String
    /// The root table, as JSON values (dates as strings).
    public let root: JSONObject
    let lines: [String: Int]

    /// Parses `text` (read from `file`, used in errors).
    public init(text: String, file: String) throws(ConfigError) {
        self.file = file
        let table: TOMLTable
        // toml++ aborts on a few syntax errors instead of reporting them: catch those first.
        if let p = TOMLPreflight.firstProblem(text) {
            throw ConfigError(file: file, line: p.line, key: "", message: p.message)
        }
        do {
            table = try TOMLTable(string: text)
        } catch let e as TOMLParseError {
            throw ConfigError(file: file, line: e.source.begin.line, key: "", message: "syntax error: \(e.description)")
        } catch {
            throw ConfigError(file: file, line: nil, key: "", message: "cannot parse: \(error)")
        }
        root = Self.convert(table)
        lines = KeyLocator.locate(text)
    }

    /// The line where the dotted `path` was set (or its table header), if found.
    public func line(of path: String) -> Int? {
        if let l = lines[path] { return l }
        // Fall back to the enclosing table's header.
        var p = path
        while let dot = p.lastIndex(where: { $0 == "." }) {
            p = String(p[..<dot])
            if let l = lines[p] { return l }
        }
        return nil
    }

    static func convert(_ t: TOMLTable) -> JSONObject {
        var o = JSONObject()
        for (k, v) in t { o[k] = convert(v) }
        return o
    }

    static func convert(_ v: TOMLValueConvertible) -> JSONValue {
        switch v.type {
        case .bool: return .bool(v.bool ?? false)
        case .int: return .int(Int64(v.int ?? 0))
        case .double: return .double(v.double ?? .nan)
        case .string: return .string(v.string ?? "")
        case .table: return .object(convert(v.table ?? TOMLTable()))
        case .array: return .array((v.array.map { Array($0) } ?? []).map { convert($0) })
        case .date, .time, .dateTime: return .string("\(v)")
        }
    }
}

/// Maps dotted key paths to the line that sets them. `[[geofence]]` entries are numbered
/// `geofence[0]`, `geofence[1]`, … in order of appearance.
enum KeyLocator {
    static func locate(_ text: String) -> [String: Int] {
        var out: [String: Int] = [:]
        var prefix = ""
        var arrayCounts: [String: Int] = [:]
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = stripComment(String(raw)).trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("[[") {
                let name = line.dropFirst(2).prefix { $0 != "]" }.trimmingCharacters(in: .whitespaces)
                let i = arrayCounts[name, default: 0]
                arrayCounts[name] = i + 1
                prefix = "\(name)[\(i)]"
                out[prefix] = n + 1
                out[name] = out[name] ?? n + 1
            } else if line.hasPrefix("[") {
                prefix = normalize(line.dropFirst().prefix { $0 != "]" }.trimmingCharacters(in: .whitespaces))
                out[prefix] = n + 1
            } else if let eq = line.firstIndex(of: "=") {
                let key = normalize(line[..<eq].trimmingCharacters(in: .whitespaces))
                let full = prefix.isEmpty ? key : "\(prefix).\(key)"
                if out[full] == nil { out[full] = n + 1 }
            }
        }
        return out
    }

    /// Drops a `#` comment that is not inside a string.
    static func stripComment(_ s: String) -> String {
        var inString: Character? = nil
        var out = ""
        for c in s {
            if let q = inString {
                if c == q { inString = nil }
            } else if c == "\"" || c == "'" {
                inString = c
            } else if c == "#" {
                break
            }
            out.append(c)
        }
        return out
    }

    /// `a . "b"` → `a.b`.
    static func normalize<S: StringProtocol>(_ key: S) -> String {
        key.split(separator: ".").map {
            $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
        }.joined(separator: ".")
    }
}
