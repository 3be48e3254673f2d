// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// Hostile input files of every kind the binary reads (issue 37): recordings (CSV and .csv.gz),
/// GPX tracks, GeoJSON places, decks and calibration files — empty, truncated, huge, binary,
/// NaN, years 1 and 9999 — through the real commands that read them (`estimate`, `judge`,
/// `plot`, `import`, `check-config`, `run --replay/--gpx`, `game.start`). Each either works or
/// stops with a clear message and exit status 1 or 2; never a crash (a signal, a Swift trap).
final class InputFileTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = makeTempDir("inputs") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// Variants of a valid file's text: as they break in the field and as an attacker writes them.
    static func variants(of valid: String, replacing swaps: [(String, String)]) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = [
            ("empty", []), ("truncated", Array(valid.utf8.prefix(valid.utf8.count / 2))),
            ("one byte", Array(valid.utf8.prefix(1))),
            ("binary", (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }),
            ("NUL inside", Array(valid.utf8.prefix(300)) + [0] + Array(valid.utf8.dropFirst(300))),
            ("one huge line", Array(String(repeating: "9", count: 3_000_000).utf8)),
            ("huge", Array(String(repeating: valid, count: max(1, 6_000_000 / max(1, valid.utf8.count))).utf8)),
        ]
        for (from, to) in swaps {
            out.append(("\(from) → \(to)", Array(valid.replacingOccurrences(of: from, with: to).utf8)))
        }
        return out
    }

    /// Runs `tiltd ARGS` (60 s at most): it must end by itself with 0, 1 or 2, and explain a failure.
    func assertNoCrash(_ args: [String], _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tiltdBinary)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = out
        try p.run()
        let err = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(
            p.terminationReason, .exit, "\(what): ended by a signal: \(err.suffix(800))", file: file, line: line)
        XCTAssertTrue(
            [0, 1, 2].contains(p.terminationStatus), "\(what): status \(p.terminationStatus)", file: file, line: line)
        XCTAssertFalse(err.contains("Fatal error"), "\(what): \(err.suffix(800))", file: file, line: line)
        if p.terminationStatus != 0 {
            XCTAssertFalse(
                err.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(what): no message", file: file,
                line: line)
        }
    }

    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = "\(dir)/\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func testRecordingsThroughEstimateJudgePlotAndImport() throws {
        let valid = try String(contentsOfFile: "\(repositoryRoot)/config/demo/head.csv", encoding: .utf8)
        let sample = String(valid.split(separator: "\n").prefix(400).joined(separator: "\n")) + "\n"
        let swaps = [
            (",-0.00768,", ",nan,"), (",9.82199,", ",inf,"), ("999734800,", "-999734800,"),
            ("999734800,", "99999999999999999999999,"), ("1016862778,", "999734800,"), (",0.010717,", ",1e308,"),
            ("t_ns,ax", "t_ns,t_ns,ax"),
        ]
        for (i, (name, bytes)) in Self.variants(of: sample, replacing: swaps).enumerated() {
            let csv = try write(bytes, "rec-\(i).csv")
            try assertNoCrash(["estimate", "--in", csv, "--out", "\(dir)/est.csv"], "estimate, \(name)")
            try assertNoCrash(["judge", "--in", csv, "--quiet"], "judge, \(name)")
            try assertNoCrash(["plot", "--in", csv, "--out", "\(dir)/p.svg", "--game"], "plot, \(name)")
            for format in ["st-mlc", "broad"] {
                try assertNoCrash(
                    ["import", "--format", format, "--rate", "100", csv, "\(dir)/imp.csv"], "import \(format), \(name)")
            }
            // Gzipped, and a gzip stream cut short.
            let gz = Process()
            gz.executableURL = URL(fileURLWithPath: "/bin/gzip")
            gz.arguments = ["-kf", csv]
            try gz.run()
            gz.waitUntilExit()
            let zipped = try Data(contentsOf: URL(fileURLWithPath: csv + ".gz"))
            let cut = try write(Array(zipped.prefix(zipped.count / 2)), "rec-\(i)-cut.csv.gz")
            for path in [csv + ".gz", cut] {
                try assertNoCrash(["estimate", "--in", path, "--out", "\(dir)/est.csv"], "estimate .gz, \(name)")
                try assertNoCrash(["plot", "--in", path, "--out", "\(dir)/p.svg"], "plot .gz, \(name)")
            }
        }
    }

    func testGPXPlacesDecksAndCalibrationThroughTheDaemon() throws {
        let gpx = try String(contentsOfFile: "\(repositoryRoot)/config/demo/walk.gpx", encoding: .utf8)
        let gpxLines = gpx.split(separator: "\n", omittingEmptySubsequences: false)
        let gpxSample = (gpxLines.prefix(60) + gpxLines.suffix(3)).joined(separator: "\n")
        let gpxVariants = Self.variants(
            of: gpxSample,
            replacing: [
                ("2024-05-04T10:00:01Z", "0001-01-01T00:00:00Z"), ("2024-05-04T10:00:02Z", "9999-12-31T23:59:59Z"),
                ("lat=\"52.5169944\"", "lat=\"nan\""), ("lon=\"13.3990013\"", "lon=\"1e308\""),
                ("<ele>34.1</ele>", "<ele>-inf</ele>"), ("<gpxtpx:speed>1.46", "<gpxtpx:speed>1e300"),
                ("2024-05-04T10:00:03Z", "2024-13-45T25:61:61Z"),
            ])
        let places = try String(contentsOfFile: "\(repositoryRoot)/config/demo/places.geojson", encoding: .utf8)
        let placeVariants = Self.variants(
            of: places,
            replacing: [
                ("13.4078672", "nan"), ("52.5192483", "1e308"), ("\"Point\"", "\"Polygon\""), ("\"name\"", "\"nom\""),
            ])
        let deckVariants = Self.variants(
            of: "okapi\nzebra\n", replacing: [("okapi", String(repeating: "é", count: 300))])
        let calibration =
            "accel_offset = [0.1, 0.2, 0.3]\naccel_scale = [1.0, 1.0, 1.0]\ngyro_bias = [0.01, 0.0, 0.0]\n"
        let calibrationVariants = Self.variants(
            of: calibration, replacing: [("0.1,", "nan,"), ("1.0,", "1e308,"), ("0.01", "inf"), ("= [", "= [[")])

        // Places and calibration files are read at start: the daemon explains and exits 1, or runs.
        for (i, (name, bytes)) in (placeVariants + calibrationVariants).enumerated() {
            let isPlaces = i < placeVariants.count
            let file = try write(bytes, isPlaces ? "places-\(i).geojson" : "calibration-\(i).toml")
            let table = isPlaces ? "[places]\nfile = \"\(file)\"" : "[calibration]\nfile = \"\(file)\""
            let config = try writeDaemonConfig(in: dir, table)
            try assertNoCrash(
                ["check-config", "--config", config], "check-config, \(isPlaces ? "places" : "calibration") \(name)")
            try assertDaemonRunsOrExplains(config: config, extra: [], "\(isPlaces ? "places" : "calibration") \(name)")
        }
        // GPX tracks replayed as fixes; decks read at game.start.
        let config = try writeDaemonConfig(in: dir)
        for (i, (name, bytes)) in gpxVariants.enumerated() {
            let track = try write(bytes, "walk-\(i).gpx")
            try assertDaemonRunsOrExplains(
                config: config, extra: ["--gpx", track, "--gpx-speed", "100"], "gpx \(name)")
        }
        try FileManager.default.createDirectory(atPath: "\(dir)/decks", withIntermediateDirectories: true)
        let d = try DaemonProcess(
            ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv"],
            logPath: "\(dir)/decks.log")
        defer { d.stop() }
        let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        _ = try c.next("attitude", timeout: 15)
        for (i, (name, bytes)) in deckVariants.enumerated() {
            _ = try write(bytes, "decks/d\(i).txt")
            let reply = try c.request(#"{"cmd":"game.start","id":\#(i),"deck":"d\#(i).txt"}"#, id: i, timeout: 15)
            let code = reply["error"]?["code"]?.stringValue
            XCTAssertTrue(
                reply["ok"] == .bool(true) || code == "deck_unavailable" || code == "empty_deck",
                "deck \(name): \(reply)")
            _ = try c.request(#"{"cmd":"game.stop","id":\#(100 + i)}"#, id: 100 + i, timeout: 15)
        }
        XCTAssertTrue(d.isRunning, d.log)
    }

    /// The daemon on `config` (replaying the demo head recording): it answers `ping`, or it
    /// exited with status 1 and said why.
    func assertDaemonRunsOrExplains(config: String, extra: [String], _ what: String) throws {
        try? FileManager.default.removeItem(atPath: "\(dir)/tiltd.sock")
        let d = try DaemonProcess(
            ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv"] + extra,
            logPath: "\(dir)/daemon.log")
        defer { d.stop() }
        var answered = false
        try waitUntil("\(what): the daemon to answer ping or exit", timeout: 30) {
            if !d.isRunning { return true }
            guard let c = try? LineClient(path: "\(dir)/tiltd.sock", timeout: 0.2) else { return false }
            answered = (try? c.request(#"{"cmd":"ping","id":1}"#, id: 1, timeout: 10))?["ok"] == .bool(true)
            return answered
        }
        if !answered {
            let status = d.waitForExit(timeout: 5)
            XCTAssertEqual(status, 1, "\(what): \(d.log.suffix(800))")
            XCTAssertFalse(d.log.contains("Fatal error"), "\(what): \(d.log.suffix(800))")
        }
    }
}
