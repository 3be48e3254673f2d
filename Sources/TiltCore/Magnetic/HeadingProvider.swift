// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform
import TiltProtocol

/// Which way the wearer faces, and where that comes from (docs/fusion.md, "Heading on the
/// socket"): the magnetometer's heading while the attitude has one, else the GPS course over
/// ground while moving with a fresh fix, else none. The World Magnetic Model's declination at
/// the latest fix turns a magnetic heading into a true one, and a course (which is true) into a
/// magnetic one.
///
/// The heading is the direction the head frame's forward axis points, projected on the
/// horizontal, in degrees clockwise from north, 0 ≤ h < 360. Pure: it judges times only from
/// the attitudes' and the fixes' own (a fix's age is counted on the IMU's time line, from the
/// attitude it arrived after), and reads no clock.
public struct HeadingProvider: Sendable {
    /// What counts as fresh and as disturbed for too long.
    public struct Parameters: Sendable, Equatable {
        /// A fix's course is used for this long after it arrived (IMU time line, ns). gpsd reports
        /// once a second: 3 s lets two reports go missing before the course is dropped.
        public var courseMaxAge: Nanoseconds = 3_000_000_000
        /// A magnetometer heading disturbed for longer than this (ns) gives way to the course,
        /// when there is one: the gyro has carried it alone that long (VQF's
        /// `magMaxRejectionTime` is the same 60 s).
        public var maxDisturbed: Nanoseconds = 60_000_000_000

        /// The defaults.
        public init() {}
    }

    /// One attitude's heading, as the `attitude` line carries it.
    public struct Heading: Sendable, Equatable {
        /// Degrees clockwise from magnetic north, 0–360; nil without a heading or, for a course,
        /// without a declination.
        public var magneticDeg: Double?
        /// Degrees clockwise from true north, 0–360; nil without a heading or, for a magnetic
        /// heading, without a declination.
        public var trueDeg: Double?
        /// Where it comes from.
        public var source: HeadingSource
        /// Whether the magnetometer's field is judged disturbed; nil without a magnetometer.
        public var magDisturbed: Bool?

        /// A heading.
        public init(magneticDeg: Double?, trueDeg: Double?, source: HeadingSource, magDisturbed: Bool?) {
            self.magneticDeg = magneticDeg; self.trueDeg = trueDeg; self.source = source
            self.magDisturbed = magDisturbed
        }
    }

    /// The model's answer at the latest positioned, timed fix.
    public enum Declination: Sendable, Equatable {
        /// No fix with a position and a time yet.
        case unknown
        /// The field there (nT) and the fix's date (decimal year).
        case known(WorldMagneticModel.Field, year: Double)
        /// The fix's date (decimal year) is outside the model's validity: no declination, rather
        /// than an extrapolated one.
        case outsideModel(year: Double)
    }

    /// The thresholds.
    public var parameters: Parameters
    /// The magnetic model (WMM2025 unless a test gives another).
    public let model: WorldMagneticModel
    /// The declination at the latest positioned, timed fix.
    public private(set) var declination: Declination = .unknown
    /// The course of the latest fix (degrees from true north) while moving, and the IMU time it
    /// arrived at (nil: stamped by the next attitude).
    private var course: (deg: Double, at: Nanoseconds?)?
    /// Since when the magnetometer's field has been disturbed (IMU time).
    private var disturbedSince: Nanoseconds?

    /// A provider with `model` (WMM2025 by default).
    public init(parameters: Parameters = Parameters(), model: WorldMagneticModel = .wmm2025) {
        self.parameters = parameters; self.model = model
    }

    /// Declination in degrees east of true north, when the model gives one at the latest fix.
    public var declinationDeg: Double? {
        if case .known(let f, _) = declination { return f.declination }
        return nil
    }

