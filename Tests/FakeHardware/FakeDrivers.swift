// SPDX-License-Identifier: Apache-2.0
import TiltCore

/// Fake devices laid out as the kernel drivers a Raspberry Pi user meets lay them out: the same
/// file names, scan indices, scan types, attribute text and the things real kernels add around
/// them (`current_timestamp_clock`, `buffer0/`, `*_scale_available`, `calibbias`, mount matrices).
/// Each scenario names the driver source and the kernel version it follows (Raspberry Pi OS
/// bookworm ships Linux 6.6 and 6.12).
extension FakeIIODevice {
    /// `drivers/iio/imu/inv_mpu6050` (inv_mpu_core.c, Linux 6.6), an MPU-6050 probed with its
    /// interrupt: one device "mpu6050"; accel at scan indices 0–2 and gyro at 4–6 as `be:s16/16>>0`
    /// with the temperature at 3 and the timestamp at 7; `sampling_frequency` 50 (the driver's
    /// initial FIFO rate) offering only `10 20 50 100 200 500` (60 Hz is not offered, so the
    /// nearest rate, 50, is chosen); accel ±2 g (0.000598) and gyro ±2000 °/s (0.001064724) with
    /// their `*_scale_available` lists and `calibbias`; one `in_mount_matrix`
    /// (IIO_SHARED_BY_DIR); its own data-ready trigger "mpu6050-devN", not yet attached;
    /// `current_timestamp_clock` "realtime" (the kernel's default) and `buffer0/`.
    public static func mpu6050(number: Int = 0, mountMatrix: Matrix3? = nil) -> FakeIIODevice {
        var d = FakeIIODevice(
            number: number, name: "mpu6050",
            accel: FakeChannelGroup(
                type: "accel", scale: "0.000598", scanType: .be16, firstIndex: 0,
                scaleAvailable: "0.000598 0.001196 0.002392 0.004785", calibbias: true),
            gyro: FakeChannelGroup(
                type: "anglvel", scale: "0.001064724", scanType: .be16, firstIndex: 4,
                scaleAvailable: "0.000133090 0.000266181 0.000532362 0.001064724", calibbias: true),
            extraScanChannels: [(id: "temp", index: 3, type: .be16)],
            timestampIndex: 7,
            frequency: .device(initial: "50", available: ["10", "20", "50", "100", "200", "500"]),
            ownTrigger: "mpu6050-dev\(number)", triggerNumber: number)
        d.inMountMatrix = mountMatrix ?? .identity
        d.timestampClock = "realtime"
        d.hasBuffer0 = true
        return d
    }

    /// The same MPU-6050 as Linux 4.9 (Raspbian stretch) laid it out: no `current_timestamp_clock`
    /// (added in 4.10), so buffered timestamps are CLOCK_REALTIME and cannot be changed; no
    /// `buffer0/` (5.11), no mount matrix attribute.
    public static func mpu6050Linux49(number: Int = 0) -> FakeIIODevice {
        var d = mpu6050(number: number)
        d.inMountMatrix = nil
        d.timestampClock = nil
        d.hasBuffer0 = false
        return d
    }

    /// `drivers/iio/imu/st_lsm6dsx` (st_lsm6dsx_core.c, Linux 6.6), an LSM6DS3 probed with its
    /// interrupt: accel and gyro as two devices "lsm6ds3_accel" and "lsm6ds3_gyro", each x, y, z
    /// at scan indices 0–2 as `le:s16/16>>0` and the timestamp at 3, fed by the chip's FIFO (no
    /// trigger); `sampling_frequency` from `12.500 26.000 52.000 104.000 208.000 416.000`
    /// (IIO_VAL_INT_PLUS_MILLI); scales with 9 decimals (IIO_VAL_INT_PLUS_NANO: ±2 g is 61 µg,
    /// 0.000598205 m/s²; 245 °/s is 8.75 m°/s, 0.000152716 rad/s) and their `*_scale_available`;
    /// the device-level `mount_matrix` the driver always has (identity without a device-tree
    /// property); `current_timestamp_clock` "realtime" and `buffer0/`.
    public static func lsm6dsxPair(accelNumber: Int = 0, gyroNumber: Int = 1) -> [FakeIIODevice] {
        let odrs = ["12.500", "26.000", "52.000", "104.000", "208.000", "416.000"]
        var accel = FakeIIODevice(
            number: accelNumber, name: "lsm6ds3_accel",
            accel: FakeChannelGroup(
                type: "accel", scale: "0.000598205", scanType: .le16, firstIndex: 0,
                scaleAvailable: "0.000598205 0.001196411 0.002392822 0.004785645"),
            gyro: nil, timestampIndex: 3,
            frequency: .device(initial: "12.500", available: odrs),
            deviceMountMatrix: .identity)
        var gyro = FakeIIODevice(
            number: gyroNumber, name: "lsm6ds3_gyro",
            accel: nil,
            gyro: FakeChannelGroup(
                type: "anglvel", scale: "0.000152716", scanType: .le16, firstIndex: 0,
                scaleAvailable: "0.000152716 0.000305432 0.000610865 0.001221730"),
            timestampIndex: 3,
            frequency: .device(initial: "12.500", available: odrs),
            deviceMountMatrix: .identity)
        for i in [0, 1] {
            var d = i == 0 ? accel : gyro
            d.timestampClock = "realtime"
            d.hasBuffer0 = true
            if i == 0 { accel = d } else { gyro = d }
        }
        return [accel, gyro]
    }

