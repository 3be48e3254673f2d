// SPDX-License-Identifier: Apache-2.0
// TiltCore depends on TiltProtocol, not the reverse: the core builds the lines it emits (game,
// place, quest and credit events, replies) from the protocol's types, and TiltProtocol — the wire
// model every client links — stays free of the core's estimator, game and places. Not re-exported:
// each file that speaks the wire imports TiltProtocol itself, so `import TiltProtocol` shows where.
import TiltProtocol

extension AttitudeBody {
    /// The `attitude` line of `a`: degrees, and no yaw or bias when the heading is unknown.
    @inlinable
    public init(_ a: Attitude) {
        let deg = 180.0 / Double.pi
        self.init(
            q: WireQuaternion(w: a.q.w, x: a.q.x, y: a.q.y, z: a.q.z), rollDeg: a.roll * deg,
            pitchDeg: a.pitch * deg, yawDeg: a.hasYaw ? a.yaw * deg : nil, atRest: a.atRest,
            gyroBias: a.hasYaw ? Triple(a.gyroBias.x, a.gyroBias.y, a.gyroBias.z) : nil)
    }

    /// The `attitude` line of `a` with its heading (`HeadingProvider`).
    public init(_ a: Attitude, heading h: HeadingProvider.Heading) {
        self.init(a)
        headingDeg = h.magneticDeg; trueHeadingDeg = h.trueDeg
        headingSource = h.source; magDisturbed = h.magDisturbed
    }
}

extension SampleBody {
    /// The `sample` line of `s`: no `gyro` for an accelerometer-only IMU.
    @inlinable
    public init(_ s: IMUSample) {
        self.init(
            accel: Triple(s.accel.x, s.accel.y, s.accel.z),
            gyro: s.hasGyro ? Triple(s.gyro.x, s.gyro.y, s.gyro.z) : nil)
    }
}

extension Event {
    /// The `attitude` line of `a`, at its sample time.
    public static func attitude(_ a: Attitude) -> Event { Event(.attitude, t: a.t, .attitude(AttitudeBody(a))) }
    /// The `attitude` line of `a` with its heading, at its sample time.
    public static func attitude(_ a: Attitude, heading: HeadingProvider.Heading) -> Event {
        Event(.attitude, t: a.t, .attitude(AttitudeBody(a, heading: heading)))
    }
    /// The `sample` line of `s`, at its sample time.
    public static func sample(_ s: IMUSample) -> Event { Event(.sample, t: s.t, .sample(SampleBody(s))) }
    /// A `fix` line, stamped with the fix's time.
    public static func fix(_ f: Fix) -> Event { fix(FixBody(f)) }
    /// A `fix` line's fields (also `fix` in `hello` and `status`).
    public static func fixFields(_ f: Fix) -> JSONObject { FixBody(f).object }
}

extension FixBody {
    /// What gpsd reported, as the line carries it.
    public init(_ f: Fix) {
        self.init(
            mode: f.mode, timeNs: f.time, lat: f.lat, lon: f.lon, altM: f.alt, speedMps: f.speed, trackDeg: f.track,
            ephM: f.eph, epvM: f.epv, clockOffsetS: f.clockOffset)
    }
}

extension JSONWriter {
    /// Writes `[x,y,z]` with at most `digits` decimals.
    public mutating func vector(_ v: Vector3, digits: Int) { vector(v.x, v.y, v.z, digits: digits) }
    /// Writes `"k":[x,y,z]` with at most `digits` decimals.
    public mutating func field(_ k: String, _ v: Vector3, digits: Int) { key(k); vector(v, digits: digits) }
}

extension JSONValue {
    /// A vector as [x, y, z].
    public static func vector(_ v: Vector3) -> JSONValue { .array([.number(v.x), .number(v.y), .number(v.z)]) }
}
