// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltPlatform
import XCTest

/// HeadingProvider: the direction the head faces, the chain magnetometer → course → none, and
/// true north from the World Magnetic Model at the fix.
final class HeadingProviderTests: XCTestCase {
    static let deg = Double.pi / 180
    static let second: Nanoseconds = 1_000_000_000
    /// 2027-07-02T12:00:00Z (decimal year 2027.5).
    static let mid2027: Nanoseconds = 1_814_529_600 * 1_000_000_000

    /// The wearer (assumed head frame: sensor y up, z to the back of the head) facing `heading`
    /// degrees clockwise from (magnetic) north, the face pitched `down` degrees.
    static func head(facing heading: Double, down: Double = 0) -> Quaternion {
        // Sensor → ENU for a level head facing north: x → east, y → up, z → south (x by +90°);
        // nodding down turns about the wearer's left (sensor −x); facing θ turns about up by −θ.
        let level = Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2)
        let nod = Quaternion(axis: Vector3(-1, 0, 0), angle: down * deg)
        return Quaternion(axis: Vector3(0, 0, 1), angle: -heading * deg) * level * nod
    }

    static func attitude(t: Nanoseconds, q: Quaternion, magnetic: Bool, disturbed: Bool = false) -> Attitude {
        var a = Attitude(t: t, q: q, atRest: false, gyroBias: .zero)
        a.magneticHeading = magnetic
        a.magDisturbed = disturbed
        return a
    }

    func testFacingIsTheForwardAxisOnTheHorizontalAndSurvivesLookingDown() throws {
        let f = HeadFrame.assumed
        for heading in [0.0, 30, 90, 179, 200, 359] {
            for down in [-60.0, -10, 0, 45, 80, 90] {
                let q = Self.head(facing: heading, down: down)
                let h = try XCTUnwrap(HeadingProvider.facing(q, forward: f.forward, up: f.up), "\(heading) \(down)")
                XCTAssertEqual(
                    remainder(h - heading, 360), 0, accuracy: 1e-9, "facing \(heading)°, looking down \(down)°")
            }
        }
        // A head turned on its side still faces where its forward axis points.
        let leaning = Self.head(facing: 120) * Quaternion(axis: Vector3(0, 0, 1), angle: 30 * Self.deg)
        XCTAssertEqual(HeadingProvider.facing(leaning, forward: f.forward, up: f.up)!, 120, accuracy: 1e-9)
    }

    func testMagneticHeadingWithoutAFixHasNoTrueHeading() {
        var p = HeadingProvider()
        let h = p.heading(for: Self.attitude(t: Self.second, q: Self.head(facing: 75), magnetic: true), frame: .assumed)
        XCTAssertEqual(h.source, .mag)
        XCTAssertEqual(h.magneticDeg!, 75, accuracy: 1e-9)
        XCTAssertNil(h.trueDeg)
        XCTAssertEqual(h.magDisturbed, false)
    }

    /// True − magnetic is the model's declination at the fix; a course is true, its magnetic
    /// heading is the course − declination.
    func testTrueHeadingAddsTheDeclinationAtTheFix() {
        var p = HeadingProvider()
        // Mid-2027 at 0° N 120° E and 80° S 240° E: NOAA's test values, declination −0.24° and 68.49°.
        for (lat, lon, d) in [(0.0, 120.0, -0.24), (-80.0, -120.0, 68.49)] {
            p.ingest(fix: Fix(mode: 3, time: Self.mid2027, lat: lat, lon: lon, alt: 0), at: Self.second)
            XCTAssertEqual(p.declinationDeg!, d, accuracy: 0.0051)
            let h = p.heading(
                for: Self.attitude(t: 2 * Self.second, q: Self.head(facing: 10), magnetic: true), frame: .assumed)
            XCTAssertEqual(h.magneticDeg!, 10, accuracy: 1e-9)
            XCTAssertEqual(h.trueDeg!, HeadingProvider.normalized(10 + p.declinationDeg!), accuracy: 1e-9)
        }
        // West of north wraps below 0: 2 − 68.49 + 360.
        p.ingest(fix: Fix(mode: 3, time: Self.mid2027, lat: -80, lon: 240, speed: 2, track: 2), at: 3 * Self.second)
        let c = p.heading(for: Self.attitude(t: 3 * Self.second, q: .identity, magnetic: false), frame: .assumed)
        XCTAssertEqual(c.source, .course)
        XCTAssertEqual(c.trueDeg!, 2, accuracy: 1e-9)
        XCTAssertEqual(c.magneticDeg!, 2 - p.declinationDeg! + 360, accuracy: 1e-9)
        XCTAssertNil(c.magDisturbed, "no magnetometer")
    }

    /// Outside the model's years there is no declination (not an extrapolated one), and the
    /// provider says why.
    func testADateOutsideTheModelGivesNoDeclination() {
        var p = HeadingProvider()
        let may2024: Nanoseconds = 1_714_816_801_000_000_000
        p.ingest(fix: Fix(mode: 3, time: may2024, lat: 52.5, lon: 13.4, speed: 1.5, track: 80), at: Self.second)
        guard case .outsideModel(let year) = p.declination else { return XCTFail("\(p.declination)") }
        XCTAssertEqual(year, 2024.34, accuracy: 0.01)
        let c = p.heading(for: Self.attitude(t: Self.second, q: .identity, magnetic: false), frame: .assumed)
        XCTAssertEqual(c.source, .course)
        XCTAssertEqual(c.trueDeg, 80)
        XCTAssertNil(c.magneticDeg)
        // A later fix without a position or a time keeps what the last one said.
        p.ingest(fix: Fix(mode: 1), at: 2 * Self.second)
        XCTAssertEqual(p.declination, .outsideModel(year: year))
    }

    /// mag → mag while briefly disturbed → course once disturbed too long while moving → none
    /// when the course goes stale or the wearer stops, for an IMU without a magnetometer.
    func testTheSourceChain() {
        var p = HeadingProvider()
        let q = Self.head(facing: 45)
        func at(_ s: Double, magnetic: Bool, disturbed: Bool = false) -> HeadingProvider.Heading {
            p.heading(
                for: Self.attitude(t: Nanoseconds(s * 1e9), q: q, magnetic: magnetic, disturbed: disturbed),
                frame: .assumed)
        }
        let moving = Fix(mode: 3, time: Self.mid2027, lat: 52.5, lon: 13.4, speed: 1.4, track: 300)
        p.ingest(fix: moving, at: 10 * Self.second)
        XCTAssertEqual(at(10, magnetic: true).source, .mag, "the magnetometer comes first")
        let brief = at(11, magnetic: true, disturbed: true)
        XCTAssertEqual(brief.source, .mag, "briefly disturbed: held on the gyro")
        XCTAssertEqual(brief.magDisturbed, true)
        XCTAssertEqual(brief.magneticDeg!, 45, accuracy: 1e-9)
        p.ingest(fix: moving, at: 70 * Self.second)
        XCTAssertEqual(at(70, magnetic: true, disturbed: true).source, .mag, "59 s disturbed")
        let long = at(72, magnetic: true, disturbed: true)
        XCTAssertEqual(long.source, .course, "61 s disturbed and moving: the course")
        XCTAssertEqual(long.trueDeg, 300)
        XCTAssertEqual(long.magDisturbed, true)
        XCTAssertEqual(at(74, magnetic: true, disturbed: true).source, .mag, "the course is stale: the gyro's")
        XCTAssertEqual(at(75, magnetic: true).source, .mag)

        // Without a magnetometer: the course while moving and fresh, none otherwise.
        XCTAssertEqual(at(75, magnetic: false).source, .none, "stale course")
        p.ingest(fix: moving, at: 80 * Self.second)
        let course = at(80.5, magnetic: false)
        XCTAssertEqual(course.source, .course)
        XCTAssertEqual(course.trueDeg, 300)
        XCTAssertNil(course.magDisturbed)
        XCTAssertEqual(at(83, magnetic: false).source, .course, "3 s old")
        XCTAssertEqual(at(83.5, magnetic: false).source, .none, "3.5 s old")
        // Stopped: the course filter took the track away.
        p.ingest(fix: Fix(mode: 3, time: Self.mid2027, lat: 52.5, lon: 13.4, speed: 0.1), at: 84 * Self.second)
        let stopped = at(84, magnetic: false)
        XCTAssertEqual(
            stopped, HeadingProvider.Heading(magneticDeg: nil, trueDeg: nil, source: .none, magDisturbed: nil))
        XCTAssertNotNil(p.declinationDeg, "the declination stays")
    }

    /// A fix before the first sample is stamped by the next attitude; a time line that starts
    /// again (a new sampler) restamps it instead of calling it billions of seconds old.
    func testCourseAgeIsCountedOnTheIMUTimeLine() {
        var p = HeadingProvider()
        p.ingest(fix: Fix(mode: 3, lat: 1, lon: 2, speed: 2, track: 90), at: nil)
        let a = Self.attitude(t: 500 * Self.second, q: .identity, magnetic: false)
        XCTAssertEqual(p.heading(for: a, frame: .assumed).source, .course)
        var later = a
        later.t = 504 * Self.second
        XCTAssertEqual(p.heading(for: later, frame: .assumed).source, .none)
        p.ingest(fix: Fix(mode: 3, lat: 1, lon: 2, speed: 2, track: 90), at: 504 * Self.second)
        var restarted = a
        restarted.t = Self.second
        XCTAssertEqual(p.heading(for: restarted, frame: .assumed).source, .course)
    }

    func testNormalizedNeverPrints360OrMinusZero() {
        XCTAssertEqual(HeadingProvider.normalized(-0.0).sign, .plus)
        XCTAssertEqual(HeadingProvider.normalized(-360), 0)
        XCTAssertEqual(HeadingProvider.normalized(359.96), 0)
        XCTAssertEqual(HeadingProvider.normalized(-10), 350)
        XCTAssertEqual(HeadingProvider.normalized(725), 5)
    }
}
