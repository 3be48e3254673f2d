// SPDX-License-Identifier: Apache-2.0
import Foundation
import XCTest

@testable import TiltConfig

/// Replays the config fuzz inputs (Tests/TiltConfigTests/Fixtures/config-fuzz): files that
/// made toml++ (inside TOMLKit, the parser before `TOMLParser`) fail an assertion and abort —
/// found by scripts/fuzz. `TOMLParser` refuses each with a located syntax error.
final class ConfigFuzzRegressionTests: XCTestCase {
    static let badHeader = "syntax error: a table header needs a name after '[' or '[[', like [imu] or [[geofence]]"
    static let braceInArray = "syntax error: '}' inside an array (expected a value or ']')"
    static let dateWithoutTime = "syntax error: a date-time needs a time after 'T', like 1979-05-27T07:32:00Z"

    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/config-fuzz")
    static let file = "/nonexistent/tiltd-fuzz/tiltd.toml"

    func testEveryInputGivesAConfigurationOrAnError() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.dir.path).sorted()
        XCTAssertGreaterThanOrEqual(names.count, 4, "the crash inputs are there")
        for name in names {
            let data = try Data(contentsOf: Self.dir.appendingPathComponent(name))
            guard let text = String(data: data, encoding: .utf8) else { continue }  // load() refuses non-UTF-8 first
            do {
                _ = try Configuration.parse(text: text, file: Self.file)
            } catch {
                XCTAssertTrue(error.description.hasPrefix(Self.file + ":"), "\(name): \(error)")
            }
        }
    }

    /// The crashes found, with the exact error they give now.
    func testFoundCrashesGiveLocatedSyntaxErrors() throws {
        func parse(_ name: String) throws -> ConfigError? {
            let text = try String(contentsOf: Self.dir.appendingPathComponent(name), encoding: .utf8)
            do { _ = try Configuration.parse(text: text, file: Self.file); return nil } catch { return error }
        }
        // `[[[u]` on line 1: a header with no key after `[[`.
        XCTAssertEqual(
            try parse("crash-3b82679db0ea6615908e4534a5c046b046ab865e"),
            ConfigError(file: Self.file, line: 1, key: "", message: Self.badHeader))
        // `mount_matrix = [0, 1, 0, -1, 0, 0, 0, }, 1]` on line 4: a `}` where a value goes.
        XCTAssertEqual(
            try parse("crash-3b3e720ccbffed1460323665f277927aa5e52c85"),
            ConfigError(file: Self.file, line: 4, key: "", message: Self.braceInArray))
        // `mount_matrix = [0, 1,1979-05-27Ttrue07:32:00Z…` on line 2: a date-time without its time.
        XCTAssertEqual(
            try parse("crash-f1fe12588bbc8862c951e876e436cdecfe09ee6c"),
            ConfigError(file: Self.file, line: 2, key: "", message: Self.dateWithoutTime))
        // A byte order mark, then `[)re]_hz`: the first case behind a BOM.
        XCTAssertEqual(
            try parse("crash-fab3b3bc5ce4302d01e42bd6eaf3870abd7868d9"),
            ConfigError(file: Self.file, line: 1, key: "", message: Self.badHeader))
    }

    func testParserRefusesWhatTomlPlusPlusAssertedOn() {
        let cases: [(String, Int, String)] = [
            ("[[[imu]]]\n", 1, Self.badHeader),
            ("[imu]\nrate_hz = 60\n[\n", 3, Self.badHeader),
            ("  [ =x]\n", 1, Self.badHeader),
            ("[[ .geofence]]\n", 1, Self.badHeader),
            ("a = [ }\n", 1, Self.braceInArray),
            ("a = [\n  1,\n  2,\n}\n", 4, Self.braceInArray),
            ("a = [{x = [1, }]\n", 1, Self.braceInArray),
            ("\u{FEFF}[)re]\n", 1, Self.badHeader),
            ("d = 1979-05-27Tx\n", 1, Self.dateWithoutTime),
            ("[a]\nd = [1, 1979-05-27t:00]\n", 2, Self.dateWithoutTime),
        ]
        for (text, line, message) in cases {
            XCTAssertThrowsError(try TOMLParser.parse(text), text) { e in
                XCTAssertEqual(e as? TOMLSyntaxError, TOMLSyntaxError(line: line, message: message), text)
            }
        }
    }

    /// Valid TOML is not refused: brackets inside strings, comments and multi-line values
    /// are not headers, and every example config passes.
    func testParserPassesValidTOML() throws {
        let valid = [
            "",
            "[imu]\ndevice = \"[=\"\n",
            "# [=\n[ imu ]\n",
            "[\"quoted key\"]\n['literal']\n[ a . b ]\n[[geofence]]\n[[ geofence ]]\n",
            "s = \"\"\"\n[=not a header\n}\n\"\"\"\n[imu]\n",
            "s = '''\n[[[\n'''\nt = \"\"\"a\\\"\"\"\"\n[x]\n",
            "e = \"\\\"[=\"\n",
            "a = [\n  [1, 2],\n  [{x = 1}],  # [=\n  \"]\",\n]\n[b]\n",
            "t = {a = [1, 2], b = {c = \"}\"}}\n",
            "d = 1979-05-27T07:32:00Z\n[-]\n[_1]\n",
            "d = 1979-05-27t07:32:00\ne = 1979-05-27 # T\nf = [1979-05-27, 1979-05-27 07:32:00]\n1979-05-27Tx = 1\n",
        ]
        for text in valid { XCTAssertNoThrow(try TOMLParser.parse(text), text) }
        for f in ["config/tiltd.toml"]
            + (try FileManager.default.contentsOfDirectory(atPath: "\(Self.repo)/scripts/fuzz-targets/seeds/config").map
            { "scripts/fuzz-targets/seeds/config/\($0)" })
        {
            let text = try String(contentsOfFile: "\(Self.repo)/\(f)", encoding: .utf8)
            XCTAssertNoThrow(try TOMLParser.parse(text), f)
        }
        XCTAssertNoThrow(
            try Configuration.parse(
                text: String(contentsOfFile: "\(Self.repo)/config/tiltd.toml", encoding: .utf8), file: Self.file))
    }

    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
}
