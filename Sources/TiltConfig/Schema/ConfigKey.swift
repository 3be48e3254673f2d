// SPDX-License-Identifier: Apache-2.0
import TiltCore

/// What a reload of the running daemon does with a key (docs/config.md, "Reloading").
public enum ReloadRule: Sendable, Equatable {
    /// The daemon takes the new value; how and when is its section's `onReload` text.
    case applies
    /// A new value needs a restart: a reload that changes it is refused (`Engine.stage`).
    case needsRestart
    /// Read by another process (`tiltd web`, `tiltd mqtt`); the daemon only validates it.
    case otherProcess
}

/// A value section keys are declared on: its `init()` holds the defaults the docs show.
public protocol ConfigDefaults {
    /// The defaults, as if the table were empty.
    init()
}

/// Where a file's relative paths are taken from.
struct ConfigContext {
    /// The config file's directory ("" when unknown).
    var baseDir: String

    /// `p` as an absolute path (relative ones from `baseDir`).
    func resolve(_ p: String) -> String { Configuration.resolve(p, base: baseDir) }
}

/// One key of a table, declared once: its name, type, range, default, meaning and reload rule,
/// and from them how it is read and validated (`read`), shown by `tiltd check-config`
/// (`render`), compared by a reload (`same`) and listed in docs/config.md (`docRow`).
///
/// `Value` is the struct the key is stored in; `lifted(_:)` turns a section's keys into keys of
/// `Configuration`. The typed constructors (ConfigKey+Kinds.swift) derive the type and default
/// columns from the range and from `Value()`, so neither is written twice.
public struct ConfigKey<Value> {
    /// The key as written in the file (`rate_hz`).
    public let name: String
    /// The type column of the docs: "number 10–1000", "bool", …
    public let type: String
    /// The default column of the docs (already formatted, e.g. "`60`" or "the driver's").
    public let defaultText: String
    /// What the key does, for docs/config.md and tiltd.toml(5).
    public let meaning: String
    /// What a reload does with a new value.
    public let reload: ReloadRule
    /// Reads the key from its table (absent: leaves the value), validating type and range.
    let read: (inout TableReader, inout Value, ConfigContext) throws(ConfigError) -> Void
    /// The `key = value` lines (or a `# comment`) `tiltd check-config` prints; none when unset.
    let render: (Value) -> [String]
    /// Whether two configurations have the same value for this key.
    let same: (Value, Value) -> Bool

    /// A key stored at `path`, read and rendered by the closures given (the typed
    /// constructors build on this; use it directly for keys with their own syntax). `same`
    /// compares what the key sets when `path` holds more (`\.self` for `host` and `port`).
    static func custom<V: Equatable>(
        _ name: String, _ path: WritableKeyPath<Value, V>, type: String, default defaultText: String,
        reload: ReloadRule = .applies, _ meaning: String,
        read: @escaping (inout TableReader, V, ConfigContext) throws(ConfigError) -> V,
        render: @escaping (V) -> [String], same: ((V, V) -> Bool)? = nil
    ) -> ConfigKey {
        ConfigKey(
            name: name, type: type, defaultText: defaultText, meaning: meaning, reload: reload,
            read: { (t, v, ctx) throws(ConfigError) in v[keyPath: path] = try read(&t, v[keyPath: path], ctx) },
            render: { render($0[keyPath: path]) },
            same: { a, b in same?(a[keyPath: path], b[keyPath: path]) ?? (a[keyPath: path] == b[keyPath: path]) })
    }

    /// This key as a key of `Outer`, stored at `path` there.
    func lifted<Outer>(_ path: WritableKeyPath<Outer, Value>) -> ConfigKey<Outer> {
        let read = self.read
        let render = self.render
        let same = self.same
        return ConfigKey<Outer>(
            name: name, type: type, defaultText: defaultText, meaning: meaning, reload: reload,
            read: { (t, o, ctx) throws(ConfigError) in try read(&t, &o[keyPath: path], ctx) },
            render: { render($0[keyPath: path]) },
            same: { same($0[keyPath: path], $1[keyPath: path]) })
    }

    /// This key with another reload rule (for a table read by another process as a whole).
    func reloading(_ rule: ReloadRule) -> ConfigKey {
        ConfigKey(
            name: name, type: type, defaultText: defaultText, meaning: meaning, reload: rule, read: read,
            render: render,
            same: same)
    }

    /// This key's row of the docs table.
    var docRow: String {
        func cell(_ s: String) -> String { s.replacing("|", with: "\\|") }
        return "| `\(name)` | \(cell(type)) | \(cell(defaultText)) | \(cell(meaning)) |"
    }
}
