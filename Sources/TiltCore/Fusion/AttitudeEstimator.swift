// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// Estimates orientation from accelerometer and gyroscope samples (roll and pitch; heading is free),
/// and, when magnetometer samples are fed with `updateMag(t:field:)`, heading from the field where
/// it is believable (MagneticHeading.swift).
///
/// v2, described in docs/fusion.md. In short:
/// - the gyro is integrated on its own (the rate interpolated between samples as their averaging
///   window says, a two-sample coning term, dt from the samples' timestamps) into a
///   "quasi-inertial" frame that drifts only as slowly as the gyro bias error;
/// - the accelerometer is rotated into that frame and low-passed there. Gravity is constant in that
///   frame while linear accelerations average out (velocity stays bounded), so the filtered vector is
///   gravity even during translation, tapping or vibration. Samples whose magnitude is far from g count
///   less in the average;
/// - the output is the gyro orientation corrected so the filtered vector points straight up;
/// - the gyro bias is learned while still (rest detection) and during motion (from how fast the
///   filtered gravity direction drifts in the gyro frame);
/// - the first samples, and those after a gap, start the filter from gravity (a running mean, so it
///   settles at once instead of after a time constant).
///
/// Cost: about a dozen multiply-adds per vector operation and one square root per step, no
/// trigonometry in the common path (measured in bench/pipeline; see docs/fusion.md).
public struct AttitudeEstimator: Sendable {
    /// Tunables. The defaults need no per-device tuning (all times are in seconds, independent of rate).
    public struct Parameters: Sendable, Equatable {
        /// Time constant of the low-pass on the accelerometer in the quasi-inertial frame (s).
        /// Longer rejects more linear acceleration; shorter follows gyro errors faster.
        public var accTau: Double = 3.0
        /// Damping ratio of that low-pass (0.707 = Butterworth, 1 = critically damped). Below
        /// Butterworth it lags less behind gyro drift for the same rejection of linear acceleration.
        public var accDamping: Double = 0.45
        /// 2 or 3: order of the low-pass (3 adds a first-order stage at the same frequency).
        public var accOrder: Double = 2
        /// Time constant (s) with which the drift of the filtered gravity pulls the gyro bias
        /// during motion. 0 disables motion bias estimation.
        public var biasMotionTau: Double = 10.0
        /// Largest bias the filter will learn, per axis (rad/s).
        public var biasClip: Double = 2.0 * .pi / 180
        /// Time constant (s) of the bias estimate while at rest.
        public var biasRestTau: Double = 3.0
        /// Rest: gyro within this of its own 0.5 s mean (rad/s) …
        public var restGyro: Double = 2.0 * .pi / 180
        /// … and accelerometer within this of its own mean (m/s²) …
        public var restAccel: Double = 0.5
        /// … for at least this long (s).
        public var restSeconds: Double = 1.5
        /// Time constant (s) of the means the rest detector compares against.
        public var restFilterTau: Double = 0.5
        /// How much of the sample period a rate sample averages, ending at its timestamp, as a
        /// fraction of the period: 1 = all of it (an IMU whose output data rate is its sample rate
        /// reports the rate averaged since the previous sample), 1/N = a sensor read at every N-th
        /// of its samples (`tiltd estimate --rate-divisor N`), 0 = an instantaneous reading. The
        /// filter interpolates the rate between samples accordingly (docs/fusion.md).
        public var rateWindow: Double = 1.0
        /// A step longer than this (s) is a gap: nothing is integrated across it, the tilt restarts
        /// from gravity, heading and bias are kept.
        public var maxGap: Double = 0.5
        /// Time constant (s) with which a clean magnetometer field pulls the heading
        /// (`updateMag`; docs/fusion.md, "Heading"). The magnetometer defaults are VQF's.
        public var magTau: Double = 9.0
        /// Disturbed field: its strength off the learned reference by more than this fraction …
        public var magNormThreshold: Double = 0.1
        /// … or its dip off the reference by more than this (rad).
        public var magDipThreshold: Double = 10 * .pi / 180
        /// Time constant (s) with which the reference follows a clean field.
        public var magRefTau: Double = 20.0
        /// After a disturbance the field must be clean this long (s) before it steers again.
        public var magMinClean: Double = 0.5
        /// A disturbed field becomes the new reference after it has stayed the same in the global
        /// frame for this long (s) while the sensor turned (a new place, not a magnet on the board) …
        public var magNewTime: Double = 20.0
        /// … counting only time turning faster than this (rad/s).
        public var magNewGyro: Double = 20 * .pi / 180

        /// The defaults.
        public init() {}

