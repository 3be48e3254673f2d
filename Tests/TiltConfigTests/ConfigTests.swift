// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

@testable import TiltConfig

final class ConfigTests: XCTestCase {
    func parse(_ text: String) throws -> Configuration {
        try Configuration.parse(text: text, file: "/etc/tiltd/test.toml")
    }

    func testRelativePathsAreTakenFromTheConfigFilesDirectory() throws {
        let c = try parse("[socket]\npath = \"run/tiltd.sock\"\n[store]\npath = \"db/tiltd.sqlite\"\n")
        XCTAssertEqual(c.socket.path, "/etc/tiltd/run/tiltd.sock")
        XCTAssertEqual(c.store.path, "/etc/tiltd/db/tiltd.sqlite")
        XCTAssertEqual(try parse("[socket]\npath = \"/run/x.sock\"\n").socket.path, "/run/x.sock")
    }

    func assertError(
        _ text: String, line: Int?, key: String, contains: String, file: StaticString = #filePath, lineNo: UInt = #line
    ) {
        do {
            _ = try parse(text)
            XCTFail("accepted:\n\(text)", file: file, line: lineNo)
        } catch let e as ConfigError {
            XCTAssertEqual(e.file, "/etc/tiltd/test.toml", file: file, line: lineNo)
            XCTAssertEqual(e.line, line, "\(e)", file: file, line: lineNo)
            XCTAssertEqual(e.key, key, "\(e)", file: file, line: lineNo)
            XCTAssertTrue(e.message.contains(contains), "\(e)", file: file, line: lineNo)
            XCTAssertTrue(
                e.description.hasPrefix("/etc/tiltd/test.toml:\(line.map(String.init) ?? "")"), e.description,
                file: file, line: lineNo)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: lineNo)
        }
    }

    func testDefaultsWhenEmpty() throws {
        let c = try parse("")
        XCTAssertEqual(c.imu.device, "auto")
        XCTAssertEqual(c.imu.rateHz, 60)
        XCTAssertEqual(c.socket.path, "/run/tiltd/tiltd.sock")
        XCTAssertEqual(c.socket.mode, 0o660)
        XCTAssertTrue(c.socket.ioURing)
        XCTAssertEqual(c.calibration, .none)
    }

    func testReadsValues() throws {
        let c = try parse(
            """
            # comment
            [imu]
            device = "mpu6050"
            rate_hz = 200
            mount_matrix = [0, 1, 0, 1, 0, 0, 0, 0, -1]

            [socket]
            path = "/tmp/x.sock"   # trailing comment
            mode = "0640"
            trusted_uids = [1000]
            attitude_hz = 30
            io_uring = false
            """)
        XCTAssertEqual(c.imu.device, "mpu6050")
        XCTAssertEqual(c.imu.rateHz, 200)
        XCTAssertEqual(c.imu.mountMatrix, Matrix3(rowMajor: [0, 1, 0, 1, 0, 0, 0, 0, -1]))
        XCTAssertEqual(c.socket.mode, 0o640)
        XCTAssertEqual(c.socket.trustedUIDs, [1000])
        XCTAssertEqual(c.socket.attitudeHz, 30)
        XCTAssertFalse(c.socket.ioURing)
    }

    func testUnknownKeyNamesLineAndKey() {
        assertError("[imu]\ndevice = \"auto\"\nrate = 60\n", line: 3, key: "imu.rate", contains: "unknown key")
    }

    func testUnknownTable() {
        assertError("[imu]\n\n[sokcet]\npath = \"/x\"\n", line: 3, key: "sokcet", contains: "unknown table")
    }

    func testWrongType() {
        assertError(
            "[imu]\nrate_hz = \"fast\"\n", line: 2, key: "imu.rate_hz", contains: "expected a number, got string")
    }

    func testOutOfRange() {
        assertError("\n[imu]\nrate_hz = 5000\n", line: 3, key: "imu.rate_hz", contains: "out of range 10…1000")
        assertError("[socket]\nmode = \"0999\"\n", line: 2, key: "socket.mode", contains: "octal")
        assertError(
            "[imu]\nmount_matrix = [1, 0, 0, 0, 1, 0, 0, 0, 0]\n", line: 2, key: "imu.mount_matrix",
            contains: "rotation")
    }

    func testIMUMode() throws {
        XCTAssertEqual(try parse("").imu.mode, "auto")
        XCTAssertEqual(try parse("[imu]\nmode = \"polled\"\n").imu.mode, "polled")
        assertError("[imu]\nrate_hz = 50\nmode = \"fast\"\n", line: 3, key: "imu.mode", contains: "buffered")
    }

    func testIMURateWindow() throws {
        XCTAssertEqual(try parse("").imu.rateWindow, 1)
        let c = try parse("[imu]\nrate_window = 0.2\n")
        XCTAssertEqual(c.imu.rateWindow, 0.2)
        // The effective config shows the window, and reading it back gives the same.
        XCTAssertTrue(EffectiveConfig.render(c).contains("rate_window = 0.2"), EffectiveConfig.render(c))
        XCTAssertEqual(try parse(EffectiveConfig.render(c)).imu, c.imu)
        // Every [imu] key appears even at its default: the ones with no value as a comment.
        let defaults = EffectiveConfig.render(try parse(""))
        for key in ["device", "rate_hz", "mode", "rate_window = 1", "# mount_matrix", "# buffer_samples"] {
            XCTAssertTrue(defaults.contains(key), "\(key) missing from\n\(defaults)")
        }
        XCTAssertEqual(try parse(defaults).imu, try parse("").imu)
        assertError(
            "[imu]\nrate_hz = 60\nrate_window = 1.5\n", line: 3, key: "imu.rate_window", contains: "out of range")
    }

    func testSyntaxErrorHasLine() {
        do {
            _ = try parse("[imu]\nrate_hz = 60\ndevice = \n")
            XCTFail("accepted")
        } catch let e as ConfigError {
            XCTAssertEqual(e.line, 3, "\(e)")
            XCTAssertTrue(e.message.contains("syntax"), "\(e)")
        } catch { XCTFail("\(error)") }
    }

    func testCalibrationFileIncludedAndValidated() throws {
        let dir = makeTempDir("cfg")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let main = "\(dir)/tiltd.toml"
        try "[imu]\nrate_hz = 100\n".write(toFile: main, atomically: true, encoding: .utf8)
        try
            "[calibration]\ngyro_bias = [0.01, -0.02, 0.003]\naccel_offset = [0.1, 0, -0.2]\naccel_scale = [1.01, 0.99, 1.0]\n"
            .write(toFile: "\(dir)/calibration.toml", atomically: true, encoding: .utf8)
        let c = try Configuration.load(path: main)
        XCTAssertEqual(c.calibration.gyroBias, Vector3(0.01, -0.02, 0.003))
        XCTAssertEqual(c.calibration.accelScale, Vector3(1.01, 0.99, 1.0))
        XCTAssertEqual(c.calibrationFile, "\(dir)/calibration.toml")

        try "[calibration]\naccel_scale = [1.01, 3.0, 1.0]\n".write(
            toFile: "\(dir)/calibration.toml", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try Configuration.load(path: main)) { e in
            let ce = e as! ConfigError
            XCTAssertEqual(ce.file, "\(dir)/calibration.toml")
            XCTAssertEqual(ce.line, 2)
            XCTAssertEqual(ce.key, "calibration.accel_scale")
        }
    }

    func testMissingFileIsClear() {
        XCTAssertThrowsError(try Configuration.load(path: "/nonexistent/tiltd.toml")) { e in
            XCTAssertTrue("\(e)".hasPrefix("/nonexistent/tiltd.toml: cannot read"), "\(e)")
        }
    }

    func testArrayOfTablesLocated() throws {
        let lines = try TOMLParser.parse("[[geofence]]\nname = \"a\"\n\n[[geofence]]\nname = \"b\"\nradius_m = 5\n")
            .lines
        XCTAssertEqual(lines["geofence[1].radius_m"], 6)
        XCTAssertEqual(lines["geofence[0].name"], 2)
    }

    func testExampleConfigInRepoIsValid() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = repo.appendingPathComponent("config/tiltd.toml").path
        let c = try Configuration.load(path: path)
        XCTAssertEqual(c.imu.rateHz, 60)
    }
}

final class EffectiveConfigTests: XCTestCase {
    /// What `check-config` prints is itself a valid config that means the same.
    func testRenderedConfigParsesBackToTheSameValues() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var c = try Configuration.load(path: repo.appendingPathComponent("config/tiltd.toml").path)
        c.geofences = [Geofence(name: "home", lat: 52.5, lon: 13.4, radius: 40, dwell: 300, cooldown: 60, credit: true)]
        c.game.deck = "nearby"
        let text = EffectiveConfig.render(c)
        let back = try Configuration.parse(text: text, file: "/tmp/effective.toml")
        XCTAssertEqual(back.imu, c.imu)
        XCTAssertEqual(back.socket, c.socket)
        XCTAssertEqual(back.places, c.places)
        XCTAssertEqual(back.geofences, c.geofences)
        XCTAssertEqual(back.quests, c.quests)
        XCTAssertEqual(back.game.deck, "nearby")
        XCTAssertEqual(back.game.rules.lowThresholdDeg, c.game.rules.lowThresholdDeg)
        XCTAssertEqual(back.credits, c.credits)
        XCTAssertEqual(back.calibration, c.calibration)
    }
}
