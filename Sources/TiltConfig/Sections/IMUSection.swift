// SPDX-License-Identifier: Apache-2.0
import TiltCore

extension Configuration {
    /// `[imu]`: which IIO device(s) and how fast (see `AttitudeComponent`).
    public struct IMU: Sendable, Equatable, ConfigDefaults {
        /// "auto", an IIO device name, or "accel_name+gyro_name" for split devices.
        public var device = "auto"
        /// Samples per second asked of the device, Hz.
        public var rateHz: Double = 60
        /// Overrides the mount matrix the driver reports.
        public var mountMatrix: Matrix3?
        /// Samples per kernel buffer; nil picks ~10 ms worth.
        public var bufferSamples: Int?
        /// "auto", "buffered" or "polled": how the device is read (`IIOReadMode`).
        public var mode = "auto"
        /// The values `mode` may take.
        public static let modes = ["auto", "buffered", "polled"]
        /// The magnetometer: "auto" (on the IMU device, or a magnetometer device paired with it),
        /// an IIO device name or id, or "none".
        public var magnetometer = "auto"
        /// The span each gyro sample averages, as a fraction of the sample period
        /// (`AttitudeEstimator.Parameters.rateWindow`): 1 for a sensor read at its own output
        /// rate, less for one whose chip runs faster than it is read (docs/fusion.md).
        public var rateWindow: Double = 1
        /// The estimator's parameters this section sets: the daemon's sampler and `tiltd judge`
        /// both build their estimator from it.
        public var fusionParameters: AttitudeEstimator.Parameters {
            var p = AttitudeEstimator.Parameters()
            p.rateWindow = rateWindow
            return p
        }
        /// The defaults.
        public init() {}

        /// The keys of `[imu]`.
        static var keys: [ConfigKey<IMU>] {
            [
                .text(
                    "device", \.device, check: { $0.isEmpty ? "must not be empty (use \"auto\")" : nil },
                    "`\"auto\"`: the IIO device that has both `in_accel_*` and `in_anglvel_*` channels, else the pair of devices that have one each (st_lsm6dsx), else a device with `in_accel_*` alone (ADXL345, a HID `accel_3d`: tilt from the accelerometer only, no yaw, see docs/fusion.md). Otherwise an IIO `name` (`\"mpu6050\"`, `\"adxl345\"`), or `\"ACCEL+GYRO\"` naming two devices."
                ),
                .number(
                    "rate_hz", \.rateHz, in: 10...1000,
                    "sampling rate. Buffered, the device runs at the nearest value in `sampling_frequency_available` when the exact one is not offered; polled, tiltd reads at `rate_hz` itself with the chip at the lowest offered rate at or above it (so no poll repeats a value). The `imu` status's `rate_hz` is what is delivered."
                ),
                .text(
                    "mode", \.mode, allowed: modes,
                    "how the device is read. `\"auto\"`: through its buffer when it has one; polled (its `*_raw` files read at `rate_hz`) when it has none, when its buffer needs a trigger it does not have (a BMI160 or MPU-6050 probed without its interrupt line), or when the buffer delivers nothing within a second of being enabled — the `imu` status says which. A driver whose buffer cannot be enabled (the kernel refuses it) is polled too. Polled reads that take more than half the period (drivers whose raw read waits for fresh data, such as st_lsm6dsx) make tiltd set the chip to its highest offered rate, and read split accelerometer and gyroscope devices side by side (two threads) if that is still too slow; the `imu` status's `rate_hz` is what is really delivered. `\"buffered\"`: buffer only (a silent buffer is reported as `no_data`, not replaced). `\"polled\"`: never the buffer (costs a few sysfs reads per sample; timing follows the daemon's wake-ups). docs/hardware.md says which boards need which."
                ),
                .text(
                    "magnetometer", \.magnetometer,
                    check: { $0.isEmpty ? "must not be empty (use \"auto\" or \"none\")" : nil },
                    "the magnetometer, for a heading. `\"auto\"`: `in_magn_x/y/z` channels on the IMU device itself (MPU-9250), else a magnetometer device paired with the IMU — on the same chip, behind its auxiliary bus, with the same `label`, on the same I²C bus, or sharing its name's prefix (`lsm9ds1_magn` beside `lsm9ds1_accel`) — else the only magnetometer present; none found is silent (the IMU works as without one; one plugged in later is taken), several that nothing ties to the IMU are refused (a `magnetometer` status `retrying` says to name one). Otherwise an IIO `name` or id (`\"ak8975\"`, `\"iio:device2\"`), reported as a `magnetometer` status while absent; `\"none\"` reads none. It is polled at its own rate (at most 100 Hz and the IMU's; a chip of its own is set to the lowest rate it offers at or above that, and the status's `rate_hz` is what its reads deliver), scaled to µT, turned by its own mount matrix (`in_magn_mount_matrix` / `mount_matrix` / `in_mount_matrix`) into the IMU's axes and then by `mount_matrix` below; docs/hardware.md lists the boards."
                ),
                .custom(
                    "mount_matrix", \.mountMatrix, type: "9 numbers -1–1", default: "the driver's",
                    "row-major rotation from sensor to board axes (rows = the reported x, y, z in sensor coordinates); overrides `in_accel_mount_matrix` / `in_anglvel_mount_matrix` / `mount_matrix`. Must be a rotation (|det| = 1). Applied in one place for every source, so `--replay`, `tiltd judge` and `tiltd calibrate` apply it exactly as the live device does; recordings (`tiltd record`) are taken before it.",
                    read: { (t, v, _) throws(ConfigError) in
                        guard let m = try t.doubles("mount_matrix", count: 9, in: -1...1) else { return v }
                        let mm = Matrix3(rowMajor: m)!
                        if abs(abs(mm.determinant) - 1) > 0.05 {
                            throw t.error("mount_matrix", "must be a rotation (|det| = 1), det is \(mm.determinant)")
                        }
                        return mm
                    },
                    render: { m in [m.map { "mount_matrix = \($0.rowMajor)" } ?? "# mount_matrix: unset, the driver's"]
                    }),
                .optionalInteger(
                    "buffer_samples", \.bufferSamples, in: 1...4096, default: "~10 ms", unset: "about 10 ms of samples",
                    "samples per kernel buffer. Larger saves wake-ups, smaller cuts latency. Unset, the daemon picks about 10 ms worth (`tiltd check-config` shows it as a comment)."
                ),
                .number(
                    "rate_window", \.rateWindow, in: 0...1,
                    "the span each gyroscope sample averages, as a fraction of the sample period (docs/fusion.md, step 1). `1` fits a sensor read at its own output rate (its low-pass covers the period before data-ready: the usual case, buffered or polled at the chip's rate). Less fits a chip that runs faster than it is read — e.g. polled at 60 Hz while it samples at 285 Hz without averaging: 60/285 ≈ 0.21. The estimator then integrates the rotation between samples more exactly (on the BROAD trials read at 57 Hz: 0.78° instead of 1.18°, bench/accuracy/run). A wrong value costs accuracy, never stability. Left at `1`, tiltd works it out itself when it polls a chip that runs faster than it reads it (the polling rate over the chip's, e.g. a BMX055 it raised to 2000 Hz read at 60: 0.03); any other value is kept as given."
                ),
            ]
        }
    }

    static var imuTable: ConfigTable {
        .table(
            "imu", onReload: "the sampler restarts with the new device, rate or calibration",
            keys: IMU.keys.map { $0.lifted(\.imu) })
    }
}
