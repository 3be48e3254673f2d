// SPDX-License-Identifier: Apache-2.0
/// The user's sensor calibration, as kept in the calibration file.
///
/// Accelerometer: `a_cal = M · (a − offset)`, where `M` is `diag(scale)` unless a full 3×3
/// `matrix` was fitted. Gyroscope: `g_cal = g − bias`.
public struct IMUCalibration: Sendable, Equatable {
    /// Accelerometer offset, m/s², subtracted first.
    public var accelOffset: Vector3
    /// Per-axis accelerometer scale (used when `accelMatrix` is nil).
    public var accelScale: Vector3
    /// A full 3×3 model (scale, cross-axis, small misalignment); when set it replaces `accelScale`.
    public var accelMatrix: Matrix3?
    /// Gyro bias, rad/s, subtracted from every rate.
    public var gyroBias: Vector3
    /// The wearer's neutral pose (`tiltd calibrate neutral`): the estimator's attitude
    /// (sensor → z-up world, unit, w ≥ 0) while they held their head level. The game's relative
    /// mode measures tilts from it. Not applied to samples; nil until captured.
    public var neutral: Quaternion?
    /// The wearer's up direction while looking ahead, in the reported sensor frame (unit), from
    /// `tiltd calibrate neutral`. With `headForward` it defines the game's `HeadFrame`.
    public var headUp: Vector3?
    /// The direction the face points while looking ahead, learnt from the calibration nod.
    public var headForward: Vector3?
    /// Magnetometer hard-iron offset, µT, subtracted from the mounted field first
    /// (`tiltd calibrate mag`, `MagCalibration.Fit.offset`).
    public var magOffset: Vector3
    /// Magnetometer soft-iron matrix applied after the offset (`MagCalibration.Fit.matrix`:
    /// symmetric, determinant 1); nil = identity.
    public var magMatrix: Matrix3?

    /// A calibration; the defaults change nothing.
    public init(
        accelOffset: Vector3 = .zero, accelScale: Vector3 = Vector3(1, 1, 1),
        accelMatrix: Matrix3? = nil, gyroBias: Vector3 = .zero, neutral: Quaternion? = nil,
        headUp: Vector3? = nil, headForward: Vector3? = nil, magOffset: Vector3 = .zero, magMatrix: Matrix3? = nil
    ) {
        self.accelOffset = accelOffset; self.accelScale = accelScale
        self.accelMatrix = accelMatrix; self.gyroBias = gyroBias; self.neutral = neutral
        self.headUp = headUp; self.headForward = headForward
        self.magOffset = magOffset; self.magMatrix = magMatrix
    }

    /// The calibrated head frame, when both directions are known and usable.
    public var headFrame: HeadFrame? {
        guard let u = headUp, let f = headForward else { return nil }
        return HeadFrame(up: u, forward: f, source: .calibrated)
    }

    /// The calibration that changes nothing.
    public static let none = IMUCalibration()

    /// The matrix actually applied to the offset-free acceleration.
    public var effectiveAccelMatrix: Matrix3 {
        accelMatrix ?? Matrix3(Vector3(accelScale.x, 0, 0), Vector3(0, accelScale.y, 0), Vector3(0, 0, accelScale.z))
    }
}

/// Applies the user's calibration to samples that are already in SI units and in the
/// board's frame (scale, offset and mount matrix applied by the source).
public struct Calibrator: Sendable {
    /// The calibration applied.
    public private(set) var calibration: IMUCalibration
    private var matrix: Matrix3

    /// A calibrator for `calibration` (its matrix is computed once here).
    public init(_ calibration: IMUCalibration = .none) {
        self.calibration = calibration
        self.matrix = calibration.effectiveAccelMatrix
    }

    /// The sample corrected: accel by offset and scale/matrix, gyro by bias. Same time.
    @inlinable public func apply(_ s: IMUSample) -> IMUSample {
        IMUSample(
            t: s.t, accel: correctAccel(s.accel), gyro: s.hasGyro ? s.gyro - calibration.gyroBias : .zero,
            hasGyro: s.hasGyro)
    }

    /// An acceleration corrected (m/s²).
    public func correctAccel(_ a: Vector3) -> Vector3 { matrix * (a - calibration.accelOffset) }

    /// A magnetic field corrected (µT): `mag_matrix · (m − mag_offset)`, hard iron then soft iron,
    /// as `MagCalibration.Fit.apply` does with the values `tiltd calibrate mag` wrote.
    public func correctField(_ m: Vector3) -> Vector3 {
        let centred = m - calibration.magOffset
        return calibration.magMatrix.map { $0 * centred } ?? centred
    }
}
