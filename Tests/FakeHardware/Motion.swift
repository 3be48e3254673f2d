// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore

/// A known motion of a rigid IMU, giving the ideal SI readings (after the mount matrix, i.e. in
/// the frame tiltd reports) at any time: the sensor starts at `start` and turns at a constant
/// body-frame rate. A static tilt is a motion with zero rate.
public struct Motion: Sendable {
    /// Orientation at t = 0 (rotates sensor-frame vectors into the z-up global frame).
    public var start: Quaternion
    /// Body-frame angular rate, rad/s.
    public var bodyRate: Vector3

    public init(start: Quaternion, bodyRate: Vector3) {
        self.start = start; self.bodyRate = bodyRate
    }

    /// At rest, rolled and pitched by the given angles (radians).
    public static func staticTilt(roll: Double, pitch: Double) -> Motion {
        Motion(start: Quaternion(roll: roll, pitch: pitch, yaw: 0), bodyRate: .zero)
    }

    /// Level, turning about the vertical at `rate` rad/s (accel stays (0, 0, g)).
    public static func constantYaw(rate: Double) -> Motion {
        Motion(start: .identity, bodyRate: Vector3(0, 0, rate))
    }

    /// Orientation at `seconds` after the start.
    public func orientation(at seconds: Double) -> Quaternion {
        let angle = bodyRate.norm * seconds
        guard angle > 0 else { return start }
        return (start * Quaternion(axis: bodyRate.normalized, angle: angle)).normalized
    }

    /// Ideal readings at `seconds`: gravity reaction in the body frame, and the body rate.
    public func reading(at seconds: Double) -> (accel: Vector3, gyro: Vector3) {
        let q = orientation(at: seconds)
        return (q.conjugate.rotate(Vector3(0, 0, FakeIIODevice.g)), bodyRate)
    }
}

extension Matrix3 {
    /// The inverse (mount matrices are rotations, but a general inverse costs nothing here).
    public var inverse: Matrix3 {
        let d = determinant
        precondition(abs(d) > 1e-12, "singular mount matrix")
        let c0 = r1.cross(r2), c1 = r2.cross(r0), c2 = r0.cross(r1)
        return Matrix3(c0 / d, c1 / d, c2 / d).transposed
    }
}

extension FakeIIODevice {
    /// Raw counts for an SI vector in tiltd's (mounted) frame, inverting what a reader does:
    /// SI = M · ((raw + offset) · scale). Rounded to the nearest count and clamped to the range.
    public func rawCounts(_ si: Vector3, group: FakeChannelGroup) -> [Int64] {
        let sensor = mountMatrix(for: group).inverse * si
        return [sensor.x, sensor.y, sensor.z].map { v in
            let raw = (v / group.scaleValue - group.offsetValue).rounded()
            let r = group.scanType.rawRange
            return Int64(max(Double(r.lowerBound), min(Double(r.upperBound), raw)))
        }
    }

    /// What a correct reader decodes from `rawCounts`: the SI vector after quantisation.
    public func decoded(_ raw: [Int64], group: FakeChannelGroup) -> Vector3 {
        let v = Vector3(Double(raw[0]), Double(raw[1]), Double(raw[2]))
        return mountMatrix(for: group)
            * ((v + Vector3(group.offsetValue, group.offsetValue, group.offsetValue)) * group.scaleValue)
    }
}