        /// Names accepted by `set(_:_:)`, for command-line overrides.
        public static let names = [
            "accTau", "accDamping", "accOrder", "biasMotionTau", "biasClip", "biasRestTau",
            "restGyro", "restAccel", "restSeconds", "restFilterTau", "rateWindow", "maxGap",
            "magTau", "magNormThreshold", "magDipThreshold", "magRefTau", "magMinClean", "magNewTime", "magNewGyro",
        ]

        /// Sets a parameter by name (one of `names`), for `tiltd estimate --param` and benchmarks.
        public mutating func set(_ name: String, _ value: Double) throws(ParameterError) {
            guard value.isFinite, value >= 0 else { throw .badValue(name, value) }
            // These divide or set a filter's speed: zero would be meaningless.
            if ["accTau", "biasRestTau", "restFilterTau", "magTau", "magRefTau"].contains(name) && value == 0 {
                throw .badValue(name, value)
            }
            if name == "accOrder" && value != 2 && value != 3 { throw .badValue(name, value) }
            if name == "rateWindow" && value > 1 { throw .badValue(name, value) }
            switch name {
            case "accTau": accTau = value
            case "accDamping": accDamping = value
            case "accOrder": accOrder = value
            case "biasMotionTau": biasMotionTau = value
            case "biasClip": biasClip = value
            case "biasRestTau": biasRestTau = value
            case "restGyro": restGyro = value
            case "restAccel": restAccel = value
            case "restSeconds": restSeconds = value
            case "restFilterTau": restFilterTau = value
            case "rateWindow": rateWindow = value
            case "maxGap": maxGap = value
            case "magTau": magTau = value
            case "magNormThreshold": magNormThreshold = value
            case "magDipThreshold": magDipThreshold = value
            case "magRefTau": magRefTau = value
            case "magMinClean": magMinClean = value
            case "magNewTime": magNewTime = value
            case "magNewGyro": magNewGyro = value
            default: throw .unknown(name)
            }
        }
    }

    /// A rejected parameter override.
    public enum ParameterError: Error, Equatable, CustomStringConvertible {
        case unknown(String)
        case badValue(String, Double)

        /// The parameters, for logs and benches.
        public var description: String {
            switch self {
            case .unknown(let n): "unknown fusion parameter '\(n)' (known: \(Parameters.names.joined(separator: ", ")))"
            case .badValue(let n, let v): "fusion parameter '\(n)' out of range (see docs/fusion.md): \(v)"
            }
        }
    }

    /// Standard gravity (m/s²).
    public static let gravity = 9.80665

    /// The tunables in use.
    public var parameters: Parameters
    /// The current orientation: rotates sensor vectors into the z-up global frame.
    public internal(set) var q = Quaternion.identity
    /// The current gyro bias estimate (rad/s), subtracted from every rate.
    public private(set) var bias = Vector3.zero
    /// True while the rest detector judges the sensor to be still.
    public private(set) var atRest = false

    // The 6-axis orientation (q before the magnetometer's heading) and the heading state; q is
    // exactly q6 until a magnetometer sample has set a heading (MagneticHeading.swift).
    var q6 = Quaternion.identity
    var magnetic = MagneticHeading()
    // Gyro-only orientation (sensor → quasi-inertial frame) and the correction (quasi-inertial → global).
    private var qGyro = Quaternion.identity
    private var correction = Quaternion.identity
    // Second-order low-pass of the accelerometer in the quasi-inertial frame: value and its rate.
    private var accLow = Vector3.zero
    private var accLowRate = Vector3.zero
    private var accLowPre = Vector3.zero
    // The sensor→gyro-frame rotation matrix (rows), low-passed like the accelerometer.
    private var rotLow0 = Vector3.zero, rotLow1 = Vector3.zero, rotLow2 = Vector3.zero
    private var rotLowRate0 = Vector3.zero, rotLowRate1 = Vector3.zero, rotLowRate2 = Vector3.zero
    // Time since the (re)start: until it reaches accTau the low-pass is a plain running mean.
    private var accSeconds = 0.0
    // Rest detector state: means of gyro and accel in the sensor frame, and when stillness began.
    private var restGyroMean = Vector3.zero
    private var restAccMean = Vector3.zero
    private var stillSeconds = 0.0
    private var lastT: Nanoseconds?
    /// True once an IMU sample has started the filter.
    var hasStarted: Bool { lastT != nil }
    private(set) var lastGyro = Vector3.zero

    /// A new estimator; `initialBias` (rad/s) is a known gyro bias, e.g. from the calibration file.
    public init(parameters: Parameters = Parameters(), initialBias: Vector3 = .zero) {
        self.parameters = parameters
        self.bias = initialBias
    }

