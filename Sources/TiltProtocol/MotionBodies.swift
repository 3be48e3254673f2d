// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

// `t_ns` on the wire is `Nanoseconds`, the platform clocks' type (TiltPlatform/Clocks.swift): the
// IMU's sample clock, or GPS time for the classes that say so (`EventClass.usesGPSTime`).

/// Three numbers written as `[x,y,z]` (accelerations, rates, a gyro bias).
public struct Triple: Sendable, Equatable {
    /// The components.
    public var x, y, z: Double
    /// A triple.
    public init(_ x: Double, _ y: Double, _ z: Double) { self.x = x; self.y = y; self.z = z }

    /// Reads `[x,y,z]`; nil unless three numbers.
    public init?(_ v: JSONValue?) {
        guard let a = v?.arrayValue, a.count == 3, let x = a[0].doubleValue, let y = a[1].doubleValue,
            let z = a[2].doubleValue
        else { return nil }
        self.init(x, y, z)
    }
}

/// An orientation quaternion on the wire, `q` of an `attitude` line: `[w,x,y,z]`.
public struct WireQuaternion: Sendable, Equatable {
    /// The scalar part, then the vector part.
    public var w, x, y, z: Double
    /// A quaternion.
    public init(w: Double, x: Double, y: Double, z: Double) { self.w = w; self.x = x; self.y = y; self.z = z }
}

/// Where an `attitude` line's `heading_deg` comes from (docs/protocol.md).
public enum HeadingSource: String, Sendable, Equatable, CaseIterable {
    /// The magnetometer (9-axis fusion): `heading_deg` is magnetic.
    case mag
    /// The GPS course over ground while moving (no magnetometer, or its field disturbed too long).
    case course
    /// No heading known: no magnetometer and not moving with a fix.
    case none
}

/// The body of an `attitude` line (docs/protocol.md): the daemon encodes it and clients decode it
/// from this one declaration. Angles are in degrees as on the wire; `yawDeg` and `gyroBias` are
/// absent without a gyroscope (the heading is unknown).
public struct AttitudeBody: Sendable, Equatable {
    /// Rotates sensor-frame vectors into the z-up global frame.
    public var q: WireQuaternion
    /// Roll, degrees.
    public var rollDeg: Double
    /// Pitch, degrees.
    public var pitchDeg: Double
    /// Yaw, degrees; nil when the heading is unknown.
    public var yawDeg: Double?
    /// Whether the estimator judges the sensor to be at rest.
    public var atRest: Bool
    /// The gyro bias estimate, rad/s; nil without a gyroscope.
    public var gyroBias: Triple?
    /// Heading, degrees clockwise from magnetic north, 0–360; nil when `headingSource` is `none`.
    public var headingDeg: Double?
    /// Heading, degrees clockwise from true north (declination from the World Magnetic Model at
    /// the latest fix); nil without a heading or without a fix.
    public var trueHeadingDeg: Double?
    /// Where the heading comes from; nil on lines from a daemon that predates headings.
    public var headingSource: HeadingSource?
    /// True while the magnetometer's field is judged disturbed; nil without a magnetometer.
    public var magDisturbed: Bool?

    /// An attitude body.
    public init(
        q: WireQuaternion, rollDeg: Double, pitchDeg: Double, yawDeg: Double?, atRest: Bool, gyroBias: Triple?,
        headingDeg: Double? = nil, trueHeadingDeg: Double? = nil, headingSource: HeadingSource? = nil,
        magDisturbed: Bool? = nil
    ) {
        self.q = q; self.rollDeg = rollDeg; self.pitchDeg = pitchDeg; self.yawDeg = yawDeg
        self.atRest = atRest; self.gyroBias = gyroBias
        self.headingDeg = headingDeg; self.trueHeadingDeg = trueHeadingDeg
        self.headingSource = headingSource; self.magDisturbed = magDisturbed
    }

    /// Writes the fields after `class`, `seq` and `t_ns`, at the precision the protocol promises.
    public func write(into w: inout JSONWriter) {
        w.key(literal: "q")
        w.beginArray()
        w.double(q.w, digits: 6); w.double(q.x, digits: 6); w.double(q.y, digits: 6); w.double(q.z, digits: 6)
        w.endArray()
        w.key(literal: "roll_deg"); w.double(rollDeg, digits: 2)
        w.key(literal: "pitch_deg"); w.double(pitchDeg, digits: 2)
        if let yawDeg { w.key(literal: "yaw_deg"); w.double(yawDeg, digits: 2) }
        w.key(literal: "at_rest"); w.bool(atRest)
        if let b = gyroBias { w.key(literal: "gyro_bias"); w.vector(b.x, b.y, b.z, digits: 5) }
        if let headingDeg { w.key(literal: "heading_deg"); w.double(headingDeg, digits: 1) }
        if let trueHeadingDeg { w.key(literal: "true_heading_deg"); w.double(trueHeadingDeg, digits: 1) }
        if let headingSource { w.key(literal: "heading_source"); w.string(headingSource.rawValue) }
        if let magDisturbed { w.key(literal: "mag_disturbed"); w.bool(magDisturbed) }
    }

    /// Reads an `attitude` line's fields; nil when a required one is missing or mistyped.
    public init?(_ o: JSONObject) {
        guard let qa = o["q"]?.arrayValue, qa.count == 4, let w = qa[0].doubleValue, let x = qa[1].doubleValue,
            let y = qa[2].doubleValue, let z = qa[3].doubleValue, let roll = o["roll_deg"]?.doubleValue,
            let pitch = o["pitch_deg"]?.doubleValue
        else { return nil }
        self.init(
            q: WireQuaternion(w: w, x: x, y: y, z: z), rollDeg: roll, pitchDeg: pitch,
            yawDeg: o["yaw_deg"]?.doubleValue, atRest: o["at_rest"]?.boolValue ?? false,
            gyroBias: Triple(o["gyro_bias"]), headingDeg: o["heading_deg"]?.doubleValue,
            trueHeadingDeg: o["true_heading_deg"]?.doubleValue,
            headingSource: o["heading_source"]?.stringValue.flatMap(HeadingSource.init(rawValue:)),
            magDisturbed: o["mag_disturbed"]?.boolValue)
    }
}

/// The body of a `sample` line: calibrated acceleration (m/s²) and, with a gyroscope, rates (rad/s).
public struct SampleBody: Sendable, Equatable {
    /// Acceleration, m/s², gravity included.
    public var accel: Triple
    /// Angular rate, rad/s; nil without a gyroscope.
    public var gyro: Triple?

    /// A sample body.
    public init(accel: Triple, gyro: Triple?) { self.accel = accel; self.gyro = gyro }

    /// Writes the fields after `class`, `seq` and `t_ns`.
    public func write(into w: inout JSONWriter) {
        w.key(literal: "accel"); w.vector(accel.x, accel.y, accel.z, digits: 4)
        if let g = gyro { w.key(literal: "gyro"); w.vector(g.x, g.y, g.z, digits: 5) }
    }

    /// Reads a `sample` line's fields.
    public init?(_ o: JSONObject) {
        guard let a = Triple(o["accel"]) else { return nil }
        self.init(accel: a, gyro: Triple(o["gyro"]))
    }
}
