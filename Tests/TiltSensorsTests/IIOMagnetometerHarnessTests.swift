// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TiltCore
import XCTest

@testable import TiltSensors

/// The magnetometer read beside the IMU by `IIOSource` (`[imu] magnetometer`), on fake devices
/// laid out as ak8975, st_magn (LSM9DS1) and inv_mpu6050 (MPU-9250) lay them out.
final class IIOMagnetometerHarnessTests: XCTestCase {
    private var scenario: FakeScenario?

    override func setUpWithError() throws { try requireFakeHardware() }

    override func tearDown() {
        scenario?.remove()
        scenario = nil
        super.tearDown()
    }

    private func start(_ devices: [FakeIIODevice], _ settings: IIOSource.Settings) throws -> (FakeScenario, SourceRun) {
        let s = try FakeScenario(devices)
        scenario = s
        return (s, SourceRun(IIOSource(configuration: settings)))
    }

    private func magStatuses(_ run: SourceRun) -> [SourceStatus] {
        run.statuses.filter { $0.source == "magnetometer" }
    }

    private func assertField(
        _ got: Vector3, _ want: Vector3, accuracy: Double = 1e-9, file: StaticString = #filePath, line: UInt = #line
    ) {
        for i in 0..<3 { XCTAssertEqual(got[i], want[i], accuracy: accuracy, "axis \(i)", file: file, line: line) }
    }

