// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// The pose the wearer holds when "upright", captured for relative mode.
public struct NeutralPose: Sendable, Equatable {
    /// Sample time of the attitude it was captured from.
    public var t: Nanoseconds
    /// The world's up direction seen in the sensor frame at capture (unit).
    public var up: Vector3
    /// The configured back axis with its part along `up` removed (unit, perpendicular to `up`):
    /// tilting the head down turns `up` toward it.
    public var back: Vector3
}

/// Turns an attitude into the game's tilt angle (degrees): 90 = upright, smaller = tilted
/// down, larger = tilted up.
///
/// **Mount convention (absolute mode).** The IMU sits on the headband with its x axis along the
/// ear-to-ear line and its z axis pointing toward the back of the head (its y axis then points
/// up: roll = +90°; or the board is turned over in its own plane so y points down and x the
/// other way: roll = −90°). Nodding turns the head about x, which is exactly what the attitude's
/// roll measures (roll = angle of the world's up direction in the sensor's y–z plane), and it is
/// unaffected by heading (yaw) and by leaning the head sideways (pitch). Tilting down brings z up,
/// so |roll| falls toward 0; tilting up brings z down, so |roll| rises toward 180. Using |roll|
/// makes both ways of turning the board in its plane give the same angle.
///
/// **Relative mode.** For a board mounted any way round: at capture we note the world's up
/// direction u₀ in the sensor frame and the back axis b (perpendicular to u₀). Later, with u
/// the current up direction in the sensor frame, the nod angle is φ = atan2(u·b, u·u₀): the
/// angle of u within the plane of u₀ and b, i.e. the rotation about the ear-to-ear axis u₀ × b,
/// with the sideways part (rotation about b) ignored just as roll ignores pitch. φ > 0 is a tilt
/// down. The tilt angle is 90° − φ, so the same thresholds serve both modes and, for the
/// standard mount, relative and absolute mode give the same angle.
public enum TiltMeter {
    /// Degrees per radian.
    @usableFromInline static let degrees = 180.0 / Double.pi

    /// The world's up direction in the sensor frame: the third row of the rotation matrix of
    /// `q` (which rotates sensor vectors into the z-up world).
    @inlinable public static func upInSensor(_ q: Quaternion) -> Vector3 {
        Vector3(2 * (q.x * q.z - q.w * q.y), 2 * (q.y * q.z + q.w * q.x), 1 - 2 * (q.x * q.x + q.y * q.y))
    }

    /// Absolute mode: |roll| in degrees, in [0, 180].
    @inlinable public static func absoluteTilt(_ q: Quaternion) -> Double {
        let u = upInSensor(q)
        return abs(atan2(u.y, u.z)) * degrees
    }

    /// Relative mode: 90° − the nod from `neutral`, degrees, in (−90, 270].
    @inlinable public static func relativeTilt(_ q: Quaternion, neutral: NeutralPose) -> Double {
        let u = upInSensor(q)
        return 90 - atan2(u.dot(neutral.back), u.dot(neutral.up)) * degrees
    }

    /// Smallest sine of the angle between the back axis and up for a usable capture (20°):
    /// closer to vertical, the ear-to-ear axis would be too ill-defined to measure nods about.
    public static let minBackAxisSine = sin(20 * Double.pi / 180)

    /// Captures a neutral pose from `q`, or nil when the back axis is within 20° of vertical
    /// (or `q` is not a finite rotation).
    public static func neutralPose(t: Nanoseconds, q: Quaternion, backAxis: Vector3) -> NeutralPose? {
        let up = upInSensor(q).normalized
        let b = backAxis.normalized
        let perpendicular = b - up * b.dot(up)
        let n = perpendicular.norm
        guard n.isFinite, up.norm > 0.5, n >= minBackAxisSine else { return nil }
        return NeutralPose(t: t, up: up, back: perpendicular / n)
    }
}
