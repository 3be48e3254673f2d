import Foundation
import TiltCore

/// Deterministic synthetic IMU data for the calibration tests: a seeded generator, Gaussian
/// noise, and a sensor model with known errors (raw = A·f + b for the true specific force f).
struct SynthIMU {
    /// SplitMix64: small, seeded, the same on every machine.
    struct RNG {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }
        /// Standard normal (Box–Muller).
        mutating func gauss() -> Double {
            let u = max(uniform(), 1e-300), v = uniform()
            return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
        }
        mutating func gauss3(_ sigma: Double) -> Vector3 { Vector3(gauss(), gauss(), gauss()) * sigma }
    }

    static let g = 9.80665
    var rng: RNG
    var rateHz = 100.0
    var t: Nanoseconds = 1_000_000_000
    /// Accelerometer gain matrix A and offset b (raw = A·f + b).
    var accelGain = Matrix3.identity
    var accelOffset = Vector3.zero
    var gyroBias = Vector3.zero
    var accelNoise = 0.03
    var gyroNoise = 0.003
    var samples: [IMUSample] = []

    init(seed: UInt64) { rng = RNG(state: seed) }

    var dtNs: Nanoseconds { Nanoseconds((1e9 / rateHz).rounded()) }

    /// The specific force at rest in the sensor frame for attitude `q` (sensor → world).
    static func gravityInSensor(_ q: Quaternion) -> Vector3 { q.conjugate.rotate(Vector3(0, 0, g)) }

    /// Holds attitude `q` still for `seconds`.
    mutating func still(_ q: Quaternion, seconds: Double) {
        let f = Self.gravityInSensor(q)
        for _ in 0..<Int((seconds * rateHz).rounded()) {
            let a = accelGain * f + accelOffset + rng.gauss3(accelNoise)
            samples.append(IMUSample(t: t, accel: a, gyro: gyroBias + rng.gauss3(gyroNoise)))
            t += dtNs
        }
    }

    /// Turns at constant `rate` (rad/s, sensor frame) from `q` for `seconds`; returns the end attitude.
    @discardableResult
    mutating func turn(from q: Quaternion, rate: Vector3, seconds: Double) -> Quaternion {
        var q = q
        let dt = 1 / rateHz
        for _ in 0..<Int((seconds * rateHz).rounded()) {
            let f = Self.gravityInSensor(q)
            let a = accelGain * f + accelOffset + rng.gauss3(accelNoise)
            samples.append(IMUSample(t: t, accel: a, gyro: rate + gyroBias + rng.gauss3(gyroNoise)))
            t += dtNs
            q = (q * Quaternion(axis: rate, angle: rate.norm * dt)).normalized
        }
        return q
    }

    /// The attitude with `face` up (that sensor axis along world +z), tilted by `tiltDeg` about a random horizontal axis.
    mutating func faceUp(_ face: AccelCalibration.Face, tiltDeg: Double = 0) -> Quaternion {
        let base: Quaternion
        switch face {
        case .plusZ: base = .identity
        case .minusZ: base = Quaternion(axis: Vector3(1, 0, 0), angle: .pi)
        case .plusX: base = Quaternion(axis: Vector3(0, 1, 0), angle: -.pi / 2)
        case .minusX: base = Quaternion(axis: Vector3(0, 1, 0), angle: .pi / 2)
        case .plusY: base = Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2)
        case .minusY: base = Quaternion(axis: Vector3(1, 0, 0), angle: -.pi / 2)
        }
        guard tiltDeg > 0 else { return base }
        let phi = rng.uniform() * 2 * .pi
        return (Quaternion(axis: Vector3(cos(phi), sin(phi), 0), angle: tiltDeg * .pi / 180) * base).normalized
    }
}
