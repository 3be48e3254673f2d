// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// The kinds of key tiltd's files have. Each derives the docs' type column from its range or
/// choices and the default column from `Value()`, reads through `TableReader` (so type and
/// range errors read alike everywhere) and renders the TOML `tiltd check-config` prints.
/// `check` adds a rule of the key's own, returning the message of an error or nil.
extension ConfigKey where Value: ConfigDefaults {
    /// The default column: the value of `Value()` at `path`, as TOML.
    static func defaultColumn<V>(_ path: KeyPath<Value, V>, _ show: (V) -> String) -> String {
        "`\(show(Value()[keyPath: path]))`"
    }

    /// A number in `range`.
    static func number(
        _ name: String, _ path: WritableKeyPath<Value, Double>, in range: ClosedRange<Double>,
        default d: String? = nil, reload: ReloadRule = .applies, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: "number \(TOMLText.short(range.lowerBound))–\(TOMLText.short(range.upperBound))",
            default: d ?? defaultColumn(path, TOMLText.short), reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in try t.double(name, default: v, in: range) },
            render: { ["\(name) = \($0)"] })
    }

    /// An integer in `range`.
    static func integer(
        _ name: String, _ path: WritableKeyPath<Value, Int>, in range: ClosedRange<Int>,
        default d: String? = nil, reload: ReloadRule = .applies, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: TOMLText.integerType(range), default: d ?? defaultColumn(path) { "\($0)" },
            reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in try t.int(name, default: v, in: range) },
            render: { ["\(name) = \($0)"] })
    }

    /// An integer in `range`, or unset (nil) for a default the daemon works out.
    static func optionalInteger(
        _ name: String, _ path: WritableKeyPath<Value, Int?>, in range: ClosedRange<Int>,
        default d: String, reload: ReloadRule = .applies, unset: String? = nil, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: TOMLText.integerType(range), default: d, reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in
                t.has(name) ? try t.int(name, default: 0, in: range) : v
            },
            render: { v in v.map { ["\(name) = \($0)"] } ?? unset.map { ["# \(name): unset, \($0)"] } ?? [] })
    }

    /// A seed: an integer ≥ 0, or unset for a different one each time.
    static func seed(
        _ name: String, _ path: WritableKeyPath<Value, UInt64?>, default d: String, reload: ReloadRule = .applies,
        _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: "integer ≥ 0", default: d, reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in
                t.has(name) ? UInt64(try t.int(name, default: 0, in: 0...Int.max)) : v
            },
            render: { v in v.map { ["\(name) = \($0)"] } ?? [] })
    }

    /// `true` or `false`. `whenPresent` is the default once the table is present (`enabled`
    /// keys: writing the table turns its feature on).
    static func flag(
        _ name: String, _ path: WritableKeyPath<Value, Bool>, whenPresent: Bool? = nil, default d: String? = nil,
        reload: ReloadRule = .applies, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: "bool", default: d ?? defaultColumn(path) { "\($0)" }, reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in try t.bool(name, default: whenPresent ?? v) },
            render: { ["\(name) = \($0)"] })
    }

    /// A string, one of `allowed` when given.
    static func text(
        _ name: String, _ path: WritableKeyPath<Value, String>, allowed: [String]? = nil, type: String? = nil,
        default d: String? = nil, reload: ReloadRule = .applies, check: ((String) -> String?)? = nil,
        _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path,
            type: type ?? allowed.map { $0.map { "`\(TOMLText.quote($0))`" }.joined(separator: ", ") }
                ?? "string",
            default: d ?? defaultColumn(path, TOMLText.quote), reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in
                let s = try t.string(name, default: v, allowed: allowed)
                if let check, let why = check(s) { throw t.error(name, why) }
                return s
            },
            render: { ["\(name) = \(TOMLText.quote($0))"] })
    }

    /// One of a few names, each meaning a value of `E`.
    static func choice<E: Equatable>(
        _ name: String, _ path: WritableKeyPath<Value, E>, _ choices: [(String, E)], reload: ReloadRule = .applies,
        _ meaning: String
    ) -> ConfigKey {
        func spell(_ e: E) -> String { choices.first { $0.1 == e }?.0 ?? "?" }
        return custom(
            name, path, type: choices.map { "`\(TOMLText.quote($0.0))`" }.joined(separator: " | "),
            default: defaultColumn(path) { TOMLText.quote(spell($0)) }, reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in
                let s = try t.string(name, default: spell(v), allowed: choices.map(\.0))
                return choices.first { $0.0 == s }!.1
            },
            render: { ["\(name) = \(TOMLText.quote(spell($0)))"] })
    }

    /// A string or unset.
    static func optionalText(
        _ name: String, _ path: WritableKeyPath<Value, String?>, type: String = "string", default d: String = "unset",
        reload: ReloadRule = .applies, check: ((String) -> String?)? = nil, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: type, default: d, reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in
                guard let s = try t.optionalString(name) else { return v }
                if let check, let why = check(s) { throw t.error(name, why) }
                return s
            },
            render: { v in v.map { ["\(name) = \(TOMLText.quote($0))"] } ?? [] })
    }

    /// A file or directory, or unset; a relative path is taken from the config file's directory.
    static func path(
        _ name: String, _ path: WritableKeyPath<Value, String?>, default d: String = "unset",
        reload: ReloadRule = .applies, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: "path", default: d, reload: reload, meaning,
            read: { (t, v, ctx) throws(ConfigError) in try t.optionalString(name).map(ctx.resolve) ?? v },
            render: { v in v.map { ["\(name) = \(TOMLText.quote($0))"] } ?? [] })
    }

    /// An array of strings, each passing `check`.
    static func texts(
        _ name: String, _ path: WritableKeyPath<Value, [String]>, type: String = "array of strings",
        reload: ReloadRule = .applies, check: ((String) -> String?)? = nil, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: type, default: defaultColumn(path, TOMLText.strings), reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in
                guard let a = try t.strings(name) else { return v }
                if let check { for s in a { if let why = check(s) { throw t.error(name, why) } } }
                return a
            },
            render: { ["\(name) = \(TOMLText.strings($0))"] })
    }

    /// Place categories (compared as `Place.normalizedCategory` spells them).
    static func categories(
        _ name: String, _ path: WritableKeyPath<Value, Set<String>>, default d: String? = nil,
        reload: ReloadRule = .applies, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: "array of strings", default: d ?? defaultColumn(path) { TOMLText.strings($0.sorted()) },
            reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in
                try t.strings(name).map { Set($0.map(Place.normalizedCategory)) } ?? v
            },
            render: { ["\(name) = \($0.sorted())"] })
    }

    /// Three numbers in `range`.
    static func vector(
        _ name: String, _ path: WritableKeyPath<Value, Vector3>, in range: ClosedRange<Double>,
        reload: ReloadRule = .applies, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: "3 numbers \(TOMLText.short(range.lowerBound))–\(TOMLText.short(range.upperBound))",
            default: defaultColumn(path) {
                "[\(TOMLText.short($0.x)),\(TOMLText.short($0.y)),\(TOMLText.short($0.z))]"
            },
            reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in try t.vector(name, in: range) ?? v },
            render: { ["\(name) = \(TOMLText.vector($0))"] })
    }

    /// Three numbers in `range`, or unset.
    static func optionalVector(
        _ name: String, _ path: WritableKeyPath<Value, Vector3?>, in range: ClosedRange<Double>,
        default d: String = "unset", reload: ReloadRule = .applies, _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: "3 numbers \(TOMLText.short(range.lowerBound))–\(TOMLText.short(range.upperBound))",
            default: d, reload: reload, meaning,
            read: { (t, v, _) throws(ConfigError) in try t.vector(name, in: range) ?? v },
            render: { v in v.map { ["\(name) = \(TOMLText.vector($0))"] } ?? [] })
    }
}

/// TOML value spellings for the renderers and the docs.
enum TOMLText {
    /// A TOML basic string (JSON's escaping is a subset TOML accepts).
    static func quote(_ s: String) -> String { JSONValue.string(s).jsonText }
    /// A 3-vector as an array of numbers.
    static func vector(_ v: Vector3) -> String { "[\(v.x), \(v.y), \(v.z)]" }
    /// An array of strings.
    static func strings(_ a: [String]) -> String { "[\(a.map(quote).joined(separator: ", "))]" }
    /// A number as people write it: `60`, `0.15`.
    static func short(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : String(x)
    }
    /// The docs' type of an integer key.
    static func integerType(_ r: ClosedRange<Int>) -> String {
        r.upperBound == Int.max ? "integer ≥ \(r.lowerBound)" : "integer \(r.lowerBound)–\(r.upperBound)"
    }
}
