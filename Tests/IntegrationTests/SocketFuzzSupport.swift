// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltProtocol

/// Draws for the fuzzer from TiltCore's seeded generator: the same seed gives the same lines on
/// every machine, so a failure in CI is replayed by hand with its seed.
extension SplitMix64 {
    /// 0..<n.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }
    /// One of `xs` (not empty).
    mutating func pick<T>(_ xs: [T]) -> T { xs[below(xs.count)] }
}

/// A command as the daemon's own `help` describes it: its name and each argument's name and
/// type text ("number 0–1000", "string ≤ 64 bytes", "bool", "array of ≤ 16 class names",
/// "object ≤ 65536 bytes", "integer 1–100").
struct FuzzCommand {
    struct Argument {
        var name: String
        var type: String
    }
    var name: String
    var arguments: [Argument]

    /// Commands whose reply comes only after a measurement: `calibrate.gyro` answers once its
    /// `settle` + `seconds` (up to 3 min) have passed, and the fuzz batches wait 30 s for every
    /// reply. `GyroCalibrateFuzzTests` sends it the same edge values one at a time on the real
    /// daemon, each waiting for its reply; its capture is tested by GyroCaptureTests and
    /// scripts/systemd-test.
    static let measuring: Set<String> = ["calibrate.gyro"]

    /// The catalogue from a `help` reply, but the `measuring` commands.
    static func catalogue(fromHelp reply: JSONValue) -> [FuzzCommand] {
        (reply["commands"]?.arrayValue ?? []).compactMap { c in
            guard let name = c["name"]?.stringValue, !measuring.contains(name) else { return nil }
            let args = (c["arguments"]?.arrayValue ?? []).compactMap { a -> Argument? in
                guard let n = a["name"]?.stringValue, let t = a["type"]?.stringValue else { return nil }
                return Argument(name: n, type: t)
            }
            return FuzzCommand(name: name, arguments: args)
        }
    }
}

/// Makes the lines: each a command of the catalogue with edge values of its argument types and
/// of other types, or a malformed line. Values are JSON text, so the lines can hold what no
/// encoder writes (1e400, -0, 600 nested arrays, duplicate-free but huge objects).
struct FuzzLineMaker {
    var rng: SplitMix64
    let commands: [FuzzCommand]

    /// Numbers at the edges of every type: the ones that once ended the daemon (1e-10 Hz) too.
    static let numbers = [
        "0", "-0", "1", "-1", "0.5", "-0.5", "1e-10", "1e-300", "5e-324", "-5e-324", "2.2250738585072014e-308",
        "1e308", "-1e308", "1.7976931348623157e308", "1e400", "-1e400", "9223372036854775807",
        "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551616",
        "123456789012345678901234567890", "4294967296", "2147483648", "65536", "1000000", "1e6", "3600.000001",
        "86400", "1e15", "9007199254740993", "0.1e1", "1E2",
    ]
    /// Strings at the edges: empty, NUL, escapes, surrogates, paths, MQTT wildcards, numbers.
    static let strings = [
        #""""#, #""a""#, #""\u0000""#, #""a\u0000b""#, #""\ud800""#, #""\udfff\ud800""#, #""é☃𝄞""#,
        #""NaN""#, #""Infinity""#, #""-Infinity""#, #""nan""#, #""1e-10""#, #""-1""#, #""../../etc/passwd""#,
        #""/etc/shadow""#, #""tiltd.toml""#, "\"#\"", #""+""#, "\"tiltd/#\"", #""\n""#, #""\"""#, #""\\""#,
        #""nearby""#, #""dwell:x:1""#, #""attitude""#, #"" ""#,
    ]
    static let others = [
        "null", "true", "false", "[]", "{}", "[null]", "[1]", "[[]]", #"["attitude"]"#, #"["nope"]"#,
        #"["attitude","game","status","fix","place","credit","sample","quest"]"#, #"{"a":1}"#, #"{"":{}}"#,
    ]

