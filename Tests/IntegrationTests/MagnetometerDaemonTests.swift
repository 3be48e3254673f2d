// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TestSupport
import TiltCore
import XCTest

/// The real `tiltd run` on a fake IMU with a fake AK8975 beside it (needs `scripts/fakehw-ns`):
/// the magnetometer is found and reported, its field goes through the calibration file's
/// `mag_offset` and sets the attitude's heading, and a turned field turns the heading.
final class MagnetometerDaemonTests: FakeHardwareDaemonTestCase {
    override var tempTag: String { "mag" }

    func testHeadingFollowsTheCalibratedFieldOfAPairedAK8975() throws {
        let imu = FakeIIODevice.polledOnly(number: 0), mag = FakeIIODevice.ak8975(number: 1)
        let s = try FakeScenario([imu, mag])
        scenario = s
        // Level and still; the hard iron moves the raw field's horizontal part from +x to +y, so
        // only a daemon that subtracts mag_offset sees the field along +x (a heading of 90°).
        let hardIron = Vector3(-20, 20, 0)
        try s.setRaw(imu, imu.accel!, imu.rawCounts(Vector3(0, 0, FakeIIODevice.g), group: imu.accel!))
        try s.setRaw(imu, imu.gyro!, [0, 0, 0])
        try s.setField(mag, Vector3(20, 0, -40) + hardIron)
        try """
        [calibration]
        mag_offset = [\(hardIron.x), \(hardIron.y), \(hardIron.z)]
        """.write(toFile: "\(dir)/calibration.toml", atomically: true, encoding: .utf8)
        try """
        [imu]
        rate_hz = 50
        [calibration]
        file = "\(dir)/calibration.toml"
        [socket]
        path = "\(dir)/tiltd.sock"
        [store]
        path = "\(dir)/tiltd.sqlite"
        """.write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)
        daemon = try DaemonProcess(["run", "--config", "\(dir)/tiltd.toml"], logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        let hello = try c.next("hello")
        try c.send(#"{"cmd":"watch","id":1,"attitude_hz":10}"#)
        var status = (hello["sources"]?.arrayValue ?? []).first {
            $0["source"] == "magnetometer" && $0["state"] == "streaming"
        }
        var yaw: Double?
        func readYaw(until done: (Double) -> Bool, _ what: String, timeout: Double) throws {
            try waitUntil(what, timeout: timeout) {
                guard let v = try c.readJSON(timeout: 5) else { return false }
                if v["class"] == "status", v["source"] == "magnetometer", v["state"] == "streaming" { status = v }
                if v["class"] == "attitude", let y = v["yaw_deg"]?.doubleValue { yaw = y }
                return yaw.map(done) ?? false
            }
        }
        // The first field sample sets the heading at once.
        try readYaw(until: { abs($0 - 90) < 2 }, "a heading of 90° from the calibrated field", timeout: 15)
        let st = try XCTUnwrap(status, "a streaming status for the magnetometer")
        XCTAssertEqual(st["device"]?.stringValue, "ak8975 (iio:device1)")
        XCTAssertEqual(st["rate_hz"]?.doubleValue, 50)
        // The field turned by 90° (the board turned the other way): the heading follows, pulled
        // at the estimator's magnetometer time constant (9 s): 30° of the 90° within 6 s.
        try s.setField(mag, Vector3(0, 20, -40) + hardIron)
        try readYaw(until: { $0 < 60 }, "the heading following the turned field", timeout: 8)
        XCTAssertGreaterThan(try XCTUnwrap(yaw), -5, "turned towards 0°, not past it")
    }

    func testCalibrateMagOnTheLiveDeviceGivesTheHardIronBack() throws {
        let imu = FakeIIODevice.polledOnly(number: 0), mag = FakeIIODevice.ak8975(number: 1)
        let s = try FakeScenario([imu, mag])
        scenario = s
        try "[imu]\nrate_hz = 50\n[calibration]\nfile = \"calibration.toml\"\n"
            .write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)
        let earth = Vector3(1.5, 18.4, -46.3), hardIron = Vector3(-42.5, 17.25, 30)
        let soft = Matrix3(Vector3(1.04, 0.02, 0), Vector3(0.02, 0.97, -0.01), Vector3(0, -0.01, 1.0))
        try s.setField(mag, soft * earth + hardIron)
        let p = try DaemonProcess(
            ["calibrate", "mag", "--config", "\(dir)/tiltd.toml", "--timeout", "40"], logPath: "\(dir)/log")
        // The wearer: uniformly drawn orientations (a fixed sequence), a new one every 10 ms, until
        // the command has enough coverage and exits.
        var u: UInt64 = 777
        func uniform() -> Double {
            u = u &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(u >> 11) / Double(1 << 53)
        }
        let deadline = Date().addingTimeInterval(40)
        while p.isRunning && Date() < deadline {
            let (u1, u2, u3) = (uniform(), uniform(), uniform())
            let a = (1 - u1).squareRoot(), b = u1.squareRoot()
            let q = Quaternion(
                w: a * sin(2 * .pi * u2), x: a * cos(2 * .pi * u2), y: b * sin(2 * .pi * u3), z: b * cos(2 * .pi * u3))
            try s.setField(mag, soft * q.conjugate.rotate(earth) + hardIron)
            usleep(10_000)
        }
        XCTAssertEqual(p.waitForExit(timeout: 5), 0, p.log)
        let text = try String(contentsOfFile: "\(dir)/calibration.toml", encoding: .utf8)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("mag_offset = [") }, text)
        let got = line.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }.split(separator: ",")
            .compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        XCTAssertEqual(got.count, 3)
        // The AK8975's counts are ~0.3 µT: within 1 µT.
        for i in 0..<3 { XCTAssertEqual(got[i], hardIron[i], accuracy: 1, "mag_offset[\(i)]; \(p.log)") }
        print(p.log)
    }

    func testRecordWritesTheLiveFieldAsRecordingV2() throws {
        let imu = FakeIIODevice.polledOnly(number: 0), mag = FakeIIODevice.ak8975(number: 1)
        let s = try FakeScenario([imu, mag])
        scenario = s
        try "[imu]\nrate_hz = 50\n".write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)
        let raw = mag.magnRawCounts(Vector3(12, -25, 38))
        try s.setRaw(mag, mag.magn!, raw)
        let out = "\(dir)/rec.csv"
        let (status, log) = try runTiltd(["record", "--config", "\(dir)/tiltd.toml", "--seconds", "2", "--out", out])
        XCTAssertEqual(status, 0, log)
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.prefix(2).map(String.init), [RecordingFormat.bannerV2, RecordingFormat.headerV2], log)
        let rows = lines.compactMap { try? RecordingFormat.parseRow(line: $0) }
        let fields = rows.compactMap(\.field)
        // Polled at the IMU's 50 Hz: about one field per row (the first polls may precede it).
        XCTAssertGreaterThan(fields.count, rows.count / 2, log)
        let want = mag.magnDecoded(raw)
        for f in fields { XCTAssertEqual((f - want).norm, 0, accuracy: 1e-3, "µT to the 4 decimals written") }
    }
}
