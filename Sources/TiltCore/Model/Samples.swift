// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

// `Nanoseconds` (TiltProtocol): the sensor's clock (the kernel's IIO timestamp, or a recording's
// time). All time in tiltd's core comes from samples, never from the wall clock, so replays are exact.

/// One IMU sample in SI units: acceleration in m/s² (gravity included, +g upward at rest on the
/// axis pointing up) and angular rate in rad/s, both in the sensor (body) frame.
public struct IMUSample: Sendable, Equatable {
    /// Sample time (the sensor's clock), ns.
    public var t: Nanoseconds
    /// Acceleration, m/s², sensor frame, gravity included.
    public var accel: Vector3
    /// Angular rate, rad/s, sensor frame (zero when `hasGyro` is false).
    public var gyro: Vector3
    /// False for a device with no gyroscope (`gyro` is then zero and meaningless).
    public var hasGyro: Bool

    /// A sample; `hasGyro` false for an accelerometer-only IMU.
    public init(t: Nanoseconds, accel: Vector3, gyro: Vector3, hasGyro: Bool = true) {
        self.t = t; self.accel = accel; self.gyro = gyro; self.hasGyro = hasGyro
    }

    /// A sample from an accelerometer-only device.
    public init(t: Nanoseconds, accelOnly accel: Vector3) {
        self.init(t: t, accel: accel, gyro: .zero, hasGyro: false)
    }
}

/// One magnetometer sample: the field in µT in the sensor frame (the accelerometer's axes, after
/// the driver's scale and the mount matrix). Magnetometers run at their own rate, usually 10–100 Hz,
/// interleaved in time with the IMU's samples.
public struct MagSample: Sendable, Equatable {
    /// Sample time (the same clock as the IMU's samples), ns.
    public var t: Nanoseconds
    /// Magnetic field, µT, sensor frame.
    public var field: Vector3

    /// A sample.
    public init(t: Nanoseconds, field: Vector3) { self.t = t; self.field = field }
}

/// The estimated orientation at one sample time.
public struct Attitude: Sendable, Equatable {
    /// Sample time this attitude belongs to.
    public var t: Nanoseconds
    /// Rotates sensor-frame vectors into the z-up global frame.
    public var q: Quaternion
    /// True while the estimator judges the sensor to be at rest.
    public var atRest: Bool
    /// The current gyro bias estimate (rad/s), already removed from the rates.
    public var gyroBias: Vector3
    /// False when the heading is unknown (tilt from the accelerometer only): `q` has yaw 0.
    public var hasYaw: Bool
    /// True once a magnetometer has set the heading: `q`'s yaw is then magnetic (x east, y magnetic
    /// north, z up). False without a magnetometer: the yaw is the gyro's, from an arbitrary zero.
    public var magneticHeading: Bool = false
    /// True while the magnetometer's field is judged disturbed (the heading then rests on the gyro).
    public var magDisturbed: Bool = false

    /// An attitude; `hasYaw` false when yaw is unknown (no gyro).
    public init(t: Nanoseconds, q: Quaternion, atRest: Bool, gyroBias: Vector3, hasYaw: Bool = true) {
        self.t = t; self.q = q; self.atRest = atRest; self.gyroBias = gyroBias; self.hasYaw = hasYaw
    }

    /// Roll, radians (Z-Y-X Euler).
    public var roll: Double { q.roll }
    /// Pitch, radians (Z-Y-X Euler).
    public var pitch: Double { q.pitch }
    /// Yaw, radians (Z-Y-X Euler).
    public var yaw: Double { q.yaw }
}

/// A GPS position report, as gpsd's TPV gives it. Optional fields are absent when unknown.
public struct Fix: Sendable, Equatable {
    /// 0 = unknown, 1 = no fix, 2 = 2D, 3 = 3D (gpsd's `mode`).
    public var mode: Int
    /// Fix time, nanoseconds since the Unix epoch (GPS time as reported), if known.
    public var time: Nanoseconds?
    /// Latitude, degrees (WGS 84).
    public var lat: Double?
    /// Longitude, degrees (WGS 84).
    public var lon: Double?
    /// Altitude above mean sea level, metres.
    public var alt: Double?
    /// Ground speed, m/s.
    public var speed: Double?
    /// Course over ground, degrees from true north.
    public var track: Double?
    /// Horizontal position uncertainty (95 %), metres.
    public var eph: Double?
    /// Vertical position uncertainty (95 %), metres.
    public var epv: Double?
    /// Seconds from the host's system clock to `time`, set by a live source only when they are
    /// more than a day apart (a receiver's GPS week-number rollover, or a host clock not set).
    public var clockOffset: Double?

    /// A fix; unknown values nil.
    public init(
        mode: Int, time: Nanoseconds? = nil, lat: Double? = nil, lon: Double? = nil,
        alt: Double? = nil, speed: Double? = nil, track: Double? = nil,
        eph: Double? = nil, epv: Double? = nil
    ) {
        self.mode = mode; self.time = time; self.lat = lat; self.lon = lon; self.alt = alt
        self.speed = speed; self.track = track; self.eph = eph; self.epv = epv
    }

    /// True when the fix has a usable horizontal position.
    public var hasPosition: Bool { mode >= 2 && lat != nil && lon != nil }
}
