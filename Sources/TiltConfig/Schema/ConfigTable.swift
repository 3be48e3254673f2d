// SPDX-License-Identifier: Apache-2.0
import TiltCore

/// What the docs and a reload know of one key, without its type parameter.
public struct ConfigKeyInfo: Sendable, Equatable {
    /// The key as written in the file.
    public let name: String
    /// The docs' type column.
    public let type: String
    /// The docs' default column.
    public let defaultText: String
    /// The docs' meaning column.
    public let meaning: String
    /// What a reload does with a new value.
    public let reload: ReloadRule
    /// The docs table's row.
    public let docRow: String
}

/// One table of the file (`[imu]`, `[[geofence]]`), declared once with its keys: the schema
/// `Configuration.parse`, `EffectiveConfig.render`, the reload's diff and docs/config.md's
/// tables are all made from (`Configuration.tables`).
public struct ConfigTable {
    /// The table's name (`imu`, `geofence`).
    public let name: String
    /// How the file writes it: `[imu]` or `[[geofence]]`.
    public let heading: String
    /// What a reload of the daemon does with it (docs/config.md, "Reloading").
    public let onReload: String
    /// Its keys, in the order they are read, shown and documented.
    public let keys: [ConfigKeyInfo]
    /// Reads the table from the root (absent: defaults), validating every key.
    let parse: (inout TableReader, inout Configuration, ConfigContext) throws(ConfigError) -> Void
    /// The table as TOML with every value in force, heading included; nil when not shown.
    let render: (Configuration) -> String?
    /// Dotted keys (`socket.path`) whose values differ; the table's name for a changed array.
    let changedKeys: (Configuration, Configuration) -> [String]

    /// The docs table of the keys.
    public var docTable: String {
        (["| key | type | default | meaning |", "| --- | --- | --- | --- |"] + keys.map(\.docRow)).joined(
            separator: "\n")
    }

    /// A table read into `Configuration`. `check` runs after its keys were read (rules across
    /// keys); `after` runs whether or not the table is present (what follows from it, such as
    /// the calibration file); `shown` says whether `tiltd check-config` prints it.
    static func table(
        _ name: String, onReload: String, keys: [ConfigKey<Configuration>],
        check: ((inout TableReader, inout Configuration) throws(ConfigError) -> Void)? = nil,
        after: ((inout Configuration, ConfigContext) throws(ConfigError) -> Void)? = nil,
        shown: ((Configuration) -> Bool)? = nil
    ) -> ConfigTable {
        ConfigTable(
            name: name, heading: "[\(name)]", onReload: onReload, keys: keys.map(\.info),
            parse: { (root, c, ctx) throws(ConfigError) in
                if var t = try root.table(name) {
                    for k in keys { try k.read(&t, &c, ctx) }
                    try check?(&t, &c)
                    try t.finish()
                }
                try after?(&c, ctx)
            },
            render: { c in
                guard shown?(c) ?? true else { return nil }
                return "[\(name)]\n" + keys.flatMap { $0.render(c) }.map { $0 + "\n" }.joined()
            },
            changedKeys: { a, b in keys.filter { !$0.same(a, b) }.map { "\(name).\($0.name)" } })
    }

    /// An array of tables (`[[name]]`) stored at `path`, each read from `Element()`; `check`
    /// sees each new element and the ones before it.
    static func arrayOfTables<Element: ConfigDefaults & Equatable>(
        _ name: String, _ path: WritableKeyPath<Configuration, [Element]>, onReload: String,
        keys: [ConfigKey<Element>],
        check: ((inout TableReader, Element, [Element]) throws(ConfigError) -> Void)? = nil
    ) -> ConfigTable {
        ConfigTable(
            name: name, heading: "[[\(name)]]", onReload: onReload, keys: keys.map(\.info),
            parse: { (root, c, ctx) throws(ConfigError) in
                for var t in try root.tables(name) {
                    var e = Element()
                    for k in keys { try k.read(&t, &e, ctx) }
                    try check?(&t, e, c[keyPath: path])
                    try t.finish()
                    c[keyPath: path].append(e)
                }
            },
            render: { c in
                let all = c[keyPath: path]
                guard !all.isEmpty else { return nil }
                return all.map { e in "[[\(name)]]\n" + keys.flatMap { $0.render(e) }.map { $0 + "\n" }.joined() }
                    .joined(separator: "\n")
            },
            changedKeys: { a, b in a[keyPath: path] == b[keyPath: path] ? [] : [name] })
    }
}

extension ConfigKey {
    /// The key's docs and reload rule.
    var info: ConfigKeyInfo {
        ConfigKeyInfo(
            name: name, type: type, defaultText: defaultText, meaning: meaning, reload: reload, docRow: docRow)
    }
}
