// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// The real daemon on drivers whose units, rate lists or gyroscope let it down (issue 38): the NXP
/// 9-DOF board's fxas21002c (gyro scale in millidegrees/s) and fxos8700 (accel scale in g).
final class DriverUnitsDaemonTests: FakeHardwareDaemonTestCase {
    override var tempTag: String { "units" }
    private var log: EventLog?

    override func tearDown() {
        log?.stop()
        super.tearDown()
    }

    /// Starts `tiltd run` on the scenario (already installed) and records every line: samples and
    /// all attitudes. Returns a client for commands.
    private func start(_ s: FakeScenario, rateHz: Double, extra: String = "") throws -> LineClient {
        try """
        [imu]
        rate_hz = \(rateHz)
        magnetometer = "none"
        \(extra)
        [socket]
        path = "\(dir)/tiltd.sock"
        [store]
        path = "\(dir)/tiltd.sqlite"
        """.write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)
        daemon = try DaemonProcess(["run", "--config", "\(dir)/tiltd.toml"], logPath: "\(dir)/log")
        let observer = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        try observer.send(#"{"cmd":"watch","id":1,"samples":true,"attitude_hz":1000}"#)
        log = EventLog(observer)
        return try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
    }

    private func imuStatus(_ c: LineClient) throws -> JSONValue {
        let st = try c.request(#"{"cmd":"status","id":9}"#, id: 9)
        return try XCTUnwrap(st["sources"]?.arrayValue?.first { $0["source"] == "imu" }, st.jsonText)
    }

    private static func vector(_ v: JSONValue?) -> Vector3? {
        guard let a = v?.arrayValue?.compactMap(\.doubleValue), a.count == 3 else { return nil }
        return Vector3(a[0], a[1], a[2])
    }

    private static func occurrences(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    // MARK: units

    func testNXPBoardsUnitMistakesAreCorrectedAndSaidOnce() throws {
        let accel = FakeIIODevice.fxos8700(number: 0)
        let gyro = FakeIIODevice.fxas21002c(number: 1)
        let s = try FakeScenario([accel, gyro])
        scenario = s
        // Lying flat (gravity on +z: 1 g is 4098 counts of 0.244 mg) and turning at 1 °/s about z
        // (16 counts of 62.5 m°/s).
        try s.setRaw(accel, accel.accel!, [0, 0, 4098])
        try s.setRaw(gyro, gyro.gyro!, [0, 0, 16])
        let c = try start(s, rateHz: 50)
        let log = try XCTUnwrap(log)
        func samples() -> [(accel: Vector3, gyro: Vector3)] {
            log.lines.filter { $0["class"] == "sample" }.compactMap { l in
                Self.vector(l["accel"]).flatMap { a in Self.vector(l["gyro"]).map { (a, $0) } }
            }
        }
        try waitUntil("samples with gravity in m/s²", timeout: 15) {
            samples().contains { abs($0.accel.norm - FakeIIODevice.g) < 0.05 }
        }
        let n = samples().count
        try waitUntil("100 more samples", timeout: 10) { samples().count >= n + 100 }
        let after = samples().suffix(100)
        for sample in after {
            XCTAssertEqual(sample.accel.norm, FakeIIODevice.g, accuracy: 0.02, "\(sample.accel)")
            XCTAssertEqual(sample.gyro.z * 180 / .pi, 1, accuracy: 0.001, "a 1 °/s turn reads 1 °/s")
        }
        // Flat, not spun: roll and pitch stay near 0 and yaw turns at about 1 °/s.
        let attitudes = log.attitudes.suffix(100)
        for a in attitudes {
            XCTAssertEqual(a["roll_deg"]?.doubleValue ?? 99, 0, accuracy: 2, a.jsonText)
            XCTAssertEqual(a["pitch_deg"]?.doubleValue ?? 99, 0, accuracy: 2, a.jsonText)
        }

        let imu = try imuStatus(c)
        XCTAssertEqual(imu["state"], "streaming", imu.jsonText)
        let message = imu["message"]?.stringValue ?? ""
        let gyroNote = "fxas21002c's anglvel scale 62.5 is in millidegrees/s per count"
        let accelNote = "fxos8700's accel scale is in g, not m/s²"
        XCTAssertEqual(Self.occurrences(gyroNote, in: message), 1, message)
        XCTAssertEqual(Self.occurrences(accelNote, in: message), 1, message)
        XCTAssertTrue(message.contains("full range ±2048 °/s"), message)
        // One warning each (status lines the daemon logs repeat the message as it stands).
        let warnings = (daemon?.log ?? "").split(separator: "\n").filter { $0.contains(" warning ") }
            .joined(separator: "\n")
        XCTAssertEqual(Self.occurrences(gyroNote, in: warnings), 1, warnings)
        XCTAssertEqual(Self.occurrences(accelNote, in: warnings), 1, warnings)
    }

    func testAGyroScaleNoKnownUnitExplainsIsRefusedWithTheReason() throws {
        var gyro = FakeIIODevice.fxas21002c(number: 1)
        gyro.gyro!.scale = "0.5"  // ±938,000 °/s as rad/s, ±16 °/s as m°/s, ±16,384 °/s as °/s
        let accel = FakeIIODevice.adxl345(number: 0)
        let s = try FakeScenario([accel, gyro])
        scenario = s
        let c = try start(s, rateHz: 50)
        try waitUntil("a refusal", timeout: 15) {
            (try? imuStatus(c))?["message"]?.stringValue?.contains("no known unit mistake explains it") == true
        }
        let imu = try imuStatus(c)
        XCTAssertEqual(imu["state"], "retrying", imu.jsonText)
        XCTAssertTrue(imu["message"]?.stringValue?.contains("fxas21002c's anglvel scale 0.5") == true, imu.jsonText)
    }

    // MARK: degrade, don't stop

    func testAGyroThatCannotBeReadLeavesTiltAndSixAxisComesBack() throws {
        let d = FakeIIODevice.polledOnly()
        let s = try FakeScenario([d])
        scenario = s
        try s.setRaw(d, d.accel!, d.rawCounts(Vector3(0, 0, FakeIIODevice.g), group: d.accel!))
        try s.setRaw(d, d.gyro!, [0, 0, 0])
        _ = try start(s, rateHz: 50)
        let log = try XCTUnwrap(log)
        func samples(withGyro: Bool) -> Int {
            log.lines.filter { $0["class"] == "sample" && ($0["gyro"] != nil) == withGyro }.count
        }
        func imuStatuses() -> [JSONValue] {
            log.lines.filter { $0["class"] == "status" && $0["source"] == "imu" }
        }
        try waitUntil("6-axis samples", timeout: 15) { samples(withGyro: true) >= 25 }

        // The gyroscope's attributes fail (a chip whose gyro half stopped answering).
        let gyroFiles = ["x", "y", "z"].map { "\(s.dir(d))/in_anglvel_\($0)_raw" }
        for f in gyroFiles { try FileManager.default.removeItem(atPath: f) }
        try waitUntil("a status saying so", timeout: 10) {
            imuStatuses().contains {
                $0["gyroscope"] == .bool(false)
                    && $0["message"]?.stringValue?.contains("gyroscope unreadable") == true
            }
        }
        let down = try XCTUnwrap(imuStatuses().last)
        XCTAssertEqual(down["state"], "streaming", down.jsonText)
        XCTAssertTrue(
            down["message"]?.stringValue?.contains("tilt from the accelerometer only") == true, down.jsonText)
        let attitudesBefore = log.attitudes.count
        try waitUntil("accelerometer-only samples and attitudes", timeout: 10) {
            samples(withGyro: false) >= 50 && log.attitudes.count >= attitudesBefore + 50
        }
        XCTAssertFalse(imuStatuses().contains { $0["state"] == "retrying" }, "the IMU was not restarted")
        let tilt = try XCTUnwrap(log.attitudes.last)
        XCTAssertEqual(tilt["roll_deg"]?.doubleValue ?? 99, 0, accuracy: 2, tilt.jsonText)

        // Back: 6-axis again, and the status says so.
        for f in gyroFiles { try "0\n".write(toFile: f, atomically: false, encoding: .utf8) }
        let withGyro = samples(withGyro: true)
        try waitUntil("6-axis samples again", timeout: 10) { samples(withGyro: true) >= withGyro + 25 }
        let up = try XCTUnwrap(imuStatuses().last)
        XCTAssertEqual(up["gyroscope"], .bool(true), up.jsonText)
        XCTAssertFalse(up["message"]?.stringValue?.contains("gyroscope unreadable") == true, up.jsonText)
    }

    func testASplitGyroDeviceThatGoesLeavesTiltAndSixAxisComesBackBuffered() throws {
        let pair = FakeIIODevice.lsm6dsxPair()
        let (a, g) = (pair[0], pair[1])
        let s = try FakeScenario(pair)
        scenario = s
        _ = try start(s, rateHz: 52)
        let log = try XCTUnwrap(log)
        let flat = a.rawCounts(Vector3(0, 0, FakeIIODevice.g), group: a.accel!)
        let period = Int64(1e9 / 52)
        // Both halves' stamps on one grid, so that they pair; the kernel's are CLOCK_MONOTONIC.
        let t0 = Int64(DispatchTime.now().uptimeNanoseconds)
        func feeders(from t: Int64) throws -> [PacedFeeder] {
            try [a, g].map { d in
                PacedFeeder(
                    writer: try ScanWriter(scenario: s, device: d, timeout: 15), device: d, rateHz: 52,
                    accel: flat, t0: t)
            }
        }
        var running = try feeders(from: t0)
        defer { for f in running { f.stop() } }
        func samples(withGyro: Bool) -> Int {
            log.lines.filter { $0["class"] == "sample" && ($0["gyro"] != nil) == withGyro }.count
        }
        func imuStatuses() -> [JSONValue] {
            log.lines.filter { $0["class"] == "status" && $0["source"] == "imu" }
        }
        try waitUntil("6-axis samples", timeout: 15) { samples(withGyro: true) >= 25 }

        s.vanish(g)
        running[1].stop()
        try waitUntil("a status saying so", timeout: 10) {
            imuStatuses().contains {
                $0["gyroscope"] == .bool(false)
                    && $0["message"]?.stringValue?.contains("gyroscope unreadable") == true
            }
        }
        let attitudesBefore = log.attitudes.count
        try waitUntil("accelerometer-only samples and attitudes", timeout: 10) {
            samples(withGyro: false) >= 50 && log.attitudes.count >= attitudesBefore + 50
        }
        XCTAssertFalse(imuStatuses().contains { $0["state"] == "retrying" }, "the IMU was not restarted")

        // Back: tiltd opens both buffers again (a new session); the feeders follow.
        let statusesBefore = imuStatuses().count
        try s.restore(g)
        try waitUntil("a 6-axis status", timeout: 10) {
            imuStatuses().dropFirst(statusesBefore).contains { $0["gyroscope"] == .bool(true) }
        }
        for f in running { f.stop() }
        let now = Int64(DispatchTime.now().uptimeNanoseconds)
        running = try feeders(from: t0 + ((now - t0) / period + 1) * period)
        let withGyro = samples(withGyro: true)
        try waitUntil("6-axis samples again", timeout: 10) { samples(withGyro: true) >= withGyro + 25 }
        XCTAssertFalse(imuStatuses().contains { $0["state"] == "retrying" }, "no retry with backoff")
    }
}