    func testSeparateAK8975IsPairedScaledPerAxisAndMounted() throws {
        let mount = Matrix3(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1))
        let imu = FakeIIODevice.polledOnly(number: 0), mag = FakeIIODevice.ak8975(number: 1, mountMatrix: mount)
        let (s, run) = try start([imu, mag], .init(device: "auto", rateHz: 50))
        let raw = mag.magnRawCounts(Vector3(20, 5, -40))
        try s.setRaw(mag, mag.magn!, raw)
        let want = mag.magnDecoded(raw)
        // Per-axis scales (0.3047, 0.3012, 0.2988 µT per count) and the device's own matrix.
        XCTAssertEqual(want.x, 20, accuracy: 0.2)
        XCTAssertTrue(
            run.wait { run.fields.filter { ($0.field - want).norm < 1e-9 }.count >= 5 }, "\(run.fields.suffix(3))")
        let st = try XCTUnwrap(magStatuses(run).first { $0.state == .streaming })
        XCTAssertEqual(st.device, "ak8975 (iio:device1)")
        // No sampling_frequency (one-shot reads): the default, capped by the IMU's 50 Hz.
        XCTAssertEqual(st.rateHz, 50)
        XCTAssertTrue(st.message.contains("the only magnetometer"), st.message)
        // Stamped on the IMU's clock (CLOCK_MONOTONIC), interleaved with its samples.
        XCTAssertTrue(run.wait { run.samples.count >= 10 })
        let f = run.fields, imuT = run.samples.map(\.t)
        XCTAssertTrue(f.last!.t > imuT.first! && f.first!.t < imuT.last!, "field times among the IMU's")
        XCTAssertEqual(f.map(\.t), f.map(\.t).sorted(), "field times increase")
        run.finish()
    }

    func testMPU9250MagnetometerOnTheIMUDeviceHasItsOwnMountMatrix() throws {
        let d = FakeIIODevice.mpu9250()
        let (s, run) = try start([d], .init(device: "auto", rateHz: 50, mode: .polled))
        let raw = d.magnRawCounts(Vector3(-12, 30, 25))
        try s.setRaw(d, d.magn!, raw)
        let want = d.magnDecoded(raw)
        XCTAssertEqual(want.y, 30, accuracy: 0.1)
        XCTAssertTrue(run.wait { run.fields.contains { ($0.field - want).norm < 1e-9 } }, "\(run.fields.suffix(3))")
        let st = try XCTUnwrap(magStatuses(run).first { $0.state == .streaming })
        XCTAssertEqual(st.device, "mpu9250 (iio:device0)")
        XCTAssertTrue(st.message.contains("on the IMU device"), st.message)
        // The shared sampling_frequency is the IMU's: read, not written, and capped at its rate.
        XCTAssertEqual(st.rateHz, 50)
        run.finish()
    }

    func testLSM9DS1PairsItsOwnMagnetometerAmongTwoAndSetsItsRate() throws {
        var devices = FakeIIODevice.lsm9ds1()
        devices.append(FakeIIODevice.ak8975(number: 3))
        let (s, run) = try start(devices, .init(device: "auto", rateHz: 50, mode: .polled))
        let mag = devices[2]
        try s.setField(mag, Vector3(10, 20, -30))
        let st = try XCTUnwrap(run.waitForStatus(.streaming) { $0.source == "magnetometer" })
        XCTAssertEqual(st.device, "lsm9ds1_magn (iio:device2)")
        XCTAssertTrue(st.message.contains("named like lsm9ds1_"), st.message)
        // Polled at the IMU's 50 Hz; the chip at the lowest offered rate at or above it (of
        // 0.625 … 40 80), so that each poll finds fresh data.
        XCTAssertEqual(st.rateHz, 50)
        XCTAssertEqual(s.attribute(mag, "sampling_frequency"), "80")
        XCTAssertTrue(st.message.hasPrefix("polled at 50 Hz (device set to 80 Hz)"), st.message)
        let want = mag.magnDecoded(mag.magnRawCounts(Vector3(10, 20, -30)))
        XCTAssertTrue(run.wait { run.fields.contains { ($0.field - want).norm < 1e-9 } })
        run.finish()
    }

    func testAMagnetometerSlowerThanTheIMUIsPolledAtItsTopRate() throws {
        // An IMU asked for 100 Hz: the LSM9DS1's magnetometer offers at most 80, so it is set to 80
        // and polled at 80 (polling faster would only repeat values).
        let devices = FakeIIODevice.lsm9ds1()
        let (s, run) = try start(devices, .init(device: "auto", rateHz: 100, mode: .polled))
        let st = try XCTUnwrap(run.waitForStatus(.streaming) { $0.source == "magnetometer" })
        XCTAssertEqual(st.rateHz, 80)
        XCTAssertEqual(s.attribute(devices[2], "sampling_frequency"), "80")
        // Quick reads (files): delivered at the polled rate, so no "reads deliver … of" note.
        XCTAssertFalse(st.message.contains("reads deliver"), st.message)
        run.finish()
    }

    func testAChipOnTheIMUsMuxAdapterIsPairedAsItsOwn() throws {
        // A GY-87 as inv_mpu6050 lays it out in sysfs: the MPU-6050 (0-0068) offers its auxiliary
        // bus as the mux adapter i2c-1, which hangs off i2c-0 and links back to the MPU-6050
        // (mux_device); a magnetometer sits on it, another on the main bus beside the MPU-6050.
        var imu = FakeIIODevice.mpu6050(number: 0)
        imu.physical = "i2c-0/0-0068"
        var aux = FakeIIODevice.ak8975(number: 1)
        aux.physical = "i2c-0/i2c-1/1-000c"
        var onBus = FakeIIODevice.lsm9ds1Magn(number: 2)
        onBus.physical = "i2c-0/0-001c"
        let s = try FakeScenario([imu, aux, onBus])
        scenario = s
        try s.addMux(adapter: "i2c-0/i2c-1", owner: "i2c-0/0-0068")
        let run = SourceRun(IIOSource(configuration: .init(device: "auto", rateHz: 50, mode: .polled)))
        let st = try XCTUnwrap(run.waitForStatus(.streaming) { $0.source == "magnetometer" })
        XCTAssertEqual(st.device, "ak8975 (iio:device1)")
        XCTAssertTrue(st.message.contains("behind mpu6050 (iio:device0)'s auxiliary bus (its I²C mux)"), st.message)
        run.finish()
    }

    func testMagnetometerVanishesAndReturnsWhileTheIMUStreams() throws {
        let imu = FakeIIODevice.polledOnly(number: 0), mag = FakeIIODevice.ak8975(number: 1)
        let (s, run) = try start([imu, mag], .init(device: "auto", rateHz: 50))
        XCTAssertNotNil(run.waitForStatus(.streaming) { $0.source == "magnetometer" })
        XCTAssertTrue(run.wait { run.fields.count >= 5 })
        s.vanish(mag)
        let lost = try XCTUnwrap(run.waitForStatus(.retrying) { $0.source == "magnetometer" })
        XCTAssertNotNil(lost.retryIn)
        // The IMU goes on meanwhile, and its estimator is not told to restart.
        let before = run.samples.count
        XCTAssertTrue(run.wait { run.samples.count >= before + 20 }, "IMU samples while the magnetometer is gone")
        XCTAssertFalse(run.statuses.contains { $0.source == "imu" && $0.state == .retrying })
        try s.restore(mag)
        XCTAssertTrue(run.wait(timeout: 10) { self.magStatuses(run).filter { $0.state == .streaming }.count >= 2 })
        let n = run.fields.count
        XCTAssertTrue(run.wait { run.fields.count >= n + 5 }, "fields resume")
        run.finish()
    }

    func testNoneReadsNoneAndAutoWithoutOneIsSilent() throws {
        for spec in ["none", "auto"] {
            var devices = [FakeIIODevice.polledOnly(number: 0)]
            if spec == "none" { devices.append(.ak8975(number: 1)) }
            let (_, run) = try start(devices, .init(device: "auto", rateHz: 50, magnetometer: spec))
            XCTAssertTrue(run.wait { run.samples.count >= 30 })
            XCTAssertTrue(run.fields.isEmpty, spec)
            XCTAssertTrue(magStatuses(run).isEmpty, "\(spec): \(magStatuses(run))")
            run.finish()
            scenario?.remove()
            scenario = nil
        }
    }

    func testANamedMagnetometerThatIsAbsentIsAStatusNotACrash() throws {
        let imu = FakeIIODevice.polledOnly(number: 0)
        let (s, run) = try start([imu], .init(device: "auto", rateHz: 50, magnetometer: "ak8975"))
        let st = try XCTUnwrap(run.waitForStatus(.retrying) { $0.source == "magnetometer" })
        XCTAssertTrue(st.message.contains("no IIO device named \"ak8975\""), st.message)
        XCTAssertTrue(run.wait { run.samples.count >= 20 }, "the IMU streams")
        // It is found once it appears (the backoff's first delays are short).
        let mag = FakeIIODevice.ak8975(number: 1)
        try s.restore(mag)  // installs a device the scenario did not start with
        defer { s.vanish(mag) }
        XCTAssertNotNil(run.waitForStatus(.streaming, timeout: 10) { $0.source == "magnetometer" })
        run.finish()
    }
}