    /// Forgets the orientation and the rest state (the bias is kept); the next sample starts afresh.
    public mutating func reset() {
        lastT = nil; atRest = false; stillSeconds = 0
        q = .identity; q6 = .identity; qGyro = .identity; correction = .identity
        magnetic.forgetHeading()
        accSeconds = 0
    }

    /// The orientation whose tilt matches `accel` (heading zero).
    public static func tilt(fromGravity accel: Vector3) -> Quaternion {
        // Shortest rotation taking the measured up direction to global z.
        let u = accel.normalized
        guard u != .zero else { return .identity }
        if u.z < -0.999999 { return Quaternion(w: 0, x: 1, y: 0, z: 0) }
        // Rotation from u to ẑ: (1 + u·ẑ, u × ẑ), normalized.
        return Quaternion(w: 1 + u.z, x: u.y, y: -u.x, z: 0).normalized
    }

    /// Feeds one sample; returns the orientation at the sample's time.
    public mutating func update(_ s: IMUSample) -> Attitude {
        guard let last = lastT else {
            start(s)
            return attitude(s.t)
        }
        let dt = Double(s.t &- last) * 1e-9
        // Out-of-order or duplicate timestamps carry no time to integrate: keep the state.
        guard dt > 0 else { return attitude(s.t) }
        if dt > parameters.maxGap {
            restart(s)
            return attitude(s.t)
        }
        lastT = s.t

        // The rate over [last, t]: the rate samples are means over windows of rateWindow·dt ending
        // at their timestamps, i.e. the rate at the windows' centres. Interpolated linearly between
        // the previous sample and this one (extrapolated past this one's centre), the mean over the
        // step is the value at the step's midpoint: a blend of the two samples with weight
        // (1 + rateWindow) / 2 on this one (1: this sample alone; 0: the trapezoidal rule). The
        // two-sample coning term adds the rotation a turning axis makes beyond the mean rate.
        let omega = s.gyro - bias
        let previous = lastGyro - bias
        lastGyro = s.gyro
        let w = (1 + parameters.rateWindow) / 2
        var phi = (omega * w + previous * (1 - w)) * dt
        phi += previous.cross(omega) * (dt * dt / 12)
        qGyro = (qGyro * Self.rotation(phi)).normalized

        detectRest(s, dt: dt)

        // Accelerometer in the quasi-inertial frame, low-passed with a weight for disturbed samples.
        let accI = qGyro.rotate(s.accel)
        lowPass(accI, dt: dt)
        if parameters.biasMotionTau > 0 { lowPassRotation(qGyro, dt: dt) }

        // Correct the tilt so the filtered gravity points up: the shortest rotation taking it to ẑ.
        let up = correction.rotate(accLow).normalized
        let step = Quaternion(w: 1 + up.z, x: up.y, y: -up.x, z: 0).normalized
        correction = (step * correction).normalized
        q6 = (correction * qGyro).normalized
        q = magnetic.apply(to: q6)

        if atRest {
            bias += (restGyroMean - bias) * min(1, dt / parameters.biasRestTau)
        } else if parameters.biasMotionTau > 0 && accSeconds >= parameters.accTau {
            // The correction just applied is how far the filtered gravity drifted in the gyro frame
            // this step. Unremoved bias e (sensor frame) turns the gyro frame at R·e, and the
            // filtered gravity sees that through the same low-pass, i.e. as R̄·e with R̄ the
            // low-passed sensor→gyro-frame rotation matrix. So the step is ≈ −(R̄·e)⊥·dt: a gradient
            // step on the bias with time constant biasMotionTau moves it by −R̄ᵀ·step / tau. While
            // the sensor turns, R̄ shrinks, and so does the (then unreliable) update.
            let stepGyroFrame = correction.conjugate.rotate(Vector3(2 * step.x, 2 * step.y, 0))
            let g = rotLow0 * stepGyroFrame.x + rotLow1 * stepGyroFrame.y + rotLow2 * stepGyroFrame.z
            bias -= g / parameters.biasMotionTau
        }
        let clip = parameters.biasClip
        bias = Vector3(min(max(bias.x, -clip), clip), min(max(bias.y, -clip), clip), min(max(bias.z, -clip), clip))
        return attitude(s.t)
    }

    private func attitude(_ t: Nanoseconds) -> Attitude {
        var a = Attitude(t: t, q: q, atRest: atRest, gyroBias: bias)
        a.magneticHeading = hasMagneticHeading
        a.magDisturbed = magDisturbed
        return a
    }

    /// First sample: orientation from gravity, filters seeded with this sample.
    private mutating func start(_ s: IMUSample) {
        lastT = s.t
        lastGyro = s.gyro
        qGyro = Self.tilt(fromGravity: s.accel)
        correction = .identity
        q6 = qGyro
        q = magnetic.apply(to: q6)
        accLow = qGyro.rotate(s.accel); accLowRate = .zero
        accSeconds = 0
        rotLowRate0 = .zero; rotLowRate1 = .zero; rotLowRate2 = .zero
        restGyroMean = s.gyro; restAccMean = s.accel
        stillSeconds = 0; atRest = false
    }

