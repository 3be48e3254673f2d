/// Nanoseconds: `t_ns` on the wire — the IMU's sample clock, or GPS time for the classes that
/// say so (`EventClass.usesGPSTime`). TiltCore's model uses the same unit.
public typealias Nanoseconds = Int64

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

    /// An attitude body.
    public init(
        q: WireQuaternion, rollDeg: Double, pitchDeg: Double, yawDeg: Double?, atRest: Bool, gyroBias: Triple?
    ) {
        self.q = q; self.rollDeg = rollDeg; self.pitchDeg = pitchDeg; self.yawDeg = yawDeg
        self.atRest = atRest; self.gyroBias = gyroBias
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
            gyroBias: Triple(o["gyro_bias"]))
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
