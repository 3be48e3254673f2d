// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// A parsed TOML file: its values as a `JSONValue` tree plus the line each key was set on.
///
/// `TOMLParser` (ours, standard library only) does the parsing. TOMLKit, the package it
/// replaced, imports Foundation and so links ICU's 30+ MB of data into the daemon
/// (docs/hardware.md, "Footprint"); a parser of our own also knows the line of every key, which
/// TOMLKit did not tell.
public struct TOMLDocument: Sendable {
    /// The file the text came from (used in errors).
    public let file: String
    /// The root table, as JSON values (dates and times as the text written).
    public let root: JSONObject
    let lines: [String: Int]

    /// Parses `text` (read from `file`, used in errors).
    public init(text: String, file: String) throws(ConfigError) {
        self.file = file
        do {
            (root, lines) = try TOMLParser.parse(text)
        } catch {
            throw ConfigError(file: file, line: error.line, key: "", message: error.message)
        }
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
}
