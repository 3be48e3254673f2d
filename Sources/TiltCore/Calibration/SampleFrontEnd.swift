// SPDX-License-Identifier: Apache-2.0
/// What every sample goes through before fusion, live or replayed: the config's
/// `[imu] mount_matrix` (sensor frame → the frame tiltd reports), then the user's calibration.
///
/// One code path on purpose: the daemon's sampler, `tiltd judge`, `tiltd calibrate` and the
/// benches all call this, so a replay of a recording behaves exactly like the device it was
/// recorded from. Sources deliver samples *before* the config's mount matrix (an IIO device
/// still applies its own kernel mount matrix, a property of the board, unless the config
/// overrides it), so a recording can be replayed with a different mount or calibration.
public struct SampleFrontEnd: Sendable {
    /// The config's mount matrix, or nil (identity).
    public let mount: Matrix3?
    /// The user's calibration.
    public let calibrator: Calibrator

    /// A front end applying `mount` (if any), then `calibration`.
    public init(mount: Matrix3? = nil, calibration: IMUCalibration = .none) {
        self.mount = mount.flatMap { $0.isIdentity ? nil : $0 }
        self.calibrator = Calibrator(calibration)
    }

    /// The sample in the reported frame, not yet calibrated (what `tiltd calibrate` measures).
    @inlinable public func mounted(_ s: IMUSample) -> IMUSample {
        guard let m = mount else { return s }
        return IMUSample(t: s.t, accel: m * s.accel, gyro: s.hasGyro ? m * s.gyro : .zero, hasGyro: s.hasGyro)
    }

    /// The sample mounted and calibrated: what fusion and the game see.
    @inlinable public func apply(_ s: IMUSample) -> IMUSample { calibrator.apply(mounted(s)) }

    /// A magnetometer sample in the reported frame, not yet calibrated (what `tiltd calibrate mag`
    /// fits): the source has already put the field in the accelerometer's sensor axes (the
    /// magnetometer's own mount matrix), so the config's matrix turns it with the accelerometer.
    @inlinable public func mounted(_ m: MagSample) -> MagSample {
        guard let mount else { return m }
        return MagSample(t: m.t, field: mount * m.field)
    }

    /// A magnetometer sample mounted and calibrated (hard and soft iron): what `updateMag` takes.
    public func apply(_ m: MagSample) -> MagSample {
        let mm = mounted(m)
        return MagSample(t: mm.t, field: calibrator.correctField(mm.field))
    }
}