    /// After a gap: tilt from gravity again, heading kept, bias kept.
    private mutating func restart(_ s: IMUSample) {
        // The 6-axis heading: the magnetometer's is kept apart and applied on top again.
        let yaw = q6.yaw
        start(s)
        qGyro = Quaternion(axis: Vector3(0, 0, 1), angle: yaw) * qGyro
        q6 = qGyro
        q = magnetic.apply(to: q6)
        accLow = qGyro.rotate(s.accel)
    }

    /// Low-passes the rotation matrix of `qg` with the accelerometer's filter (running mean first).
    @inline(__always)
    private mutating func lowPassRotation(_ qg: Quaternion, dt: Double) {
        let (w, x, y, z) = (qg.w, qg.x, qg.y, qg.z)
        let r0 = Vector3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y))
        let r1 = Vector3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x))
        let r2 = Vector3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
        if accSeconds < parameters.accTau {
            // accSeconds was already advanced by lowPass for this sample.
            let a = min(1, dt / max(accSeconds, dt))
            rotLow0 += (r0 - rotLow0) * a; rotLow1 += (r1 - rotLow1) * a; rotLow2 += (r2 - rotLow2) * a
            return
        }
        let wn = 2.0.squareRoot() / parameters.accTau
        let k = wn * wn * dt, d = 2 * parameters.accDamping * wn * dt
        rotLowRate0 += (r0 - rotLow0) * k - rotLowRate0 * d; rotLow0 += rotLowRate0 * dt
        rotLowRate1 += (r1 - rotLow1) * k - rotLowRate1 * d; rotLow1 += rotLowRate1 * dt
        rotLowRate2 += (r2 - rotLow2) * k - rotLowRate2 * d; rotLow2 += rotLowRate2 * dt
    }

    /// Low-passes `accI`. A running mean until `accTau` has passed since the (re)start, so the first
    /// estimate is right at once; then a second-order low-pass (natural frequency √2/accTau, damping
    /// `accDamping`: Butterworth by default), integrated semi-implicitly so any dt works.
    @inline(__always)
    private mutating func lowPass(_ accI: Vector3, dt: Double) {
        if accSeconds < parameters.accTau {
            accSeconds += dt
            accLow += (accI - accLow) * min(1, dt / accSeconds)
            accLowPre = accLow
            return
        }
        let w = 2.0.squareRoot() / parameters.accTau
        var input = accI
        if parameters.accOrder >= 3 {
            accLowPre += (accI - accLowPre) * min(1, w * dt)
            input = accLowPre
        }
        accLowRate += ((input - accLow) * (w * w) - accLowRate * (2 * parameters.accDamping * w)) * dt
        accLow += accLowRate * dt
    }

    /// Rest: both signals stay close to their own short means for `restSeconds`.
    private mutating func detectRest(_ s: IMUSample, dt: Double) {
        let a = min(1, dt / parameters.restFilterTau)
        restGyroMean += (s.gyro - restGyroMean) * a
        restAccMean += (s.accel - restAccMean) * a
        // Steady is not enough (a constant turn is steady): the mean rate must also be one the
        // bias could explain.
        let clip = parameters.biasClip
        let still =
            abs(restGyroMean.x) <= clip && abs(restGyroMean.y) <= clip && abs(restGyroMean.z) <= clip
            && (s.gyro - restGyroMean).normSquared < parameters.restGyro * parameters.restGyro
            && (s.accel - restAccMean).normSquared < parameters.restAccel * parameters.restAccel
        if still {
            stillSeconds += dt
        } else {
            stillSeconds = 0
        }
        atRest = stillSeconds >= parameters.restSeconds
    }

    /// The rotation by the rotation vector `v` (axis × angle, radians).
    @inline(__always)
    static func rotation(_ v: Vector3) -> Quaternion {
        let angle2 = v.normSquared
        // Small steps (below 0.57° per sample, most samples): the series is exact to ~1e-12
        // there and avoids sin/cos.
        if angle2 < 1e-4 {
            let c = 1 - angle2 / 8 + angle2 * angle2 / 384
            let s = 0.5 - angle2 / 48
            return Quaternion(w: c, x: v.x * s, y: v.y * s, z: v.z * s)
        }
        let angle = angle2.squareRoot()
        let s = sin(angle / 2) / angle
        return Quaternion(w: cos(angle / 2), x: v.x * s, y: v.y * s, z: v.z * s)
    }
}
