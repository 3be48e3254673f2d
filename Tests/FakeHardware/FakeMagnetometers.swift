// SPDX-License-Identifier: Apache-2.0
import TiltCore

/// Fake magnetometers laid out as their kernel drivers lay them out (file names, scale text,
/// mount matrices), polled only: the fakes give them no buffer or scan elements (tiltd polls
/// magnetometers; the real ak8975 and st_magn drivers also have a triggered buffer).
extension FakeIIODevice {
    /// `drivers/iio/magnetometer/ak8975.c` (Linux 6.6), an AK8975 breakout: device "ak8975",
    /// `in_magn_{x,y,z}_raw` with per-axis `in_magn_{x,y,z}_scale` (the factory sensitivity
    /// adjustment makes each axis's own, IIO_VAL_INT_PLUS_NANO, gauss: ~0.3 µT per count),
    /// `in_mount_matrix` (IIO_SHARED_BY_DIR); no `sampling_frequency` (each raw read starts a
    /// one-shot measurement).
    public static func ak8975(number: Int = 1, mountMatrix: Matrix3? = nil) -> FakeIIODevice {
        var d = FakeIIODevice(
            number: number, name: "ak8975", accel: nil, gyro: nil, timestampIndex: nil, buffered: false,
            frequency: .none)
        var g = FakeChannelGroup(type: "magn", scale: "0.003000000", scanType: .le16, firstIndex: 0)
        g.axisScales = ["0.003046875", "0.003011718", "0.002988281"]
        d.magn = g
        d.inMountMatrix = mountMatrix ?? .identity
        d.timestampClock = "realtime"
        return d
    }

    /// `drivers/iio/magnetometer/st_magn_core.c` (Linux 6.6), the magnetometer of an LSM9DS1:
    /// device "lsm9ds1_magn", `in_magn_{x,y,z}_raw` with one `in_magn_scale` (±4 gauss:
    /// 0.000146 gauss per count) and `in_magn_scale_available`; a device-level
    /// `sampling_frequency` offering `0.625 1.25 2.5 5 10 20 40 80` (initially 10); `in_mount_matrix`.
    public static func lsm9ds1Magn(number: Int = 2, mountMatrix: Matrix3? = nil) -> FakeIIODevice {
        var d = FakeIIODevice(
            number: number, name: "lsm9ds1_magn", accel: nil, gyro: nil, timestampIndex: nil, buffered: false,
            frequency: .device(initial: "10", available: ["0.625", "1.25", "2.5", "5", "10", "20", "40", "80"]))
        d.magn = FakeChannelGroup(
            type: "magn", scale: "0.000146", scanType: .le16, firstIndex: 0,
            scaleAvailable: "0.000146 0.000292 0.000438 0.000584")
        d.inMountMatrix = mountMatrix ?? .identity
        d.timestampClock = "realtime"
        return d
    }

    /// An LSM9DS1 as three devices: `st_lsm6dsx` gives "lsm9ds1_accel" and "lsm9ds1_gyro" (laid out
    /// as `lsm6dsxPair`), `st_magn` gives "lsm9ds1_magn" (`lsm9ds1Magn`).
    public static func lsm9ds1(accelNumber: Int = 0, gyroNumber: Int = 1, magnNumber: Int = 2) -> [FakeIIODevice] {
        var pair = lsm6dsxPair(accelNumber: accelNumber, gyroNumber: gyroNumber)
        pair[0].name = "lsm9ds1_accel"
        pair[1].name = "lsm9ds1_gyro"
        return pair + [lsm9ds1Magn(number: magnNumber)]
    }

    /// `drivers/iio/imu/inv_mpu6050` with an MPU-9250 (inv_mpu_magn.c, Linux 6.6): the MPU-6050's
    /// layout named "mpu9250" plus the AK8963 behind its auxiliary bus as `in_magn_{x,y,z}_raw`
    /// with per-axis scales (16-bit output: ~0.15 µT per count) and its own
    /// `in_magn_mount_matrix` (the AK8963's axes are not the accelerometer's: x and y swapped, z
    /// reversed). The magnetometer shares the device's `sampling_frequency`.
    public static func mpu9250(number: Int = 0) -> FakeIIODevice {
        var d = mpu6050(number: number)
        d.name = "mpu9250"
        d.ownTrigger = "mpu9250-dev\(number)"
        var g = FakeChannelGroup(type: "magn", scale: "0.001500000", scanType: .be16, firstIndex: 8)
        g.axisScales = ["0.001523437", "0.001505859", "0.001494140"]
        g.mountMatrix = Matrix3(Vector3(0, 1, 0), Vector3(1, 0, 0), Vector3(0, 0, -1))
        d.magn = g
        return d
    }

    /// Raw counts for a field in µT in tiltd's frame (after the device's mount matrix), inverting
    /// what a reader does: µT = 100 · M · (raw + offset) · scale, per axis.
    public func magnRawCounts(_ microtesla: Vector3) -> [Int64] {
        let g = magn!
        let sensor = mountMatrix(for: g).inverse * (microtesla / 100)
        return [sensor.x, sensor.y, sensor.z].enumerated().map { i, v in
            Int64((v / g.scaleValue(axis: i) - g.offsetValue).rounded())
        }
    }

    /// What a correct reader decodes from `raw`, µT.
    public func magnDecoded(_ raw: [Int64]) -> Vector3 {
        let g = magn!
        let v = Vector3(
            (Double(raw[0]) + g.offsetValue) * g.scaleValue(axis: 0),
            (Double(raw[1]) + g.offsetValue) * g.scaleValue(axis: 1),
            (Double(raw[2]) + g.offsetValue) * g.scaleValue(axis: 2))
        return mountMatrix(for: g) * v * 100
    }
}

extension FakeScenario {
    /// Sets a fake magnetometer's `in_magn_*_raw` to a field in µT (tiltd's frame).
    public func setField(_ d: FakeIIODevice, _ microtesla: Vector3) throws {
        try setRaw(d, d.magn!, d.magnRawCounts(microtesla))
    }
}
