/// The user's sensor calibration, as kept in the calibration file.
///
/// Accelerometer: `a_cal = M · (a − offset)`, where `M` is `diag(scale)` unless a full 3×3
/// `matrix` was fitted. Gyroscope: `g_cal = g − bias`.
public struct IMUCalibration: Sendable, Equatable {
    public var accelOffset: Vector3
    public var accelScale: Vector3
    /// A full 3×3 model (scale, cross-axis, small misalignment); when set it replaces `accelScale`.
    public var accelMatrix: Matrix3?
    public var gyroBias: Vector3
    /// The wearer's neutral pose (`tiltd calibrate neutral`): the estimator's attitude
    /// (sensor → z-up world, unit, w ≥ 0) while they held their head level. The game's relative
    /// mode measures tilts from it. Not applied to samples; nil until captured.
    public var neutral: Quaternion?

    public init(accelOffset: Vector3 = .zero, accelScale: Vector3 = Vector3(1, 1, 1),
                accelMatrix: Matrix3? = nil, gyroBias: Vector3 = .zero, neutral: Quaternion? = nil) {
        self.accelOffset = accelOffset; self.accelScale = accelScale
        self.accelMatrix = accelMatrix; self.gyroBias = gyroBias; self.neutral = neutral
    }

    public static let none = IMUCalibration()

    /// The matrix actually applied to the offset-free acceleration.
    public var effectiveAccelMatrix: Matrix3 {
        accelMatrix ?? Matrix3(Vector3(accelScale.x, 0, 0), Vector3(0, accelScale.y, 0), Vector3(0, 0, accelScale.z))
    }
}

/// Applies the user's calibration to samples that are already in SI units and in the
/// board's frame (scale, offset and mount matrix applied by the source).
public struct Calibrator: Sendable {
    public private(set) var calibration: IMUCalibration
    private var matrix: Matrix3

    public init(_ calibration: IMUCalibration = .none) {
        self.calibration = calibration
        self.matrix = calibration.effectiveAccelMatrix
    }

    @inlinable public func apply(_ s: IMUSample) -> IMUSample {
        IMUSample(t: s.t, accel: correctAccel(s.accel), gyro: s.hasGyro ? s.gyro - calibration.gyroBias : .zero,
                  hasGyro: s.hasGyro)
    }

    public func correctAccel(_ a: Vector3) -> Vector3 { matrix * (a - calibration.accelOffset) }
}