    /// Long and deep values, made once per run.
    static let big: [String] = {
        let deepArray = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let deepObject = String(repeating: #"{"a":"#, count: 300) + "1" + String(repeating: "}", count: 300)
        let wide = "[" + (0..<2000).map { "\($0)" }.joined(separator: ",") + "]"
        let manyNames = "[" + Array(repeating: #""attitude""#, count: 200).joined(separator: ",") + "]"
        return [
            "\"" + String(repeating: "x", count: 3000) + "\"", deepArray, deepObject, wide, manyNames,
            "\"" + String(repeating: "é", count: 1500) + "\"",
        ]
    }()

    /// Edge values of `type` (its bounds and just past them, its length and one more), as text.
    func edges(of type: String) -> [String] {
        var out: [String] = []
        let parts = type.split(separator: " ")
        if type.hasPrefix("number") || type.hasPrefix("integer"), let range = parts.last {
            let ends = range.split(separator: "–").map(String.init)
            if ends.count == 2, let lo = Double(ends[0]), let hi = Double(ends[1]) {
                out += ends
                out += ["\(lo - 1)", "\(hi + 1)", "\(lo.nextDown)", "\(hi.nextUp)", "\((lo + hi) / 2)", "\(lo + 0.5)"]
            }
        } else if type.hasPrefix("string"), let n = parts.dropFirst(2).first.flatMap({ Int($0) }) {
            out += ["\"" + String(repeating: "y", count: n) + "\"", "\"" + String(repeating: "y", count: n + 1) + "\""]
            out += ["\"" + String(repeating: "é", count: n / 2 + 1) + "\""]
        } else if type == "bool" {
            out += ["true", "false"]
        } else if type.hasPrefix("array"), let n = parts.dropFirst(3).first.flatMap({ Int($0) }) {
            out += ["[" + Array(repeating: #""attitude""#, count: n + 1).joined(separator: ",") + "]"]
        } else if type.hasPrefix("object"), let n = parts.dropFirst(2).first.flatMap({ Int($0) }) {
            let pad = String(repeating: "z", count: max(0, n - 20))
            out += [#"{"room":"r","state":"playing","players":[]}"#, #"{"p":""# + pad + #""}"#]
            out += [#"{"p":""# + pad + String(repeating: "z", count: 64) + #""}"#]
        }
        return out
    }

    /// Any value: mostly this type's edges, often another type's.
    mutating func value(for type: String) -> String {
        let own = edges(of: type)
        switch rng.below(10) {
        case 0...4 where !own.isEmpty: return rng.pick(own)
        case 0...5: return rng.pick(Self.numbers)
        case 6: return rng.pick(Self.strings)
        case 7: return rng.pick(Self.others)
        case 8: return rng.chance(0.2) ? rng.pick(Self.big) : rng.pick(Self.numbers)
        default: return rng.pick(Self.strings + Self.others)
        }
    }

    /// What the daemon must do with a line's id.
    enum IDExpectation {
        /// The reply carries this id (JSON text as sent).
        case echoed(String)
        /// The id is not a valid one, or absent: the reply has none.
        case none
    }

    /// Ids the daemon must echo whatever they look like (unique ones come from `serial`).
    static let edgeIDs = [
        "0", "-1", "1e308", "5e-324", "1.5", "-0.25", "9223372036854775807", "-9223372036854775808", #""""#,
        "\"" + String(repeating: "i", count: 128) + "\"", #""é☃""#, #""\u0000""#,
    ]
    /// Ids that are not ids: the reply must come without one.
    static let invalidIDs = [
        "[]", "{}", "true", "[1]", #"{"id":1}"#, "\"" + String(repeating: "i", count: 129) + "\"",
    ]

    /// A command line with `serial` as its id most of the time; `edgeIDAllowed` once per batch
    /// (edge ids repeat, so a batch holds at most one to match its reply).
    mutating func commandLine(serial: Int, edgeIDAllowed: Bool) -> (line: String, id: IDExpectation) {
        let cmd =
            rng.chance(0.03)
            ? FuzzCommand(name: rng.pick(["", "nope", "PING", "ping ", "game."]), arguments: []) : rng.pick(commands)
        var fields: [String] = []
        var id: IDExpectation
        switch rng.below(20) {
        case 0 where edgeIDAllowed:
            let e = rng.pick(Self.edgeIDs)
            fields.append(#""id":"# + e)
            id = .echoed(e)
        case 1:
            fields.append(#""id":"# + rng.pick(Self.invalidIDs))
            id = .none
        case 2:
            id = .none
        case 3:
            fields.append(#""id":"s\#(serial)""#)
            id = .echoed(#""s\#(serial)""#)
        default:
            fields.append(#""id":\#(serial)"#)
            id = .echoed("\(serial)")
        }
        switch rng.below(40) {
        case 0: break  // no cmd
        case 1: fields.append(#""cmd":"# + rng.pick(Self.numbers + Self.others))
        default: fields.append(#""cmd":"# + "\"\(cmd.name)\"")
        }
        for a in cmd.arguments where rng.chance(0.6) { fields.append("\"\(a.name)\":" + value(for: a.type)) }
        if rng.chance(0.05) { fields.append(#""extra":"# + value(for: "bool")) }
        if rng.chance(0.05), let a = cmd.arguments.first { fields.append("\"\(a.name)\":" + value(for: a.type)) }
        fields.shuffle(using: &rng)
        return ("{" + fields.joined(separator: ",") + "}", id)
    }

    /// A malformed line, without a newline of its own and without `"id"` (its reply has none).
    mutating func rawLine(from sample: String) -> [UInt8] {
        switch rng.below(9) {
        case 0: return Array(sample.utf8.prefix(max(1, rng.below(sample.utf8.count))))  // a strict prefix: never JSON
        case 1: return [0xFF, 0xFE, 0x7B, 0x80, 0xC0, 0xAF]
        case 2: return Array(#"{"cmd":"ping"}"#.utf8) + [0x00] + Array("junk".utf8)
        case 3: return Array(repeating: UInt8(ascii: "a"), count: 5000 + rng.below(80_000))
        case 4: return Array((String(repeating: "[", count: 5000)).utf8)
        case 5: return Array(rng.pick(["null", "[]", "1", "\"x\"", "{}", "{", "}", "[{}]", "{\"cmd\":}", "{,}"]).utf8)
        case 6:
            // Random bytes; a blank line gets no reply at all, so one byte that is not blank leads.
            return [0xFF]
                + (0..<rng.below(200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }.filter { $0 != 0x0A }
        case 7: return Array(#"{"cmd":"ping","cmd":"help"}"#.utf8)
        default: return Array("{\"cmd\":\"\(rng.pick(commands).name)\"".utf8) + [0xE2, 0x82]  // cut UTF-8
        }
    }
}
