import Foundation

/// Estimates orientation from accelerometer and gyroscope samples.
///
/// v1: a Mahony-style complementary filter on the quaternion, initialised from gravity,
/// with the gyro bias learned while the sensor is at rest. dt comes from the samples' own
/// timestamps; a gap longer than `maxGap` re-seeds the tilt from gravity.
public struct AttitudeEstimator: Sendable {
    /// Tunables, with defaults that need no per-device tuning.
    public struct Parameters: Sendable, Equatable {
        /// Proportional gain of the accelerometer correction (rad/s per unit error).
        public var kp: Double = 1.0
        /// Gain used for the first `fastStartSeconds` to converge quickly.
        public var kpStart: Double = 10.0
        public var fastStartSeconds: Double = 1.0
        /// Rest: |gyro| below this (rad/s) …
        public var restGyro: Double = 0.05
        /// … and |‖a‖ − g| below this (m/s²) …
        public var restAccel: Double = 0.3
        /// … for this long (s).
        public var restSeconds: Double = 1.0
        /// Time constant (s) of the bias low-pass while at rest.
        public var biasTau: Double = 2.0
        /// Longest dt integrated as-is (s); longer gaps re-seed from gravity.
        public var maxGap: Double = 0.5
        public init() {}
    }

    public static let gravity = 9.80665

    public var parameters: Parameters
    public private(set) var q = Quaternion.identity
    public private(set) var bias = Vector3.zero
    public private(set) var atRest = false

    private var lastT: Nanoseconds?
    private var startT: Nanoseconds = 0
    private var restSince: Nanoseconds?

    public init(parameters: Parameters = Parameters(), initialBias: Vector3 = .zero) {
        self.parameters = parameters
        self.bias = initialBias
    }

    /// Forgets the orientation (the bias is kept).
    public mutating func reset() {
        lastT = nil; restSince = nil; atRest = false; q = .identity
    }

    /// The orientation whose tilt matches `accel` (heading zero).
    public static func tilt(fromGravity accel: Vector3) -> Quaternion {
        let roll = atan2(accel.y, accel.z)
        let pitch = atan2(-accel.x, (accel.y * accel.y + accel.z * accel.z).squareRoot())
        return Quaternion(roll: roll, pitch: pitch, yaw: 0)
    }

    public mutating func update(_ s: IMUSample) -> Attitude {
        guard let last = lastT else {
            lastT = s.t; startT = s.t
            if s.accel.norm > 0.1 { q = Self.tilt(fromGravity: s.accel) }
            return Attitude(t: s.t, q: q, atRest: atRest, gyroBias: bias)
        }
        let dt = Double(s.t - last) * 1e-9
        lastT = s.t
        if !(dt > 0) { return Attitude(t: s.t, q: q, atRest: atRest, gyroBias: bias) }
        if dt > parameters.maxGap {
            // A gap: heading is kept, tilt re-seeded from gravity.
            let yaw = q.yaw
            let t = Self.tilt(fromGravity: s.accel)
            q = Quaternion(roll: t.roll, pitch: t.pitch, yaw: yaw)
            restSince = nil; atRest = false
            return Attitude(t: s.t, q: q, atRest: atRest, gyroBias: bias)
        }

        updateRest(s, dt: dt)
        var omega = s.gyro - bias
        let aNorm = s.accel.norm
        if aNorm > 0.5 * Self.gravity && aNorm < 1.5 * Self.gravity {
            // Gravity direction predicted in the body frame vs measured.
            let up = q.conjugate.rotate(Vector3(0, 0, 1))
            let err = (s.accel / aNorm).cross(up)
            let elapsed = Double(s.t - startT) * 1e-9
            let kp = elapsed < parameters.fastStartSeconds ? parameters.kpStart : parameters.kp
            omega += err * kp
        }
        let dq = Quaternion(axis: omega, angle: omega.norm * dt)
        q = (q * dq).normalized
        return Attitude(t: s.t, q: q, atRest: atRest, gyroBias: bias)
    }

    private mutating func updateRest(_ s: IMUSample, dt: Double) {
        let still = (s.gyro - bias).norm < parameters.restGyro
            && abs(s.accel.norm - Self.gravity) < parameters.restAccel
        if !still { restSince = nil; atRest = false; return }
        if restSince == nil { restSince = s.t }
        atRest = Double(s.t - restSince!) * 1e-9 >= parameters.restSeconds
        if atRest {
            bias = bias + (s.gyro - bias) * min(1, dt / parameters.biasTau)
        }
    }
}
