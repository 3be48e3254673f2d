// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltPlatform

extension SplitMix64 {
    /// Uniform in [0, 1), for test data.
    public mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }
    /// Standard normal (Box–Muller).
    public mutating func gauss() -> Double {
        let u = max(uniform(), 1e-300), v = uniform()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
    /// Three independent normal components times `sigma`.
    public mutating func gauss3(_ sigma: Double) -> Vector3 { Vector3(gauss(), gauss(), gauss()) * sigma }
}

/// Deterministic synthetic IMU data with known sensor errors, for the calibration tests:
/// raw accel = A·f + b (f the true specific force), raw gyro = ω + bias, Gaussian noise from a
/// seeded generator, so every run sees the same samples.
public struct SyntheticIMU {
    public static let g = 9.80665
    public var rng: SplitMix64
    public var rateHz = 100.0
    public var t: Nanoseconds
    /// Accelerometer gain matrix A and offset b (raw = A·f + b).
    public var accelGain = Matrix3.identity
    public var accelOffset = Vector3.zero
    public var gyroBias = Vector3.zero
    public var accelNoise = 0.03
    public var gyroNoise = 0.003
    public private(set) var samples: [IMUSample] = []

    public init(seed: UInt64, t0: Nanoseconds = 1_000_000_000) {
        rng = SplitMix64(seed: seed)
        t = t0
    }

    public var dtNs: Nanoseconds { Nanoseconds((1e9 / rateHz).rounded()) }

    /// The specific force at rest in the sensor frame for attitude `q` (sensor → world).
    public static func gravityInSensor(_ q: Quaternion) -> Vector3 { q.conjugate.rotate(Vector3(0, 0, g)) }

    private mutating func emit(_ q: Quaternion, rate: Vector3) {
        let a = accelGain * Self.gravityInSensor(q) + accelOffset + rng.gauss3(accelNoise)
        samples.append(IMUSample(t: t, accel: a, gyro: rate + gyroBias + rng.gauss3(gyroNoise)))
        t += dtNs
    }

    /// Holds attitude `q` still for `seconds`.
    public mutating func still(_ q: Quaternion, seconds: Double) {
        for _ in 0..<Int((seconds * rateHz).rounded()) { emit(q, rate: .zero) }
    }

    /// Turns at constant `rate` (rad/s, sensor frame) from `q` for `seconds`; returns the end attitude.
    @discardableResult
    public mutating func turn(from q: Quaternion, rate: Vector3, seconds: Double) -> Quaternion {
        var q = q
        for _ in 0..<Int((seconds * rateHz).rounded()) {
            emit(q, rate: rate)
            q = (q * Quaternion(axis: rate, angle: rate.norm / rateHz)).normalized
        }
        return q
    }

    /// Turns smoothly from `a` to `b` at a constant body rate; returns `b` as reached.
    @discardableResult
    public mutating func turn(from a: Quaternion, to b: Quaternion, seconds: Double) -> Quaternion {
        var rel = a.conjugate * b
        if rel.w < 0 { rel = Quaternion(w: -rel.w, x: -rel.x, y: -rel.y, z: -rel.z) }
        let angle = 2 * acos(min(1, rel.w))
        guard angle > 1e-9 else { still(b, seconds: seconds); return b }
        return turn(from: a, rate: rel.vector.normalized * (angle / seconds), seconds: seconds)
    }

    /// The attitude with `face` up (that sensor axis along world +z).
    public static func faceUp(_ face: AccelCalibration.Face) -> Quaternion {
        switch face {
        case .plusZ: return .identity
        case .minusZ: return Quaternion(axis: Vector3(1, 0, 0), angle: .pi)
        case .plusX: return Quaternion(axis: Vector3(0, 1, 0), angle: -.pi / 2)
        case .minusX: return Quaternion(axis: Vector3(0, 1, 0), angle: .pi / 2)
        case .plusY: return Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2)
        case .minusY: return Quaternion(axis: Vector3(1, 0, 0), angle: -.pi / 2)
        }
    }

    /// `face` up, tilted by `tiltDeg` about a random horizontal axis.
    public mutating func faceUp(_ face: AccelCalibration.Face, tiltDeg: Double = 0) -> Quaternion {
        let base = Self.faceUp(face)
        guard tiltDeg > 0 else { return base }
        let phi = rng.uniform() * 2 * .pi
        return (Quaternion(axis: Vector3(cos(phi), sin(phi), 0), angle: tiltDeg * .pi / 180) * base).normalized
    }

    /// Writes the samples in tiltd's recording format.
    public func write(to path: String) throws {
        var text = RecordingFormat.banner + "\n" + RecordingFormat.header + "\n"
        for s in samples { text += RecordingFormat.format(s) + "\n" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
