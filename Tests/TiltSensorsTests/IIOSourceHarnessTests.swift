// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TiltCore
import TiltSensors
import XCTest

/// IIOSource against fake IIO devices read by the real libiio (needs `scripts/fakehw-ns`).
final class IIOSourceHarnessTests: XCTestCase {
    private var scenario: FakeScenario?
    private var run: SourceRun?

    override func tearDown() {
        run?.finish()
        run = nil
        scenario?.remove()
        scenario = nil
        super.tearDown()
    }

    private func start(_ devices: [FakeIIODevice], _ config: IIOSource.Settings) throws -> (FakeScenario, SourceRun) {
        try requireFakeHardware()
        let s = try FakeScenario(devices)
        scenario = s
        let r = SourceRun(IIOSource(configuration: config))
        run = r
        return (s, r)
    }

    /// Raw scans of `motion` for a combined device, at `rate`, starting at kernel time `t0`.
    private func scans(
        _ d: FakeIIODevice, _ motion: Motion, count: Int, rate: Double, t0: Int64 = 5_000_000_000
    )
        -> (scans: [ScanWriter.Scan], expected: [IMUSample])
    {
        var scans: [ScanWriter.Scan] = [], expected: [IMUSample] = []
        for i in 0..<count {
            let t = t0 + Int64(Double(i) * 1e9 / rate)
            let r = motion.reading(at: Double(i) / rate)
            let a = d.rawCounts(r.accel, group: d.accel!), g = d.rawCounts(r.gyro, group: d.gyro!)
            scans.append(ScanWriter.scan(t: t, accel: a, gyro: g))
            expected.append(IMUSample(t: t, accel: d.decoded(a, group: d.accel!), gyro: d.decoded(g, group: d.gyro!)))
        }
        return (scans, expected)
    }

    private func assertSamples(
        _ got: [IMUSample], _ expected: [IMUSample], _ motion: Motion, rate: Double,
        accelLSB: Double, gyroLSB: Double, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(got.count, expected.count, "sample count", file: file, line: line)
        for (i, (s, e)) in zip(got, expected).enumerated() {
            XCTAssertEqual(s.t, e.t, "timestamp of sample \(i)", file: file, line: line)
            assertClose(s.accel, e.accel, 1e-9, "decoded accel \(i)", file: file, line: line)
            assertClose(s.gyro, e.gyro, 1e-9, "decoded gyro \(i)", file: file, line: line)
            // And the decoded values are the motion, within one count.
            let truth = motion.reading(at: Double(i) / rate)
            assertClose(s.accel, truth.accel, accelLSB, "accel vs motion \(i)", file: file, line: line)
            assertClose(s.gyro, truth.gyro, gyroLSB, "gyro vs motion \(i)", file: file, line: line)
        }
    }

