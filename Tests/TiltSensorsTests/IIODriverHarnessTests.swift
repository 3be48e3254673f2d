// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TiltCore
import TiltSensors
import XCTest

/// IIOSource on the driver-true fake scenarios (`FakeDrivers.swift`): what real kernels do that
/// the simple fakes never did — no trigger, no current_timestamp_clock, no gyroscope, 32-bit
/// storage with 16 real bits, a buffer that never fills. Needs `scripts/fakehw-ns`.
final class IIODriverHarnessTests: XCTestCase {
    private var scenario: FakeScenario?
    private var run: SourceRun?

    override func tearDown() {
        run?.finish()
        run = nil
        scenario?.remove()
        scenario = nil
        super.tearDown()
    }

    private func start(
        _ devices: [FakeIIODevice], _ config: IIOSource.Settings
    ) throws -> (FakeScenario, SourceRun) {
        try requireFakeHardware()
        let s = try FakeScenario(devices)
        scenario = s
        let r = SourceRun(IIOSource(configuration: config))
        run = r
        return (s, r)
    }

    func testBMI160WithoutTriggerIsPolledAtOnceInAutoMode() throws {
        let d = FakeIIODevice.bmi160WithoutInterrupt()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 100))
        try s.setRaw(d, d.accel!, [0, 0, 16384])
        try s.setRaw(d, d.gyro!, [0, 0, 0])
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertTrue(
            streaming.message.hasPrefix("polled: bmi160 (iio:device0) has an empty current_trigger"), streaming.message)
        XCTAssertEqual(s.attribute(d, "buffer/enable"), "0", "no buffer left enabled")
        XCTAssertTrue(r.wait { r.samples.count >= 20 }, "\(r.samples.count) samples")
        XCTAssertEqual(r.samples.last?.accel.z ?? 0, 16384 * 0.000598, accuracy: 1e-9)
    }

    func testBMI160WithoutTriggerInBufferedModeSaysWhy() throws {
        let d = FakeIIODevice.bmi160WithoutInterrupt()
        let (_, r) = try start([d], .init(device: "auto", rateHz: 100, mode: .buffered))
        let retrying = try XCTUnwrap(r.waitForStatus(.retrying), "\(r.statuses)")
        XCTAssertTrue(retrying.message.contains("no trigger of its own"), retrying.message)
        XCTAssertTrue(retrying.message.contains("interrupt line"), retrying.message)
    }

    func testBMI160GyroFirstScanOrderDecodes() throws {
        // The same chip with its interrupt: the driver makes "bmi160-dev0".
        var d = FakeIIODevice.bmi160WithoutInterrupt()
        d.ownTrigger = "bmi160-dev0"
        let (s, r) = try start([d], .init(device: "auto", rateHz: 100))
        _ = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        let writer = try ScanWriter(scenario: s, device: d)
        XCTAssertEqual(
            writer.slots.map(\.id),
            ["anglvel_x", "anglvel_y", "anglvel_z", "accel_x", "accel_y", "accel_z", "timestamp"])
        try writer.write([ScanWriter.scan(t: 2_000_000_000, accel: [100, -200, 16000], gyro: [7, -8, 9])])
        XCTAssertTrue(r.wait { !r.samples.isEmpty })
        let got = try XCTUnwrap(r.samples.first)
        assertClose(got.accel, Vector3(100, -200, 16000) * 0.000598, 1e-9)
        assertClose(got.gyro, Vector3(7, -8, 9) * 0.001065, 1e-9)
    }

    func testSilentBufferFallsBackToPollingWithinASecondInAutoMode() throws {
        let d = FakeIIODevice.mpu6050()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 50))
        try s.setRaw(d, d.accel!, [0, 0, 16384])
        let buffered = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertTrue(buffered.message.hasPrefix("buffered"), buffered.message)
        // Nobody writes scans: the trigger "fires" never.
        let polled = try XCTUnwrap(r.waitForStatus(.streaming, count: 2, timeout: 3), "\(r.statuses)")
        XCTAssertTrue(polled.message.hasPrefix("polled: the buffer delivered nothing in 1 s"), polled.message)
        XCTAssertEqual(s.attribute(d, "buffer/enable"), "0")
        XCTAssertTrue(r.wait { r.samples.count >= 10 })
        XCTAssertEqual(r.samples.last?.accel.z ?? 0, 16384 * 0.000598, accuracy: 1e-9)
    }

    func testSilentBufferInBufferedModeIsNoData() throws {
        let d = FakeIIODevice.mpu6050()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 50, mode: .buffered))
        let writer = try ScanWriter(scenario: s, device: d)
        let noData = try XCTUnwrap(r.waitForStatus(.noData, timeout: 3), "\(r.statuses)")
        XCTAssertTrue(noData.message.hasPrefix("no data in the 1 s since the buffer was enabled"), noData.message)
        try writer.write([ScanWriter.scan(t: 1_000_000_000, accel: [0, 0, 100], gyro: [0, 0, 0])])
        let back = try XCTUnwrap(r.waitForStatus(.streaming, count: 2), "\(r.statuses)")
        XCTAssertTrue(back.message.hasPrefix("buffered"), back.message)
    }

    func testPolledModeIsForced() throws {
        let d = FakeIIODevice.mpu6050()
        let (s, r) = try start([d], .init(device: "mpu6050", rateHz: 50, mode: .polled))
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertEqual(streaming.message, "polled ([imu] mode = \"polled\"); timestamps CLOCK_MONOTONIC at each read")
        XCTAssertEqual(s.attribute(d, "buffer/enable"), "0")
    }

    func testKernelWithoutTimestampClockIsSaidInStatus() throws {
        let d = FakeIIODevice.mpu6050Linux49()
        let (_, r) = try start([d], .init(device: "auto", rateHz: 50))
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertTrue(streaming.message.contains("no current_timestamp_clock"), streaming.message)
    }

    func testUnwritableTimestampClockIsSaidInStatus() throws {
        try requireFakeHardware()
        let d = FakeIIODevice.mpu6050()
        let s = try FakeScenario([d])
        scenario = s
        try s.makeReadOnly(d, "current_timestamp_clock")
        let r = SourceRun(IIOSource(configuration: .init(device: "auto", rateHz: 50)))
        run = r
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertTrue(
            streaming.message.contains("timestamps CLOCK_REALTIME: cannot set current_timestamp_clock"),
            streaming.message)
        XCTAssertTrue(streaming.message.contains("steps are smoothed"), streaming.message)
        XCTAssertEqual(s.timestampClock(d), "realtime")
    }

    func testRatesListedOnceForTheDeviceAreTheOnlyRatesWritten() throws {
        // Linux 6.1's adxl345 (and fxas21002c, bmc150_accel, bmg160, mma8452): the rate per type,
        // the list for the device. Polled at 60, the chip goes to the lowest listed rate above.
        let d = FakeIIODevice.adxl345Linux61()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 60))
        try s.setRaw(d, d.accel!, [-3, 5, 256])
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertEqual(s.attribute(d, "in_accel_sampling_frequency"), "100", "a listed rate, not the 60 asked")
        XCTAssertEqual(streaming.rateHz, 60)
    }

    func testADXL345IsPolledAccelOnly() throws {
        let d = FakeIIODevice.adxl345()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 50))
        try s.setRaw(d, d.accel!, [-3, 5, 256])
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertEqual(streaming.device, "adxl345 (iio:device0)")
        XCTAssertEqual(streaming.hasGyroscope, false)
        XCTAssertNil(streaming.rateWindow, "no gyro readings to interpolate")
        XCTAssertTrue(streaming.message.hasPrefix("polled (no buffer)"), streaming.message)
        XCTAssertTrue(streaming.message.hasSuffix(SourceStatus.noGyroscopeNote), streaming.message)
        XCTAssertEqual(s.attribute(d, "in_accel_sampling_frequency"), "50", "no list: the rate is written as asked")
        XCTAssertTrue(r.wait { r.samples.count >= 5 && r.samples.last!.accel.z > 9 })
        let last = try XCTUnwrap(r.samples.last)
        XCTAssertFalse(last.hasGyro)
        assertClose(last.accel, Vector3(-3, 5, 256) * 0.0383, 1e-9)
    }

    func testHIDAccel3DWith16BitsIn32() throws {
        let d = FakeIIODevice.hidAccel3D()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 10))
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertTrue(streaming.message.contains("trigger accel_3d-dev0"), streaming.message)
        XCTAssertEqual(streaming.hasGyroscope, false)
        let writer = try ScanWriter(scenario: s, device: d)
        XCTAssertEqual(s.attribute(d, "scan_elements/in_accel_x_type"), "le:s16/32>>0")
        XCTAssertEqual(writer.scanBytes, 24, "3 × 4 bytes, padded to 16, then the s64 timestamp")
        try writer.write([ScanWriter.scan(t: 3_000_000_000, accel: [-1000, 32767, -32768])])
        XCTAssertTrue(r.wait { !r.samples.isEmpty })
        assertClose(r.samples[0].accel, Vector3(-1000, 32767, -32768) * 0.00980665, 1e-9)
    }

    func testATriggerNamedAfterTheHIDConventionIsTheDevicesOwn() throws {
        // iio-sensor-proxy's test device: "IIO Test Accelerometer" beside trigger "accel_3d-dev0".
        let d = FakeIIODevice.iioSensorProxyTestAccel()
        let (s, r) = try start([d], .init(device: "auto", rateHz: 10))
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertTrue(streaming.message.hasPrefix("buffered"), streaming.message)
        XCTAssertTrue(streaming.message.contains("trigger accel_3d-dev0"), streaming.message)
        XCTAssertEqual(s.attribute(d, "trigger/current_trigger"), "accel_3d-dev0")
        let writer = try ScanWriter(scenario: s, device: d)
        try writer.write([ScanWriter.scan(t: 3_000_000_000, accel: [0, 0, 1000])])
        XCTAssertTrue(r.wait { !r.samples.isEmpty })
        XCTAssertEqual(r.samples[0].accel.z, 1000 * 0.00980665, accuracy: 1e-9)
    }

    func testSplitDevicesWithoutBufferArePolledTogether() throws {
        // An LSM6DS3 probed without its interrupt has no buffer: both halves are polled at the
        // asked rate into whole samples, the chip at the lowest rate it offers above that. (What the real driver's one-shot
        // reads deliver is measured by scripts/kernel-test, not timed here.)
        let pair = FakeIIODevice.lsm6dsxPairWithoutInterrupt()
        let (s, r) = try start(pair, .init(device: "auto", rateHz: 60))
        try s.setRaw(pair[0], pair[0].accel!, [0, 0, 16393])
        try s.setRaw(pair[1], pair[1].gyro!, [0, 0, 100])
        let streaming = try XCTUnwrap(r.waitForStatus(.streaming), "\(r.statuses)")
        XCTAssertTrue(streaming.message.hasPrefix("polled (no buffer)"), streaming.message)
        XCTAssertEqual(streaming.rateHz, 60)
        XCTAssertEqual(s.attribute(pair[0], "sampling_frequency"), "104.000")
        let gyroChip = try XCTUnwrap(s.attribute(pair[1], "sampling_frequency").flatMap { Double($0) })
        XCTAssertEqual(try XCTUnwrap(streaming.rateWindow), 60 / gyroChip, accuracy: 1e-9, "the gyro chip's rate")
        XCTAssertTrue(r.wait { r.samples.count >= 20 })
        let last = try XCTUnwrap(r.samples.last)
        XCTAssertTrue(last.hasGyro)
        XCTAssertEqual(last.accel.z, 16393 * 0.000598205, accuracy: 1e-9)
        XCTAssertEqual(last.gyro.z, 100 * 0.000152716, accuracy: 1e-12)
    }
}
