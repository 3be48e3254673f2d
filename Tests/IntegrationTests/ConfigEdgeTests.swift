// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltConfig
import TiltCore
import XCTest

/// Every config key, from its declaration (`Configuration.tables`), at the edges of its type and
/// beyond (issue 37), through the real binary: `tiltd check-config` either accepts the file or
/// answers `FILE:LINE: table.key: …` (exit 1, never a crash), and a seeded sample of what it
/// accepts runs: the daemon starts on it and answers `ping`. Values per key and runs are bounded
/// (TILTD_FUZZ_CONFIG_VALUES, default 6; TILTD_FUZZ_CONFIG_RUNS, default 60; seed TILTD_FUZZ_SEED).
final class ConfigEdgeTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = makeTempDir("cfgedge") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    static var valuesPerKey: Int { SocketFuzzTests.env["TILTD_FUZZ_CONFIG_VALUES"].flatMap { Int($0) } ?? 6 }
    static var runs: Int { SocketFuzzTests.env["TILTD_FUZZ_CONFIG_RUNS"].flatMap { Int($0) } ?? 60 }

    /// Values hostile to any key: out of every range, of every other type, TOML's specials.
    static let hostile = [
        "nan", "inf", "-inf", "1e308", "-1e308", "5e-324", "-0.0", "9223372036854775807", "-9223372036854775808",
        "0", "-1", "true", "\"\"", "\"x\"", "\"\(String(repeating: "x", count: 5000))\"", "\"\\u0000\"", "[]", "[1]",
        "[\"a\"]", "{}", "\"../../etc/passwd\"", "\"/\"", "\"nearby\"", "\"#\"", "\"tiltd/#\"", "1979-05-27",
    ]

    /// The edges of a declared type ("number 10–1000", "integer ≥ 0", "3 numbers -1–1", …).
    static func edges(of type: String) -> [String] {
        let bounds = type.split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { word -> (Double, Double)? in
            let parts = word.split(separator: "–", maxSplits: 1)
            guard parts.count == 2, let lo = Double(parts[0]), let hi = Double(parts[1]) else { return nil }
            return (lo, hi)
        }.first
        func text(_ x: Double) -> String { type.hasPrefix("integer") ? String(Int64(x)) : "\(x)" }
        var out: [String] = []
        if let (lo, hi) = bounds {
            let step = type.hasPrefix("integer") ? 1 : max(1e-9, (hi - lo) * 1e-9)
            out = [text(lo), text(hi), text(lo - step), text(hi + step), text((lo + hi) / 2)]
            if let n = Int(type.prefix { $0.isNumber }), type.contains("numbers") {
                out = out.map { v in "[" + Array(repeating: v, count: n).joined(separator: ", ") + "]" }
                out.append("[" + Array(repeating: text(lo), count: n + 1).joined(separator: ", ") + "]")
            }
        } else if type.contains("≥ 0") {
            out = ["0", "-1", "9223372036854775807"]
        } else if type == "bool" {
            out = ["true", "false"]
        }
        return out
    }

    func testEveryKeyAtItsEdgesIsAcceptedOrNamedAndWhatIsAcceptedRuns() throws {
        var rng = SplitMix64(seed: SocketFuzzTests.seed &+ 5)
        var accepted: [String] = []
        var checked = 0
        var refused = 0
        let path = "\(dir)/tiltd.toml"
        let t0 = Date()
        for table in Configuration.tables {
            for key in table.keys {
                // (Its own socket and store: the test needs them where it looks.)
                if (table.name == "socket" || table.name == "store") && key.name == "path" { continue }
                var values = Self.edges(of: key.type)
                while values.count < Self.valuesPerKey { values.append(rng.pick(Self.hostile)) }
                for value in values {
                    let text = Self.config(dir: dir, heading: table.heading, "\(key.name) = \(value)")
                    try text.write(toFile: path, atomically: true, encoding: .utf8)
                    let r = try Self.run(["check-config", "--config", path])
                    checked += 1
                    if r.status == 0 {
                        accepted.append(text)
                        continue
                    }
                    refused += 1
                    XCTAssertEqual(
                        r.status, 1,
                        "check-config exit for \(table.name).\(key.name) = \(value.prefix(80)): \(r.output)")
                    // FILE:LINE: table.key: why (a rule across keys may name a neighbour).
                    let located = r.output.contains("\(path):") && r.output.contains(": \(table.name)")
                    XCTAssertTrue(located, "\(table.name).\(key.name) = \(value.prefix(80)): \(r.output.prefix(400))")
                }
            }
        }
        let checkSeconds = Date().timeIntervalSince(t0)
        XCTAssertGreaterThan(accepted.count, 0)
        XCTAssertGreaterThan(refused, 0)
        // A seeded sample of the accepted files: the daemon runs on each and answers ping.
        let t1 = Date()
        var sample: [String] = []
        for _ in 0..<min(Self.runs, accepted.count) { sample.append(accepted.remove(at: rng.below(accepted.count))) }
        for (i, text) in sample.enumerated() {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: "\(dir)/tiltd.sock")
            let d = try DaemonProcess(
                ["run", "--config", path, "--replay", "\(repositoryRoot)/config/demo/head.csv"],
                logPath: "\(dir)/log-\(i)")
            defer { d.stop() }
            do {
                let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
                XCTAssertEqual(try c.request(#"{"cmd":"ping","id":1}"#, id: 1, timeout: 10)["ok"], .bool(true), text)
            } catch {
                XCTFail(
                    "the daemon did not answer on an accepted config (\(error)):\n\(text.suffix(300))\n\(d.log.suffix(1500))"
                )
            }
        }
        print(
            "tiltd config edges: \(checked) files checked (\(refused) refused with FILE:LINE: key) in \(String(format: "%.1f", checkSeconds)) s; the daemon ran on \(sample.count) accepted ones in \(String(format: "%.1f", Date().timeIntervalSince(t1))) s"
        )
    }

    /// A config with the test's socket and store, and `line` in table `heading`.
    static func config(dir: String, heading: String, _ line: String) -> String {
        var text = "[socket]\npath = \"\(dir)/tiltd.sock\"\n[store]\npath = \"\(dir)/tiltd.sqlite\"\n"
        if heading == "[socket]" || heading == "[store]" {
            text = text.replacingOccurrences(of: "\(heading)\n", with: "\(heading)\n\(line)\n")
        } else {
            text += "\(heading)\n\(line)\n"
        }
        return text
    }

    /// Runs `tiltd ARGS` to its end (30 s at most): exit status and output.
    static func run(_ args: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tiltdBinary)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
