// SPDX-License-Identifier: Apache-2.0
import TiltSensors
import XCTest

/// `MagnetometerSelection`: which device is the IMU's magnetometer, from what sysfs says.
final class MagnetometerSelectionTests: XCTestCase {
    private typealias D = MagnetometerSelection.Device

    private func dev(_ n: Int, _ name: String, mag: Bool, label: String? = nil, physical: String? = nil) -> D {
        D(id: "iio:device\(n)", name: name, number: n, label: label, physical: physical, hasMagnetometer: mag)
    }

    private func chosen(_ spec: String, imu: [Int], _ devices: [D]) -> MagnetometerSelection.Choice? {
        try? MagnetometerSelection.choose(spec, imu: imu.map { "iio:device\($0)" }, devices: devices).get()
    }

    func testOnTheIMUDeviceFirst() {
        let c = chosen("auto", imu: [0], [dev(0, "mpu9250", mag: true), dev(1, "ak8975", mag: true)])
        XCTAssertEqual(c?.device.name, "mpu9250")
        XCTAssertEqual(c?.onIMU, true)
    }

    func testSameChipThenAuxiliaryBusThenLabelThenBusThenName() {
        let bus = "/sys/devices/platform/soc/fe804000.i2c/i2c-1"
        let imu = dev(0, "lsm6dsm_accel", mag: false, label: "head", physical: "\(bus)/1-006a")
        let gyro = dev(1, "lsm6dsm_gyro", mag: false, label: "head", physical: "\(bus)/1-006a")
        let sameChip = dev(5, "lsm6dsm_magn_sh", mag: true, physical: "\(bus)/1-006a")
        let aux = dev(6, "ak8963", mag: true, physical: "\(bus)/1-006a/i2c-3/3-000c")
        let labelled = dev(7, "lis3mdl", mag: true, label: "head", physical: "/sys/devices/spi0.1")
        let onBus = dev(8, "hmc5883l", mag: true, physical: "\(bus)/1-001e")
        let named = dev(9, "lsm6dsm_x", mag: true)
        let other = dev(2, "bmm150", mag: true, physical: "/sys/devices/platform/i2c-4/4-0010")
        var all = [imu, gyro, other, named, onBus, labelled, aux, sameChip]
        for want in ["lsm6dsm_magn_sh", "ak8963", "lis3mdl", "hmc5883l", "lsm6dsm_x"] {
            let c = chosen("auto", imu: [0, 1], all)
            XCTAssertEqual(c?.device.name, want, "\(all.map(\.name))")
            XCTAssertEqual(c?.onIMU, false)
            all.removeAll { $0.name == want }
        }
        // Nothing ties the last one to the IMU, but it is the only magnetometer.
        XCTAssertEqual(chosen("auto", imu: [0, 1], all)?.reason, "the only magnetometer")
    }

    func testAChipOnTheIMUsMuxAdapterIsItsOwn() {
        // A GY-87 as inv_mpu6050 lays it out: the MPU-6050 at 0-0068 offers its auxiliary bus as
        // the mux adapter i2c-1 ("i2c-0-mux (chan_id 0)"), which hangs off i2c-0, not off the
        // MPU-6050, and whose mux_device link points at the MPU-6050; the HMC5883L sits on it.
        let imu = dev(0, "mpu6050", mag: false, physical: "/sys/devices/i2c-0/0-0068")
        let hmc = D(
            id: "iio:device1", name: "hmc5883l", number: 1, physical: "/sys/devices/i2c-0/i2c-1/1-001e",
            hasMagnetometer: true, muxOwner: "/sys/devices/i2c-0/0-0068")
        // Another magnetometer on the main bus is only "on the same bus": the mux's chip wins.
        let onBus = dev(2, "lis3mdl", mag: true, physical: "/sys/devices/i2c-0/0-001c")
        let c = chosen("auto", imu: [0], [imu, onBus, hmc])
        XCTAssertEqual(c?.device.name, "hmc5883l")
        XCTAssertEqual(c?.reason, "behind mpu6050 (iio:device0)'s auxiliary bus (its I²C mux)")
        // Another device's mux ties nothing.
        var elsewhere = hmc
        elsewhere.muxOwner = "/sys/devices/i2c-0/0-0069"
        XCTAssertEqual(chosen("auto", imu: [0], [imu, elsewhere])?.reason, "the only magnetometer")
    }

    func testSeveralUntiedAreAmbiguousAndNoneIsQuiet() {
        let devices = [dev(0, "mpu6050", mag: false), dev(1, "ak8975", mag: true), dev(2, "bmm150", mag: true)]
        guard
            case .failure(.ambiguous(let names)) = MagnetometerSelection.choose(
                "auto", imu: ["iio:device0"], devices: devices)
        else { return XCTFail("expected ambiguous") }
        XCTAssertEqual(names, ["ak8975 (iio:device1)", "bmm150 (iio:device2)"])
        XCTAssertEqual(
            MagnetometerSelection.choose("auto", imu: ["iio:device0"], devices: [devices[0]]), .failure(.noneFound))
    }

    func testNamedByNameOrIdAndRefusals() {
        let devices = [dev(0, "mpu6050", mag: false), dev(1, "ak8975", mag: true), dev(2, "bmm150", mag: true)]
        XCTAssertEqual(chosen("bmm150", imu: [0], devices)?.device.id, "iio:device2")
        XCTAssertEqual(chosen("iio:device1", imu: [0], devices)?.device.name, "ak8975")
        XCTAssertEqual(
            MagnetometerSelection.choose("mpu6050", imu: ["iio:device0"], devices: devices),
            .failure(.notAMagnetometer("mpu6050 (iio:device0)")))
        let missing = MagnetometerSelection.choose("lis3mdl", imu: ["iio:device0"], devices: devices)
        XCTAssertEqual(
            "\(try XCTUnwrap(missing.failureValue))",
            "no IIO device named \"lis3mdl\" (present: mpu6050 (iio:device0), ak8975 (iio:device1), bmm150 (iio:device2))"
        )
    }
}

extension Result {
    fileprivate var failureValue: Failure? {
        if case .failure(let f) = self { f } else { nil }
    }
}
