// SPDX-License-Identifier: Apache-2.0
import TiltCore

/// The NXP 9-DOF board (Adafruit 3463: FXOS8700 accelerometer + magnetometer and FXAS21002C
/// gyroscope) as Linux 6.1's drivers lay it out, unit mistakes included.
extension FakeIIODevice {
    /// `drivers/iio/gyro/fxas21002c_core.c` (Linux 6.1) probed without its interrupt: device
    /// "fxas21002c", anglvel x, y, z at scan indices 0–2 as `be:s16/16>>0` (temperature at 3 is
    /// no scan element here), timestamp at 3; `in_anglvel_scale` "62.5" — millidegrees/s per
    /// count, not rad/s (the driver's unit mistake); `in_anglvel_sampling_frequency` 200 (the
    /// chip's default) with the list once for the device, `sampling_frequency_available`
    /// "12.5 25 50 100 200 400 800"; a triggered buffer but no trigger (made only with an IRQ).
    public static func fxas21002c(number: Int = 1) -> FakeIIODevice {
        var d = FakeIIODevice(
            number: number, name: "fxas21002c",
            accel: nil,
            gyro: FakeChannelGroup(
                type: "anglvel", scale: "62.5", scanType: .be16, firstIndex: 0,
                scaleAvailable: "125.0 62.5 31.25 15.625 7.8125"),
            timestampIndex: 3,
            frequency: .perTypeListedByDevice(
                initial: "200", available: ["12.5", "25", "50", "100", "200", "400", "800"]))
        d.triggeredWithoutInterrupt = true
        d.timestampClock = "realtime"
        d.hasBuffer0 = true
        return d
    }

    /// `drivers/iio/imu/fxos8700_core.c` (Linux 6.1): device "fxos8700", accel and magn x, y, z
    /// `*_raw` only (the driver sets up no buffer); `in_accel_scale` "0.000244" — g per count at
    /// ±2 g, not m/s² (the driver's unit mistake; gravity reads about 1); `in_magn_scale`
    /// "0.000001"; `in_{accel,magn}_sampling_frequency` with their own `_available` lists.
    public static func fxos8700(number: Int = 0) -> FakeIIODevice {
        var d = FakeIIODevice(
            number: number, name: "fxos8700",
            accel: FakeChannelGroup(
                type: "accel", scale: "0.000244", scanType: .be16, firstIndex: 0,
                scaleAvailable: "0.000244 0.000488 0.000976"),
            gyro: nil, timestampIndex: nil, buffered: false,
            frequency: .perType(
                initial: "100.000000", available: ["1.5625", "6.25", "12.5", "50", "100", "200", "400", "800"]))
        d.magn = FakeChannelGroup(type: "magn", scale: "0.000001", scanType: .be16, firstIndex: 3)
        d.timestampClock = "realtime"
        return d
    }

    /// `drivers/iio/accel/adxl345_core.c` as Debian 12's Linux 6.1 has it: the 6.6 layout of
    /// `adxl345` but with the rates listed once for the device (`sampling_frequency_available`,
    /// IIO_CONST_ATTR_SAMP_FREQ_AVAIL) beside the per-type `in_accel_sampling_frequency`.
    public static func adxl345Linux61(number: Int = 0) -> FakeIIODevice {
        var d = adxl345(number: number)
        d.frequency = .perTypeListedByDevice(
            initial: "100.000000",
            available: [
                "0.09765625", "0.1953125", "0.390625", "0.78125", "1.5625", "3.125", "6.25", "12.5", "25", "50",
                "100", "200", "400", "800", "1600", "3200",
            ])
        return d
    }
}
