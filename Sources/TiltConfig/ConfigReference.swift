// SPDX-License-Identifier: Apache-2.0
/// docs/config.md's key tables and its reload table, made from `Configuration.tables`.
///
/// The prose of docs/config.md is written by hand; under each table's heading (`## [imu]`,
/// `## [[geofence]]`) its first `| key | type | default | meaning |` table is this module's,
/// and so is the `| section | on reload |` table. ConfigReferenceTests fails when the committed
/// file differs from `update(_:)`'s result (and rewrites it when asked: DEVELOPERS.md);
/// scripts/make-man makes tiltd.toml(5) from the file, so the man page follows.
public enum ConfigReference {
    /// The header line of a key table.
    public static let keyTableHeader = "| key | type | default | meaning |"
    /// The header line of the reload table.
    public static let reloadTableHeader = "| section | on reload |"

    /// The reload table: what a reload does with each table.
    public static var reloadTable: String {
        ([reloadTableHeader, "| --- | --- |"] + Configuration.tables.map { "| `\($0.heading)` | \($0.onReload) |" })
            .joined(separator: "\n")
    }

    /// `markdown` with every generated table replaced by what the declarations say, and the
    /// headings (`[imu]`) that were looked for and not found.
    public static func update(_ markdown: String) -> (text: String, missing: [String]) {
        var lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var missing: [String] = []
        for table in Configuration.tables {
            // The table's own: after its heading and before the next one.
            guard let h = lines.firstIndex(where: { $0.hasPrefix("#") && $0.hasSuffix(" \(table.heading)") }),
                let start = lines[(h + 1)...].prefix(while: { !$0.hasPrefix("#") }).firstIndex(of: keyTableHeader)
            else {
                missing.append(table.heading)
                continue
            }
            replaceTable(in: &lines, at: start, with: table.docTable)
        }
        if let start = lines.firstIndex(of: reloadTableHeader) {
            replaceTable(in: &lines, at: start, with: reloadTable)
        } else {
            missing.append(reloadTableHeader)
        }
        return (lines.joined(separator: "\n"), missing)
    }

    /// Replaces the table starting at line `start` (its rows run to the first line not starting with `|`).
    static func replaceTable(in lines: inout [String], at start: Int, with table: String) {
        var end = start
        while end < lines.count && lines[end].hasPrefix("|") { end += 1 }
        lines.replaceSubrange(start..<end, with: table.split(separator: "\n").map(String.init))
    }
}
