// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform
import TiltProtocol

/// Which way the head points, seen in the sensor frame: the wearer's forward, left and up
/// directions while looking straight ahead (a right-handed frame: left = up × forward).
///
/// Both gesture vocabularies work in this frame: a nod is a rotation about `left` (positive =
/// face down, by the right-hand rule), a shake one about `up` (positive = turning left), and a
/// sideways lean one about `forward`. `tiltd calibrate neutral` learns it (look ahead, then nod
/// down once, see `HeadFrameCalibration`); without it one learned from wear (`learned`,
/// `HeadFrameLearner`, `[game] head_frame = "learn"`) once confident, else the documented mount
/// convention (`assumed`): the sensor's +y points up and +z to the back of the head, so +x points right.
public struct HeadFrame: Sendable, Equatable {
    /// Where the frame came from.
    public enum Source: String, Sendable, CaseIterable {
        /// The documented mount convention; nothing was measured.
        case assumed
        /// Measured by `tiltd calibrate neutral` (or given in the calibration file).
        case calibrated
        /// Learned from ordinary wear (`HeadFrameLearner`): up from walking, made level with the
        /// ear-to-ear axis, which comes from the head's tilts outside walking.
        case learned
    }

    /// The direction the face points when looking ahead (sensor frame, unit).
    public private(set) var forward: Vector3
    /// The wearer's left (sensor frame, unit): the axis nods turn about.
    public private(set) var left: Vector3
    /// Up while looking ahead (sensor frame, unit): the axis shakes turn about.
    public private(set) var up: Vector3
    /// Measured or assumed.
    public var source: Source

    /// The convention the game has always documented: y up, z toward the back of the head.
    public static let assumed = HeadFrame(up: Vector3(0, 1, 0), forward: Vector3(0, 0, -1), source: .assumed)!

    /// A frame from an up and a forward direction (sensor frame). `forward` need only be
    /// roughly perpendicular to `up`: its part along `up` is removed. Nil when either is not
    /// finite or they are within 20° of each other (the forward direction would be ill-defined).
    public init?(up: Vector3, forward: Vector3, source: Source) {
        let u = up.normalized
        guard u.norm > 0.5, u.x.isFinite, u.y.isFinite, u.z.isFinite else { return nil }
        let f = forward - u * forward.dot(u)
        let fn = f.norm
        guard fn.isFinite, forward.norm > 0, fn / forward.norm >= sin(20 * Double.pi / 180) else { return nil }
        self.up = u
        self.forward = f / fn
        self.left = u.cross(self.forward)
        self.source = source
    }

    /// The nod rate (about `left`, positive = face down) of a sensor-frame angular rate.
    @inlinable public func pitchRate(_ w: Vector3) -> Double { w.dot(left) }
    /// The shake rate (about `up`, positive = turning left).
    @inlinable public func yawRate(_ w: Vector3) -> Double { w.dot(up) }
    /// The sideways-lean rate (about `forward`, positive = right ear down).
    @inlinable public func rollRate(_ w: Vector3) -> Double { w.dot(forward) }

    /// The neutral pose this frame stands for: tilts measured from looking ahead.
    public func neutralPose(t: Nanoseconds) -> NeutralPose {
        NeutralPose(t: t, up: up, back: -forward)
    }

    /// The angle of the rotation that takes this frame onto `other`, degrees (0 when they are
    /// the same; it bounds how far any of the three axes moved).
    public func rotationDegrees(to other: HeadFrame) -> Double {
        acos(max(-1, min(1, (trace(with: other) - 1) / 2))) * 180 / .pi
    }

    /// True when the rotation onto `other` is `degrees` or more: `rotationDegrees(to:)` without
    /// the acos (the angle falls as the trace rises), for checks made every sample.
    public func isRotated(atLeast degrees: Double, from other: HeadFrame) -> Bool {
        trace(with: other) <= 1 + 2 * cos(degrees * .pi / 180)
    }

    /// The trace of the rotation between the frames: the axes' dot products summed.
    private func trace(with other: HeadFrame) -> Double {
        up.dot(other.up) + forward.dot(other.forward) + left.dot(other.left)
    }

    /// The frame as JSON for `hello`/`status`: `{"source","forward","up"}`.
    public var json: JSONObject {
        var o = JSONObject()
        o["source"] = .string(source.rawValue)
        o["forward"] = .vector(Vector3(round4(forward.x), round4(forward.y), round4(forward.z)))
        o["up"] = .vector(Vector3(round4(up.x), round4(up.y), round4(up.z)))
        return o
    }

    private func round4(_ d: Double) -> Double { (d * 1e4).rounded() / 1e4 }

    /// The frame as kept between runs: `{"up":[x,y,z],"forward":[x,y,z]}` at full precision.
    public var stateJSON: JSONObject {
        ["up": .vector(up), "forward": .vector(forward), "source": .string(source.rawValue)]
    }

    /// A frame kept by `stateJSON`, with `source`; nil for anything else (a damaged file).
    public init?(stateJSON o: JSONValue, source: Source) {
        func vector(_ key: String) -> Vector3? {
            guard case .array(let a)? = o[key], a.count == 3 else { return nil }
            let d = a.compactMap(\.doubleValue)
            return d.count == 3 ? Vector3(d[0], d[1], d[2]) : nil
        }
        guard let u = vector("up"), let f = vector("forward") else { return nil }
        self.init(up: u, forward: f, source: source)
    }
}
