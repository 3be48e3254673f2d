// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import XCTest

@testable import TiltConfig

/// The declarations in `Configuration.tables` are the one source of every key: docs/config.md's
/// tables (and so tiltd.toml(5), which scripts/make-man makes from it) and config/tiltd.toml
/// must say what they say, and what `check-config` prints and a reload compares follows them.
final class ConfigReferenceTests: XCTestCase {
    let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// docs/config.md's key and reload tables are the declarations'. With
    /// TILTD_UPDATE_CONFIG_DOCS=1 the test rewrites the file instead (DEVELOPERS.md).
    func testDocsTablesAreTheDeclarations() throws {
        let url = repo.appendingPathComponent("docs/config.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let (updated, missing) = ConfigReference.update(text)
        XCTAssertEqual(missing, [], "docs/config.md needs a heading and a key table for each")
        if ProcessInfo.processInfo.environment["TILTD_UPDATE_CONFIG_DOCS"] == "1" {
            try updated.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let have = text.split(separator: "\n", omittingEmptySubsequences: false)
        let want = updated.split(separator: "\n", omittingEmptySubsequences: false)
        for (i, (a, b)) in zip(have, want).enumerated() where a != b {
            XCTFail(
                "docs/config.md:\(i + 1) differs from the declarations (TILTD_UPDATE_CONFIG_DOCS=1 rewrites it):\n"
                    + "  file: \(a)\n  want: \(b)")
            break
        }
        XCTAssertEqual(have.count, want.count, "docs/config.md: the tables' lengths differ from the declarations")
    }

    /// Every declared key is in config/tiltd.toml, set or commented out, under its own table.
    func testExampleConfigHasEveryKey() throws {
        let text = try String(contentsOf: repo.appendingPathComponent("config/tiltd.toml"), encoding: .utf8)
        var table = ""
        var seen: Set<String> = []
        for raw in text.split(separator: "\n") {
            var line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") || line.hasPrefix("# [") {
                if line.hasPrefix("# ") { line.removeFirst(2) }
                table = String(line.drop { $0 == "[" }.prefix { $0 != "]" })
                if table == "mqtt.qos" { seen.insert("mqtt.qos") }
                continue
            }
            if line.hasPrefix("#") { line = line.drop { $0 == "#" || $0 == " " }.description }
            if let eq = line.firstIndex(of: "="), !table.isEmpty {
                seen.insert("\(table).\(line[..<eq].trimmingCharacters(in: .whitespaces))")
            }
        }
        for t in Configuration.tables {
            for k in t.keys {
                XCTAssertTrue(seen.contains("\(t.name).\(k.name)"), "config/tiltd.toml lacks \(t.heading) \(k.name)")
            }
        }
    }

    /// What check-config prints parses back to the same values, key by key, for every table.
    func testEffectiveConfigRoundTripsEveryKey() throws {
        var c = try Configuration.load(path: repo.appendingPathComponent("config/tiltd.toml").path)
        c.geofences = [Geofence(name: "home", lat: 52.5, lon: 13.4, radius: 40, dwell: 300, cooldown: 60, credit: true)]
        c.imu.bufferSamples = 4
        c.imu.mountMatrix = Matrix3(rowMajor: [0, 1, 0, 1, 0, 0, 0, 0, -1])
        c.game.seed = 7
        c.log.style = "journal"
        c.mqtt.enabled = true
        c.mqtt.room = "party"
        c.mqtt.roomSeed = 3
        let back = try Configuration.parse(text: EffectiveConfig.render(c), file: "/tmp/effective.toml")
        XCTAssertEqual(Configuration.changedKeys(back, c), [])
    }

    /// A change to any one table is named by a reload, except the tables other processes read.
    func testChangedSectionsNameTheTable() throws {
        let base = try Configuration.parse(text: "", file: "/etc/tiltd/tiltd.toml")
        let edits: [(String, String?)] = [
            ("[imu]\nrate_hz = 100", "imu"), ("[calibration]\ngyro_bias = [0.1, 0, 0]", "calibration"),
            ("[socket]\nqueue_lines = 64", "socket"), ("[store]\npath = \"/x.sqlite\"", "store"),
            ("[gps]\nserver = \"gps:2947\"", "gps"), ("[game]\nround_s = 30", "game"),
            ("[places]\nnearby_limit = 5", "places"), ("[[geofence]]\nname = \"a\"\nlat = 1\nlon = 2", "geofence"),
            ("[quests]\nmin_xp = 1", "quests"), ("[credits]\nredeem_amount = 5", "credits"),
            ("[snooze]\ndistance_m = 10", "snooze"), ("[course]\non_speed = 2", "course"),
            ("[log]\nstyle = \"terminal\"", "log"), ("[web]\nmax_clients = 3", nil), ("[mqtt]\nkeepalive_s = 60", nil),
        ]
        for (text, table) in edits {
            let new = try Configuration.parse(text: text, file: "/etc/tiltd/tiltd.toml")
            XCTAssertEqual(Configuration.changedSections(base, new), table.map { [$0] } ?? [], text)
        }
        let moved = try Configuration.parse(text: "[store]\npath = \"/x.sqlite\"", file: "/etc/tiltd/tiltd.toml")
        XCTAssertEqual(Configuration.changedKeysNeedingRestart(base, moved), ["store.path"])
    }

    /// Errors still name file, line and key, for declared keys of every kind.
    func testErrorsNameFileLineAndKey() {
        let cases = [
            (
                "[log]\nstyle = \"json\"\n",
                "/etc/tiltd/tiltd.toml:2: log.style: must be one of \"auto\", \"journal\", \"terminal\", got \"json\""
            ),
            (
                "[course]\non_speed = 1\noff_speed = 2\n",
                "/etc/tiltd/tiltd.toml:3: course.off_speed: must not exceed on_speed (1.0)"
            ),
            (
                "[[geofence]]\nname = \"a\"\nlon = 2\n",
                "/etc/tiltd/tiltd.toml:1: geofence[0].lat: missing (degrees, -90…90)"
            ),
            ("[imu]\n\ndevice = \"\"\n", "/etc/tiltd/tiltd.toml:3: imu.device: must not be empty (use \"auto\")"),
        ]
        for (text, want) in cases {
            XCTAssertThrowsError(try Configuration.parse(text: text, file: "/etc/tiltd/tiltd.toml"), text) { e in
                XCTAssertEqual("\(e)", want)
            }
        }
    }
}

extension ConfigReferenceTests {
    /// A heading without its table is reported, not filled from the next section's table.
    func testMissingTableIsReportedNotTakenFromTheNextSection() {
        let doc = Configuration.tables.map { "## \($0.heading)\n\n\(ConfigReference.keyTableHeader)\n| --- |\n" }
            .joined(separator: "\n").replacing("## [store]\n\n\(ConfigReference.keyTableHeader)", with: "## [store]\n")
        XCTAssertEqual(ConfigReference.update(doc).missing, ["[store]", ConfigReference.reloadTableHeader])
    }
}