    /// A fix, after the course filter (`CourseFilter`: its `track` only while moving). `t` is the
    /// latest IMU sample time when it arrived (nil before the first: the next attitude stamps it).
    /// A fix without a position or time keeps the declination of the last one that had them.
    public mutating func ingest(fix: Fix, at t: Nanoseconds?) {
        if fix.hasPosition, let track = fix.track, track.isFinite {
            course = (track, t)
        } else {
            course = nil
        }
        guard let p = fix.point, p.isValid, let time = fix.time else { return }
        let year = WorldMagneticModel.decimalYear(unixNanoseconds: time)
        guard model.validYears.contains(year) else {
            declination = .outsideModel(year: year)
            return
        }
        let height = (fix.alt ?? 0) / 1000
        declination = .known(
            model.field(latitude: p.lat, longitude: p.lon, height: height.isFinite ? height : 0, decimalYear: year),
            year: year)
    }

    /// The heading at attitude `a`, the head frame in use giving the forward axis.
    public mutating func heading(for a: Attitude, frame: HeadFrame) -> Heading {
        let magDisturbed: Bool? = a.magneticHeading ? a.magDisturbed : nil
        if a.magneticHeading && a.magDisturbed {
            if disturbedSince == nil || a.t < disturbedSince! { disturbedSince = a.t }
        } else {
            disturbedSince = nil
        }
        let courseDeg = freshCourse(at: a.t)
        let disturbedTooLong = disturbedSince.map { a.t - $0 > parameters.maxDisturbed } ?? false
        let d = declinationDeg
        if a.magneticHeading, !(disturbedTooLong && courseDeg != nil),
            let m = Self.facing(a.q, forward: frame.forward, up: frame.up)
        {
            return Heading(
                magneticDeg: Self.normalized(m), trueDeg: d.map { Self.normalized(m + $0) }, source: .mag,
                magDisturbed: magDisturbed)
        }
        if let c = courseDeg {
            return Heading(
                magneticDeg: d.map { Self.normalized(c - $0) }, trueDeg: Self.normalized(c), source: .course,
                magDisturbed: magDisturbed)
        }
        return Heading(magneticDeg: nil, trueDeg: nil, source: .none, magDisturbed: magDisturbed)
    }

    /// The latest course while it is fresh at IMU time `t`.
    private mutating func freshCourse(at t: Nanoseconds) -> Double? {
        guard var c = course else { return nil }
        // Stamped now when it came before any sample, or when the IMU's time line restarted
        // behind it (a new sampler after a reload, a replay started again).
        if c.at == nil || t < c.at! {
            c.at = t
            course = c
        }
        return t - c.at! <= parameters.courseMaxAge ? c.deg : nil
    }

    /// The direction the forward axis faces, degrees clockwise from the frame's y axis (north),
    /// for `q` rotating sensor vectors into an x-east, y-north, z-up frame. The forward axis is
    /// projected on the horizontal; as it tilts towards vertical the up axis, whose tilt then
    /// points the same way (forward when looking down, backward when looking up), is blended in
    /// — w = f − f_z·u — so looking straight down still has a heading, and a level head's is the
    /// forward axis's alone. Nil only where no direction is defined (w vertical, which needs the
    /// head upside down).
    public static func facing(_ q: Quaternion, forward: Vector3, up: Vector3) -> Double? {
        let f = q.rotate(forward), u = q.rotate(up)
        let x = f.x - f.z * u.x, y = f.y - f.z * u.y
        guard (x * x + y * y).squareRoot() > 1e-6, x.isFinite, y.isFinite else { return nil }
        return atan2(x, y) * 180 / .pi
    }

    /// `deg` in 0 ≤ h < 360, such that it does not print as 360 (or −0) at the protocol's 0.1°.
    public static func normalized(_ deg: Double) -> Double {
        var h = deg.truncatingRemainder(dividingBy: 360)
        if h < 0 { h += 360 }
        // −0 (from a remainder of −0 or −360) would print as "-0".
        return h >= 359.95 || h == 0 ? 0 : h
    }
}