    func testCombinedDeviceWithOwnTrigger() throws {
        let d = FakeIIODevice.mpu6050()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 60))
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "never streaming: \(r.statuses)")
        XCTAssertEqual(streaming.device, "mpu6050 (iio:device0)")
        XCTAssertEqual(streaming.rateHz, 50, "60 is not in 10 20 50 100 200 500: nearest is 50")
        XCTAssertEqual(streaming.hasGyroscope, true)
        XCTAssertNil(streaming.rateWindow, "a scan per chip sample: the estimator's default holds")
        XCTAssertTrue(streaming.message.contains("timestamps CLOCK_MONOTONIC"), streaming.message)
        XCTAssertEqual(s.timestampClock(d), "monotonic", "set before the buffer was enabled")

        let writer = try ScanWriter(scenario: s, device: d)
        // What libiio wrote in sysfs on the source's behalf.
        for ch in ["accel_x", "accel_y", "accel_z", "anglvel_x", "anglvel_y", "anglvel_z", "timestamp"] {
            XCTAssertEqual(s.attribute(d, "scan_elements/in_\(ch)_en"), "1", ch)
        }
        XCTAssertEqual(s.attribute(d, "scan_elements/in_temp_en"), "0", "unused channel stays off")
        XCTAssertEqual(s.attribute(d, "buffer/enable"), "1")
        // libiio asks the kernel for 4 blocks of the buffer size; at 60 Hz one scan per buffer.
        XCTAssertEqual(s.attribute(d, "buffer/length"), "4")
        XCTAssertEqual(s.attribute(d, "sampling_frequency"), "50")
        XCTAssertEqual(s.attribute(d, "buffer0/enable"), "1", "buffer0/ is the same attribute")
        XCTAssertEqual(s.attribute(d, "trigger/current_trigger"), "mpu6050-dev0")
        // Kernel layout: 3 accel + temp skipped + 3 gyro = 6×2 bytes, padded to 16, then s64.
        XCTAssertEqual(writer.scanBytes, 24)
        XCTAssertEqual(writer.slots.map(\.offset), [0, 2, 4, 6, 8, 10, 16])

        let motion = Motion.staticTilt(roll: 0.3, pitch: -0.2)
        let (scans, expected) = scans(d, motion, count: 40, rate: 60)
        try writer.write(scans)
        XCTAssertTrue(r.wait { r.samples.count >= 40 }, "got \(r.samples.count) samples")
        assertSamples(r.samples, expected, motion, rate: 60, accelLSB: 0.000598, gyroLSB: 0.00107)

        r.finish()
        XCTAssertEqual(s.attribute(d, "buffer/enable"), "0", "buffer disabled on stop")
    }

    func testSplitDevicesNearestRateAndPairing() throws {
        let pair = FakeIIODevice.lsm6dsxPair()
        let (s, r) = try start(pair, .init(device: "auto", rateHz: 60))
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "never streaming: \(r.statuses)")
        XCTAssertEqual(streaming.device, "lsm6ds3_accel (iio:device0) + lsm6ds3_gyro (iio:device1)")
        XCTAssertEqual(streaming.rateHz, 52, "60 Hz is not offered: nearest is 52")
        let (a, g) = (pair[0], pair[1])
        let accelWriter = try ScanWriter(scenario: s, device: a)
        let gyroWriter = try ScanWriter(scenario: s, device: g)
        for d in pair {
            XCTAssertEqual(s.attribute(d, "sampling_frequency"), "52.000")
            XCTAssertEqual(s.attribute(d, "buffer/enable"), "1")
            XCTAssertNil(s.attribute(d, "trigger/current_trigger"), "FIFO-driven: no trigger")
        }
        XCTAssertEqual(accelWriter.scanBytes, 16)

        let rate = 52.0
        let motion = Motion.constantYaw(rate: 0.5)
        var accelScans: [ScanWriter.Scan] = [], gyroScans: [ScanWriter.Scan] = []
        var expected: [IMUSample] = []
        for i in 0..<30 {
            let t = 7_000_000_000 + Int64(Double(i) * 1e9 / rate)
            let truth = motion.reading(at: Double(i) / rate)
            let ar = a.rawCounts(truth.accel, group: a.accel!), gr = g.rawCounts(truth.gyro, group: g.gyro!)
            // Gyro stamped 0.3 ms after accel (separate sensors), and one gyro scan is lost.
            accelScans.append(ScanWriter.scan(t: t, accel: ar))
            if i != 10 { gyroScans.append(ScanWriter.scan(t: t + 300_000, gyro: gr)) }
            if i != 10 {
                expected.append(
                    IMUSample(t: t, accel: a.decoded(ar, group: a.accel!), gyro: g.decoded(gr, group: g.gyro!)))
            }
        }
        // The gyro stream arrives first: the source must wait for accel partners.
        try gyroWriter.write(Array(gyroScans[..<20]))
        try accelWriter.write(accelScans)
        try gyroWriter.write(Array(gyroScans[20...]))
        XCTAssertTrue(r.wait { r.samples.count >= expected.count }, "got \(r.samples.count) of \(expected.count)")
        let got = r.samples
        XCTAssertEqual(got.count, expected.count)
        for (sample, e) in zip(got, expected) {
            XCTAssertEqual(sample.t, e.t)
            assertClose(sample.accel, e.accel, 1e-9)
            assertClose(sample.gyro, e.gyro, 1e-9)
        }
    }

    func testNamedSplitDevices() throws {
        let pair = FakeIIODevice.lsm6dsxPair(accelNumber: 3, gyroNumber: 2)
        let (_, r) = try start(pair, .init(device: "lsm6ds3_accel+lsm6ds3_gyro", rateHz: 100))
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertEqual(streaming.device, "lsm6ds3_accel (iio:device3) + lsm6ds3_gyro (iio:device2)")
        XCTAssertEqual(streaming.rateHz, 104)
    }

    func testPolledFallback() throws {
        let d = FakeIIODevice.polledOnly()
        let (s, r) = try start([d], .init(device: "bmi160", rateHz: 60))
        let accelRaw: [Int64] = [100, -200, 16400], gyroRaw: [Int64] = [-5, 7, 1000]
        try s.setRaw(d, d.accel!, accelRaw)
        try s.setRaw(d, d.gyro!, gyroRaw)
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertTrue(streaming.message.contains("polled"), streaming.message)
        // Polled at the rate asked; the chip at the lowest offered rate above it (of 25 50 100 200),
        // so no poll repeats a value.
        XCTAssertEqual(streaming.rateHz, 60)
        XCTAssertEqual(s.attribute(d, "in_accel_sampling_frequency"), "100")
        XCTAssertEqual(s.attribute(d, "in_anglvel_sampling_frequency"), "100")
        // Each gyro reading is the chip's latest 100 Hz sample, not a mean over the 60 Hz poll's
        // period: the estimator is told so.
        XCTAssertEqual(try XCTUnwrap(streaming.rateWindow), 0.6, accuracy: 1e-9)

        let wanted = IMUSample(
            t: 0, accel: d.decoded(accelRaw, group: d.accel!), gyro: d.decoded(gyroRaw, group: d.gyro!))
        // The offset applies: (raw - 12) × scale.
        XCTAssertEqual(wanted.accel.x, (100 - 12) * 0.000598, accuracy: 1e-12)
        XCTAssertTrue(
            r.wait { r.samples.filter { $0.accel == wanted.accel && $0.gyro == wanted.gyro }.count >= 10 },
            "samples: \(r.samples.suffix(3))")
        let t = r.samples.map(\.t)
        XCTAssertEqual(t, t.sorted(), "CLOCK_MONOTONIC timestamps increase")
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowNs = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        XCTAssertLessThan(abs(nowNs - t.last!), 2_000_000_000, "timestamps are on CLOCK_MONOTONIC")
        let dts = zip(t.dropFirst(), t).map { $0 - $1 }.sorted()
        let median = dts[dts.count / 2]
        XCTAssertTrue((10_000_000...40_000_000).contains(median), "polled at ~60 Hz, median dt \(median) ns")

        // New raw values are picked up: it really polls.
        try s.setRaw(d, d.accel!, [0, 0, -16400])
        let flipped = d.decoded([0, 0, -16400], group: d.accel!)
        XCTAssertTrue(r.wait { r.samples.last?.accel == flipped }, "polling did not see the new value")
    }

    func testPolledFasterThanTheChipOffersIsPacedAtItsTopRate() throws {
        // Asked 300 Hz of a chip that offers 25…200: polling faster than its data would only repeat
        // values, so it is read at 200 and says so.
        let d = FakeIIODevice.polledOnly()
        let (s, r) = try start([d], .init(device: "bmi160", rateHz: 300))
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertEqual(streaming.rateHz, 200)
        XCTAssertEqual(s.attribute(d, "in_accel_sampling_frequency"), "200")
        XCTAssertEqual(streaming.rateWindow, 1, "read at the chip's own rate: a reading spans the period")
    }

    func testBigEndian32WithShiftOffsetAndMountMatrix() throws {
        // 90° about z plus a flip of z: a proper non-identity mount matrix (det = +1 with both).
        let mount = Matrix3(Vector3(0, 1, 0), Vector3(1, 0, 0), Vector3(0, 0, -1))
        let d = FakeIIODevice.bigEndian32(mountMatrix: mount)
        let (s, r) = try start([d], .init(device: "auto", rateHz: 60))
        XCTAssertNotNil(r.waitForStatus(.streaming), "\(r.statuses)")
        let writer = try ScanWriter(scenario: s, device: d)
        XCTAssertEqual(s.attribute(d, "sampling_frequency"), "60", "no _available list: exact rate written")
        XCTAssertEqual(writer.scanBytes, 32)
        XCTAssertEqual(writer.slots.map(\.offset), [0, 4, 8, 12, 16, 20, 24])

        let motion = Motion(start: Quaternion(roll: 2.5, pitch: 0.4, yaw: 0), bodyRate: Vector3(-1.5, 0.7, 2.0))
        let (scans, expected) = scans(d, motion, count: 25, rate: 60)
        // Negative 20-bit values must sign-extend: this motion has some.
        XCTAssertTrue(scans.contains { s in ["accel_x", "accel_y", "accel_z"].contains { (s[$0] ?? 0) < -1000 } })
        try writer.write(scans)
        XCTAssertTrue(r.wait { r.samples.count >= 25 })
        assertSamples(r.samples, expected, motion, rate: 60, accelLSB: 0.0000374 * 1.8, gyroLSB: 0.000000266 * 1.8)
    }

    func testDeviceMountMatrixAndOverride() throws {
        let mount = Matrix3(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1))
        let d = FakeIIODevice.mpu6050(mountMatrix: mount)
        let raw: [Int64] = [1000, 2000, 15000]
        let sensorFrame = Vector3(1000, 2000, 15000) * 0.000598

        // The device's in_accel_mount_matrix applies...
        var (s, r) = try start([d], .init(device: "mpu6050", rateHz: 60))
        var writer = try ScanWriter(scenario: s, device: d)
        try writer.write([ScanWriter.scan(t: 1, accel: raw, gyro: [0, 0, 0])])
        XCTAssertTrue(r.wait { r.samples.count == 1 })
        assertClose(r.samples[0].accel, mount * sensorFrame, 1e-9)
        assertClose(r.samples[0].accel, Vector3(-2000, 1000, 15000) * 0.000598, 1e-9)
        r.finish()
        writer.close()
        scenario?.remove()

        // ...unless the config overrides it.
        (s, r) = try start([d], .init(device: "mpu6050", rateHz: 60, mountMatrix: .identity))
        writer = try ScanWriter(scenario: s, device: d)
        try writer.write([ScanWriter.scan(t: 2, accel: raw, gyro: [0, 0, 0])])
        XCTAssertTrue(r.wait { r.samples.count == 1 })
        assertClose(r.samples[0].accel, sensorFrame, 1e-9)
    }

    func testVanishRetryAndResume() throws {
        let d = FakeIIODevice.mpu6050()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 60))
        XCTAssertNotNil(r.waitForStatus(.streaming))
        var writer = try ScanWriter(scenario: s, device: d)
        let motion = Motion.staticTilt(roll: 0.1, pitch: 0.2)
        try writer.write(scans(d, motion, count: 10, rate: 60).scans)
        XCTAssertTrue(r.wait { r.samples.count >= 10 })

        s.vanish(d)
        writer.close()
        let retrying = try XCTUnwrap(r.waitForStatus(.retrying), "vanish not noticed: \(r.statuses)")
        XCTAssertTrue(
            retrying.message.contains("vanished") || retrying.message.contains("no IIO device"),
            retrying.message)
        XCTAssertGreaterThan(retrying.retryIn ?? 0, 0)
        // While it is gone the source keeps retrying with backoff (it neither exits nor spins).
        XCTAssertNotNil(r.waitForStatus(.retrying, count: 2, timeout: 5), "\(r.statuses)")
        XCTAssertFalse(r.isFinished)
        let retriesWhileGone = r.statuses.filter { $0.state == .retrying }.count
        XCTAssertLessThan(retriesWhileGone, 6, "backoff: few retries in the first seconds")

        try s.restore(d)
        XCTAssertNotNil(r.waitForStatus(.streaming, count: 2, timeout: 15), "did not resume: \(r.statuses)")
        writer = try ScanWriter(scenario: s, device: d)
        XCTAssertEqual(s.attribute(d, "trigger/current_trigger"), "mpu6050-dev0", "trigger attached again")
        let later = scans(d, motion, count: 10, rate: 60, t0: 9_000_000_000)
        try writer.write(later.scans)
        XCTAssertTrue(r.wait { r.samples.count >= 20 }, "got \(r.samples.count)")
        XCTAssertEqual(Array(r.samples.suffix(10)).map(\.t), later.expected.map(\.t))
    }

    func testPolledDeviceVanishAndResume() throws {
        let d = FakeIIODevice.polledOnly()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 100))
        XCTAssertNotNil(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertTrue(r.wait { r.samples.count >= 5 })
        s.vanish(d)
        let retrying = try XCTUnwrap(r.waitForStatus(.retrying), "\(r.statuses)")
        XCTAssertTrue(
            retrying.message.contains("No such file") || retrying.message.contains("vanished")
                || retrying.message.contains("no IIO device"), retrying.message)
        try s.restore(d)
        try s.setRaw(d, d.accel!, [1, 2, 3])
        XCTAssertNotNil(r.waitForStatus(.streaming, count: 2, timeout: 15), "\(r.statuses)")
        let want = d.decoded([1, 2, 3], group: d.accel!)
        XCTAssertTrue(r.wait { r.samples.last?.accel == want }, "polling resumed")
    }

    func testMissingDeviceIsReportedAndFoundLater() throws {
        try requireFakeHardware()
        let s = try FakeScenario([])
        scenario = s
        let r = SourceRun(IIOSource(configuration: .init(device: "mpu6050", rateHz: 60)))
        run = r
        XCTAssertEqual(r.waitForStatus(.starting)?.message, "looking for IIO device \"mpu6050\" at 60 Hz")
        let retrying = try XCTUnwrap(r.waitForStatus(.retrying))
        XCTAssertTrue(retrying.message.contains("no IIO device named \"mpu6050\""), retrying.message)

        let d = FakeIIODevice.mpu6050(number: 4)
        let full = try FakeScenario([d])
        scenario = full
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming, timeout: 15), "\(r.statuses)")
        XCTAssertEqual(streaming.device, "mpu6050 (iio:device4)")
    }

    func testAccelHalfAloneIsUsedForTiltOnly() throws {
        let pair = FakeIIODevice.lsm6dsxPair()
        let (s, r) = try start(pair, .init(device: "lsm6ds3_accel", rateHz: 60))
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertEqual(streaming.device, "lsm6ds3_accel (iio:device0)")
        XCTAssertEqual(streaming.hasGyroscope, false)
        XCTAssertTrue(streaming.message.contains(SourceStatus.noGyroscopeNote), streaming.message)
        let writer = try ScanWriter(scenario: s, device: pair[0])
        try writer.write([ScanWriter.scan(t: 1_000_000_000, accel: [0, 0, 16393])])
        XCTAssertTrue(r.wait { !r.samples.isEmpty })
        XCTAssertEqual(r.samples.first?.hasGyro, false)
        XCTAssertEqual(r.samples.first?.accel.z ?? 0, 16393 * 0.000598205, accuracy: 1e-9)
    }
}