    /// The same LSM6DS3 probed without an interrupt: the driver sets up no FIFO buffer, so
    /// there is no `buffer/`, no scan elements and no timestamp channel — only `*_raw`, each
    /// read a one-shot that switches the sensor on and waits for fresh data (here a plain file:
    /// the kernel test rig, scripts/kernel-test, measures the real driver's wait).
    public static func lsm6dsxPairWithoutInterrupt(accelNumber: Int = 0, gyroNumber: Int = 1) -> [FakeIIODevice] {
        lsm6dsxPair(accelNumber: accelNumber, gyroNumber: gyroNumber).map { d in
            var d = d
            d.buffered = false
            d.timestampIndex = nil
            d.hasBuffer0 = false
            return d
        }
    }

    /// `drivers/iio/imu/bmi160` (bmi160_core.c, Linux 6.6), a BMI160 breakout wired without its
    /// interrupt line: one device "bmi160" with a triggered buffer but no trigger (the driver
    /// makes "bmi160-devN" only when it has an IRQ), so the buffer can never fill; scan order as
    /// the data registers: gyro at 4–6, then accel at 7–9 (0–3 are the unused magnetometer and
    /// hall slots), timestamp at 10, all `le:s16/16>>0`; per-type sampling frequencies (accel 100,
    /// gyro 100) with their `_available` lists; scales 0.000598 (±2 g) and 0.001065 (±2000 °/s)
    /// with `*_scale_available`; `in_mount_matrix`; `current_timestamp_clock` and `buffer0/`.
    public static func bmi160WithoutInterrupt(number: Int = 0, mountMatrix: Matrix3? = nil) -> FakeIIODevice {
        var d = FakeIIODevice(
            number: number, name: "bmi160",
            accel: FakeChannelGroup(
                type: "accel", scale: "0.000598", scanType: .le16, firstIndex: 7,
                scaleAvailable: "0.000598 0.001197 0.002394 0.004788"),
            gyro: FakeChannelGroup(
                type: "anglvel", scale: "0.001065", scanType: .le16, firstIndex: 4,
                scaleAvailable: "0.001065 0.000532 0.000266 0.000133 0.000066"),
            timestampIndex: 10,
            frequency: .perType(initial: "100", available: ["25", "50", "100", "200", "400", "800", "1600"]))
        d.triggeredWithoutInterrupt = true
        d.inMountMatrix = mountMatrix ?? .identity
        d.timestampClock = "realtime"
        d.hasBuffer0 = true
        return d
    }

    /// `drivers/iio/accel/adxl345_core.c` (Linux 6.6): an ADXL345 accelerometer and nothing else —
    /// no gyroscope, no buffer (its FIFO buffer came in later kernels): x, y, z
    /// `*_raw` with `calibbias`, one `in_accel_scale` 0.038300 (full resolution, ~3.9 mg per
    /// count) and `in_accel_sampling_frequency` "100.000000" (IIO_VAL_INT_PLUS_MICRO, no list);
    /// `current_timestamp_clock` (a core attribute every device has).
    public static func adxl345(number: Int = 0) -> FakeIIODevice {
        var d = FakeIIODevice(
            number: number, name: "adxl345",
            accel: FakeChannelGroup(
                type: "accel", scale: "0.038300",
                scanType: ScanType(bigEndian: false, signed: true, realBits: 13, storageBits: 16),
                firstIndex: 0, calibbias: true),
            gyro: nil, timestampIndex: nil, buffered: false,
            frequency: .perType(initial: "100.000000", available: nil))
        d.timestampClock = "realtime"
        return d
    }

    /// `drivers/iio/accel/hid-sensor-accel-3d.c` (Linux 6.6): the accelerometer of a HID sensor
    /// hub (a USB/I²C sensor hub, many laptops and tablets) with no gyroscope: device "accel_3d",
    /// x, y, z at scan indices 0–2 stored in 32 bits with the 16 bits the HID report carries
    /// (`le:s16/32>>0`), a software timestamp at 3; `in_accel_scale` with 9 decimals and
    /// `in_accel_offset` 0; `in_accel_sampling_frequency` and `in_accel_hysteresis`; a triggered
    /// buffer with its own trigger "accel_3d-devN"; `current_timestamp_clock` and `buffer0/`.
    public static func hidAccel3D(number: Int = 0) -> FakeIIODevice {
        var d = FakeIIODevice(
            number: number, name: "accel_3d",
            accel: FakeChannelGroup(
                type: "accel", scale: "0.009806650", offset: "0",
                scanType: ScanType(bigEndian: false, signed: true, realBits: 16, storageBits: 32),
                firstIndex: 0),
            gyro: nil, timestampIndex: 3,
            frequency: .perType(initial: "10.000000", available: nil),
            ownTrigger: "accel_3d-dev\(number)", triggerNumber: number)
        d.timestampClock = "realtime"
        d.hasBuffer0 = true
        return d
    }

    /// iio-sensor-proxy's buffered test device (its `tests/` use the kernel's `iio_dummy`-style
    /// layout): device "IIO Test Accelerometer", whose trigger is named after the HID convention
    /// "accel_3d-devN" rather than after the device, with `current_trigger` empty. iio-sensor-proxy
    /// pairs a trigger with device N by the "-devN" suffix alone.
    public static func iioSensorProxyTestAccel(number: Int = 0) -> FakeIIODevice {
        var d = hidAccel3D(number: number)
        d.name = "IIO Test Accelerometer"
        return d
    }
}
