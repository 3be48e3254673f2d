import TiltSensors
import XCTest

/// `MagnetometerPairing`: which device is the IMU's magnetometer, from what sysfs says.
final class MagnetometerPairingTests: XCTestCase {
    private typealias D = MagnetometerPairing.Device

    private func dev(_ n: Int, _ name: String, mag: Bool, label: String? = nil, physical: String? = nil) -> D {
        D(id: "iio:device\(n)", name: name, number: n, label: label, physical: physical, hasMagnetometer: mag)
    }

    private func chosen(_ spec: String, imu: [Int], _ devices: [D]) -> MagnetometerPairing.Choice? {
        try? MagnetometerPairing.choose(spec, imu: imu.map { "iio:device\($0)" }, devices: devices).get()
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

    func testSeveralUntiedAreAmbiguousAndNoneIsQuiet() {
        let devices = [dev(0, "mpu6050", mag: false), dev(1, "ak8975", mag: true), dev(2, "bmm150", mag: true)]
        guard
            case .failure(.ambiguous(let names)) = MagnetometerPairing.choose(
                "auto", imu: ["iio:device0"], devices: devices)
        else { return XCTFail("expected ambiguous") }
        XCTAssertEqual(names, ["ak8975 (iio:device1)", "bmm150 (iio:device2)"])
        XCTAssertEqual(
            MagnetometerPairing.choose("auto", imu: ["iio:device0"], devices: [devices[0]]), .failure(.noneFound))
    }

    func testNamedByNameOrIdAndRefusals() {
        let devices = [dev(0, "mpu6050", mag: false), dev(1, "ak8975", mag: true), dev(2, "bmm150", mag: true)]
        XCTAssertEqual(chosen("bmm150", imu: [0], devices)?.device.id, "iio:device2")
        XCTAssertEqual(chosen("iio:device1", imu: [0], devices)?.device.name, "ak8975")
        XCTAssertEqual(
            MagnetometerPairing.choose("mpu6050", imu: ["iio:device0"], devices: devices),
            .failure(.notAMagnetometer("mpu6050 (iio:device0)")))
        let missing = MagnetometerPairing.choose("lis3mdl", imu: ["iio:device0"], devices: devices)
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
