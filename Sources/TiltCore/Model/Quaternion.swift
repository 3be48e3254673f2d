// SPDX-License-Identifier: Apache-2.0
import Glibc

/// A unit quaternion, scalar first. `q.rotate(v)` turns a sensor-frame vector into the
/// z-up global frame (v_global = q ⊗ v ⊗ q⁻¹), the convention of the BROAD dataset and of tiltd's output.
public struct Quaternion: Sendable, Equatable, Codable {
    /// The components, scalar first.
    public var w: Double, x: Double, y: Double, z: Double

    /// A quaternion from its components (not normalised).
    @inlinable public init(w: Double, x: Double, y: Double, z: Double) {
        self.w = w; self.x = x; self.y = y; self.z = z
    }

    /// No rotation.
    public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)

    /// Rotation by `angle` radians about `axis` (need not be unit length).
    public init(axis: Vector3, angle: Double) {
        let a = axis.normalized
        let s = sin(angle / 2)
        self.init(w: cos(angle / 2), x: a.x * s, y: a.y * s, z: a.z * s)
    }

    /// From aerospace Z-Y-X Euler angles (yaw about z, then pitch about y, then roll about x), radians.
    public init(roll: Double, pitch: Double, yaw: Double) {
        let cr = cos(roll / 2), sr = sin(roll / 2)
        let cp = cos(pitch / 2), sp = sin(pitch / 2)
        let cy = cos(yaw / 2), sy = sin(yaw / 2)
        self.init(
            w: cr * cp * cy + sr * sp * sy,
            x: sr * cp * cy - cr * sp * sy,
            y: cr * sp * cy + sr * cp * sy,
            z: cr * cp * sy - sr * sp * cy)
    }

    /// The vector part (x, y, z).
    @inlinable public var vector: Vector3 { Vector3(x, y, z) }
    /// The conjugate: the inverse rotation for a unit quaternion.
    @inlinable public var conjugate: Quaternion { Quaternion(w: w, x: -x, y: -y, z: -z) }
    /// The length (1 for a rotation).
    @inlinable public var norm: Double { (w * w + x * x + y * y + z * z).squareRoot() }
    /// Scaled to unit length (identity for a zero quaternion).
    @inlinable public var normalized: Quaternion {
        let n = norm
        guard n > 0, n.isFinite else { return .identity }
        return Quaternion(w: w / n, x: x / n, y: y / n, z: z / n)
    }

    /// The Hamilton product: rotation `b`, then `a`.
    @inlinable public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
        Quaternion(
            w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w)
    }

    /// Rotates `v` by this (unit) quaternion.
    @inlinable public func rotate(_ v: Vector3) -> Vector3 {
        // v + 2w(u×v) + 2u×(u×v), with u the vector part: cheaper than two products.
        let u = vector
        let t = 2 * u.cross(v)
        return v + w * t + u.cross(t)
    }

    /// Roll (about x), radians in (-π, π]. Z-Y-X convention.
    public var roll: Double { atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y)) }
    /// Pitch (about y), radians in [-π/2, π/2].
    public var pitch: Double { asin(max(-1, min(1, 2 * (w * y - z * x)))) }
    /// Yaw (about z), radians in (-π, π].
    public var yaw: Double { atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)) }

    /// The angle of the rotation from `self` to `other`, radians in [0, π].
    public func angle(to other: Quaternion) -> Double {
        let d = abs(w * other.w + x * other.x + y * other.y + z * other.z)
        return 2 * acos(min(1, d))
    }
}
