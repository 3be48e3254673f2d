import Foundation
import TiltCore

/// Writes synthetic tiltd recordings with known sensor errors for the `tiltd calibrate` tests:
/// raw accel = A·f + b (f the true specific force), raw gyro = ω + bias, Gaussian noise from a
/// seeded generator so every run sees the same file.
struct SynthRecording {
    static let g = 9.80665
    private var state: UInt64
    var rateHz = 100.0
    var t: Nanoseconds = 5_000_000_000
    var accelGain = Matrix3.identity
    var accelOffset = Vector3.zero
    var gyroBias = Vector3.zero
    var accelNoise = 0.03
    var gyroNoise = 0.003
    private(set) var samples: [IMUSample] = []

    init(seed: UInt64) { state = seed }

    private mutating func uniform() -> Double {
        // SplitMix64.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
    private mutating func gauss() -> Double {
        let u = max(uniform(), 1e-300), v = uniform()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
    private mutating func noise(_ sigma: Double) -> Vector3 { Vector3(gauss(), gauss(), gauss()) * sigma }

    private mutating func emit(_ q: Quaternion, rate: Vector3) {
        let f = q.conjugate.rotate(Vector3(0, 0, Self.g))
        samples.append(IMUSample(t: t, accel: accelGain * f + accelOffset + noise(accelNoise),
                                 gyro: rate + gyroBias + noise(gyroNoise)))
        t += Nanoseconds((1e9 / rateHz).rounded())
    }

    /// Holds attitude `q` (sensor → world) still.
    mutating func still(_ q: Quaternion, seconds: Double) {
        for _ in 0..<Int((seconds * rateHz).rounded()) { emit(q, rate: .zero) }
    }

    /// Turns at a constant body rate; returns the attitude reached.
    @discardableResult
    mutating func turn(from q: Quaternion, rate: Vector3, seconds: Double) -> Quaternion {
        var q = q
        for _ in 0..<Int((seconds * rateHz).rounded()) {
            emit(q, rate: rate)
            q = (q * Quaternion(axis: rate, angle: rate.norm / rateHz)).normalized
        }
        return q
    }

    /// Turns smoothly from `a` to `b` at a constant body rate; returns `b` as reached.
    @discardableResult
    mutating func turn(from a: Quaternion, to b: Quaternion, seconds: Double) -> Quaternion {
        var rel = a.conjugate * b
        if rel.w < 0 { rel = Quaternion(w: -rel.w, x: -rel.x, y: -rel.y, z: -rel.z) }
        let angle = 2 * acos(min(1, rel.w))
        guard angle > 1e-9 else { still(b, seconds: seconds); return b }
        return turn(from: a, rate: rel.vector.normalized * (angle / seconds), seconds: seconds)
    }

    /// The attitude with the named sensor axis pointing up ("+X", "-Z", …).
    static func faceUp(_ face: String) -> Quaternion {
        switch face {
        case "+Z": return .identity
        case "-Z": return Quaternion(axis: Vector3(1, 0, 0), angle: .pi)
        case "+X": return Quaternion(axis: Vector3(0, 1, 0), angle: -.pi / 2)
        case "-X": return Quaternion(axis: Vector3(0, 1, 0), angle: .pi / 2)
        case "+Y": return Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2)
        default: return Quaternion(axis: Vector3(1, 0, 0), angle: -.pi / 2)
        }
    }

    /// Writes the samples in tiltd's recording format.
    func write(to path: String) throws {
        var text = RecordingFormat.banner + "\n" + RecordingFormat.header + "\n"
        for s in samples { text += RecordingFormat.format(s) + "\n" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
