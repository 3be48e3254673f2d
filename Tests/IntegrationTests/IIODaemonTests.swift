// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// The real `tiltd run` on fake IIO hardware (needs `scripts/fakehw-ns`): scans of a known motion
/// go into the FIFO(s), samples and attitudes come out of the socket.
final class IIODaemonTests: FakeHardwareDaemonTestCase {
    override var tempTag: String { "iio" }
    /// IMU statuses seen before the test asked for one: from the `hello` (sent before we
    /// connected) and lines read while waiting for the `watch` reply.
    private var earlyStatuses: [JSONValue] = []

    /// Installs the scenario, starts `tiltd run` on it, connects and watches samples and every attitude.
    private func startDaemon(
        _ devices: [FakeIIODevice], device: String = "auto", rateHz: Double = 60
    ) throws
        -> (FakeScenario, LineClient)
    {
        let s = try FakeScenario(devices)
        scenario = s
        let config = "\(dir)/tiltd.toml"
        try """
        [imu]
        device = "\(device)"
        rate_hz = \(rateHz)
        [socket]
        path = "\(dir)/tiltd.sock"
        [store]
        path = "\(dir)/tiltd.sqlite"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let d = try DaemonProcess(["run", "--config", config], logPath: "\(dir)/log")
        daemon = d
        let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        let hello = try c.next("hello")
        earlyStatuses = (hello["sources"]?.arrayValue ?? []).filter { $0["source"] == "imu" }
        try c.send(#"{"cmd":"watch","id":1,"samples":true,"attitude_hz":1000}"#)
        var reply: JSONValue?
        try waitUntil("the watch reply") {
            guard let v = try c.readJSON() else { throw LineClient.Failure(description: "tiltd closed the connection") }
            if v["class"] == "status" && v["source"] == "imu" { earlyStatuses.append(v) }
            if v["class"] == "reply" && v["id"] == .int(1) { reply = v }
            return reply != nil
        }
        XCTAssertEqual(reply?["ok"], .bool(true), "\(String(describing: reply))")
        return (s, c)
    }

    /// The IMU's next `streaming` status: one seen early, else the next `status` event.
    private func streamingStatus(_ c: LineClient, timeout: Double = 15) throws -> JSONValue {
        let early = earlyStatuses.first { $0["state"] == "streaming" }
        earlyStatuses = []
        if let early { return early }
        return try c.next("status", timeout: timeout) { $0["source"] == "imu" && $0["state"] == "streaming" }
    }

    private struct Received {
        var samples: [(t: Int64, accel: Vector3, gyro: Vector3)] = []
        var attitudes: [(t: Int64, roll: Double, pitch: Double, yaw: Double)] = []
    }

    /// Reads lines until `count` samples (and their attitudes) have arrived.
    private func receive(_ c: LineClient, samples count: Int, timeout: Double = 15) throws -> Received {
        var r = Received()
        let deadline = Date().addingTimeInterval(timeout)
        func vector(_ v: JSONValue?) -> Vector3? {
            guard let a = v?.arrayValue?.compactMap(\.doubleValue), a.count == 3 else { return nil }
            return Vector3(a[0], a[1], a[2])
        }
        while r.samples.count < count || r.attitudes.count < count {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            guard let v = try c.readJSON(timeout: left) else { break }
            if v["class"] == "sample", let t = v["t_ns"]?.intValue, let a = vector(v["accel"]),
                let g = vector(v["gyro"])
            {
                r.samples.append((t, a, g))
            } else if v["class"] == "attitude", let t = v["t_ns"]?.intValue, let roll = v["roll_deg"]?.doubleValue,
                let pitch = v["pitch_deg"]?.doubleValue, let yaw = v["yaw_deg"]?.doubleValue
            {
                r.attitudes.append((t, roll, pitch, yaw))
            }
        }
        XCTAssertEqual(r.samples.count, count, "samples received")
        return r
    }

    private func scans(
        _ d: FakeIIODevice, _ motion: Motion, count: Int, rate: Double, t0: Int64
    )
        -> (scans: [ScanWriter.Scan], expected: [IMUSample])
    {
        var scans: [ScanWriter.Scan] = [], expected: [IMUSample] = []
        for i in 0..<count {
            let t = t0 + Int64((Double(i) * 1e9 / rate).rounded())
            let truth = motion.reading(at: Double(i) / rate)
            let a = d.rawCounts(truth.accel, group: d.accel!), g = d.rawCounts(truth.gyro, group: d.gyro!)
            scans.append(ScanWriter.scan(t: t, accel: a, gyro: g))
            expected.append(IMUSample(t: t, accel: d.decoded(a, group: d.accel!), gyro: d.decoded(g, group: d.gyro!)))
        }
        return (scans, expected)
    }

    /// Samples on the socket are the decoded scans (to the 4/5 decimals the protocol prints).
    private func assertSamples(
        _ got: Received, _ expected: [IMUSample], file: StaticString = #filePath, line: UInt = #line
    ) {
        for (s, e) in zip(got.samples, expected) {
            XCTAssertEqual(s.t, e.t, "t_ns", file: file, line: line)
            for i in 0..<3 {
                XCTAssertEqual(s.accel[i], e.accel[i], accuracy: 0.6e-4, "accel", file: file, line: line)
                XCTAssertEqual(s.gyro[i], e.gyro[i], accuracy: 0.6e-5, "gyro", file: file, line: line)
            }
        }
    }

    func testCombinedDeviceStaticTilt() throws {
        let d = FakeIIODevice.mpu6050()
        let (s, c) = try startDaemon([d])
        let status = try streamingStatus(c)
        XCTAssertEqual(status["device"], "mpu6050 (iio:device0)")
        XCTAssertEqual(status["rate_hz"]?.doubleValue, 50, "nearest to 60 of 10 20 50 100 200 500")
        XCTAssertEqual(status["gyroscope"], .bool(true))
        let writer = try ScanWriter(scenario: s, device: d, timeout: 15)
        XCTAssertEqual(s.attribute(d, "buffer/enable"), "1")
        XCTAssertEqual(s.attribute(d, "sampling_frequency"), "50")
        XCTAssertEqual(s.timestampClock(d), "monotonic")
        XCTAssertEqual(s.attribute(d, "trigger/current_trigger"), "mpu6050-dev0")
        for ch in ["accel_x", "accel_y", "accel_z", "anglvel_x", "anglvel_y", "anglvel_z", "timestamp"] {
            XCTAssertEqual(s.attribute(d, "scan_elements/in_\(ch)_en"), "1", ch)
        }

        let roll = 30.0, pitch = -20.0
        let motion = Motion.staticTilt(roll: roll * .pi / 180, pitch: pitch * .pi / 180)
        let (scans, expected) = scans(d, motion, count: 120, rate: 60, t0: 10_000_000_000)
        try writer.write(scans)
        let got = try receive(c, samples: 120)
        assertSamples(got, expected)
        let last = try XCTUnwrap(got.attitudes.last)
        XCTAssertEqual(last.t, expected.last!.t)
        XCTAssertEqual(last.roll, roll, accuracy: 0.5)
        XCTAssertEqual(last.pitch, pitch, accuracy: 0.5)
    }

    func testSplitDevicesConstantRotation() throws {
        let pair = FakeIIODevice.lsm6dsxPair()
        let (s, c) = try startDaemon(pair)
        let status = try streamingStatus(c)
        XCTAssertEqual(status["device"], "lsm6ds3_accel (iio:device0) + lsm6ds3_gyro (iio:device1)")
        XCTAssertEqual(status["rate_hz"]?.doubleValue, 52)
        let (a, g) = (pair[0], pair[1])
        let accelWriter = try ScanWriter(scenario: s, device: a, timeout: 15)
        let gyroWriter = try ScanWriter(scenario: s, device: g, timeout: 15)
        XCTAssertEqual(s.attribute(a, "sampling_frequency"), "52.000")
        XCTAssertEqual(s.attribute(g, "sampling_frequency"), "52.000")

        let rate = 52.0, yawRate = 0.5, n = 156  // 3 s
        let motion = Motion.constantYaw(rate: yawRate)
        var accelScans: [ScanWriter.Scan] = [], gyroScans: [ScanWriter.Scan] = []
        var expected: [IMUSample] = []
        for i in 0..<n {
            let t = 20_000_000_000 + Int64((Double(i) * 1e9 / rate).rounded())
            let truth = motion.reading(at: Double(i) / rate)
            let ar = a.rawCounts(truth.accel, group: a.accel!), gr = g.rawCounts(truth.gyro, group: g.gyro!)
            accelScans.append(ScanWriter.scan(t: t, accel: ar))
            gyroScans.append(ScanWriter.scan(t: t + 250_000, gyro: gr))
            expected.append(IMUSample(t: t, accel: a.decoded(ar, group: a.accel!), gyro: g.decoded(gr, group: g.gyro!)))
        }
        try gyroWriter.write(gyroScans)
        try accelWriter.write(accelScans)
        let got = try receive(c, samples: n)
        assertSamples(got, expected)
        // The yaw turned by rate × time (the rate as the gyro counts quantise it).
        let first = try XCTUnwrap(got.attitudes.first), last = try XCTUnwrap(got.attitudes.last)
        let measuredRate = g.decoded(g.rawCounts(Vector3(0, 0, yawRate), group: g.gyro!), group: g.gyro!).z
        let expectedTurn = measuredRate * Double(last.t - first.t) / 1e9 * 180 / .pi
        var turned = last.yaw - first.yaw
        if turned < 0 { turned += 360 }
        XCTAssertEqual(turned, expectedTurn, accuracy: expectedTurn * 0.01, "yaw integrated within 1 %")
    }

    func testPolledDevice() throws {
        let d = FakeIIODevice.polledOnly()
        let motion = Motion.staticTilt(roll: -0.4, pitch: 0.25)
        let truth = motion.reading(at: 0)
        let (s, c) = try startDaemon([d], device: "bmi160")
        let accelRaw = d.rawCounts(truth.accel, group: d.accel!)
        try s.setRaw(d, d.accel!, accelRaw)
        try s.setRaw(d, d.gyro!, [0, 0, 0])
        let status = try streamingStatus(c)
        XCTAssertTrue(status["message"]?.stringValue?.contains("polled") == true, "\(status)")
        // Polled at the 60 Hz asked: the chip runs at the lowest offered rate above it, so every
        // poll finds fresh data (buffered, it would run at its nearest, 50).
        XCTAssertEqual(s.attribute(d, "in_accel_sampling_frequency"), "100")
        XCTAssertEqual(status["rate_hz"]?.doubleValue, 60)
        // The first polls may predate the raw values above: wait for the tilt to show.
        let want = d.decoded(accelRaw, group: d.accel!)
        var seen = 0
        var lastAttitude: (roll: Double, pitch: Double)?
        try waitUntil("60 polled samples of the tilt", timeout: 15) {
            guard let v = try c.readJSON(timeout: 5) else { return true }
            if v["class"] == "sample", let a = v["accel"]?.arrayValue?.compactMap(\.doubleValue), a.count == 3,
                abs(a[0] - want.x) < 1e-4, abs(a[1] - want.y) < 1e-4, abs(a[2] - want.z) < 1e-4
            {
                seen += 1
            }
            if seen > 0, v["class"] == "attitude", let r = v["roll_deg"]?.doubleValue,
                let p = v["pitch_deg"]?.doubleValue
            {
                lastAttitude = (r, p)
            }
            return seen >= 60
        }
        let att = try XCTUnwrap(lastAttitude)
        XCTAssertEqual(att.roll, -0.4 * 180 / .pi, accuracy: 0.5)
        XCTAssertEqual(att.pitch, 0.25 * 180 / .pi, accuracy: 0.5)
    }

    func testBigEndian32WithMountMatrix() throws {
        let mount = Matrix3(Vector3(0, 1, 0), Vector3(1, 0, 0), Vector3(0, 0, -1))
        let d = FakeIIODevice.bigEndian32(mountMatrix: mount)
        let (s, c) = try startDaemon([d])
        _ = try streamingStatus(c)
        let writer = try ScanWriter(scenario: s, device: d, timeout: 15)
        let motion = Motion.staticTilt(roll: 0.6, pitch: 0.3)
        let (scans, expected) = scans(d, motion, count: 60, rate: 60, t0: 30_000_000_000)
        try writer.write(scans)
        let got = try receive(c, samples: 60)
        assertSamples(got, expected)
        let last = try XCTUnwrap(got.attitudes.last)
        XCTAssertEqual(last.roll, 0.6 * 180 / .pi, accuracy: 0.5, "mount matrix applied before fusion")
        XCTAssertEqual(last.pitch, 0.3 * 180 / .pi, accuracy: 0.5)
    }

    func testDaemonSurvivesVanishAndResumes() throws {
        let d = FakeIIODevice.mpu6050()
        let (s, c) = try startDaemon([d])
        _ = try streamingStatus(c)
        var writer = try ScanWriter(scenario: s, device: d, timeout: 15)
        let motion = Motion.staticTilt(roll: 0.2, pitch: 0.1)
        try writer.write(scans(d, motion, count: 30, rate: 60, t0: 40_000_000_000).scans)
        _ = try receive(c, samples: 30)

        s.vanish(d)
        writer.close()
        let retrying = try c.next("status", timeout: 10) { $0["state"] == "retrying" }
        XCTAssertEqual(retrying["source"], "imu")
        XCTAssertNotNil(retrying["retry_in_s"]?.doubleValue)
        XCTAssertTrue(daemon?.isRunning == true, "tiltd exited on vanish")

        try s.restore(d)
        _ = try streamingStatus(c, timeout: 20)
        writer = try ScanWriter(scenario: s, device: d, timeout: 15)
        let (later, expected) = scans(d, motion, count: 30, rate: 60, t0: 50_000_000_000)
        try writer.write(later)
        let got = try receive(c, samples: 30)
        assertSamples(got, expected)
    }

    func testMissingDeviceIsReportedThenFound() throws {
        let (s, c) = try startDaemon([], device: "mpu6050")
        let retrying = try c.next("status", timeout: 15) { $0["state"] == "retrying" }
        XCTAssertTrue(
            retrying["message"]?.stringValue?.contains("no IIO device named \"mpu6050\"") == true, "\(retrying)")
        s.remove()
        scenario = try FakeScenario([FakeIIODevice.mpu6050(number: 2)])
        let status = try streamingStatus(c, timeout: 20)
        XCTAssertEqual(status["device"], "mpu6050 (iio:device2)")
    }
}
