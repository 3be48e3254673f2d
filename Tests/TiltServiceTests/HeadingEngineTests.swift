// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import NIOPosix
import Synchronization
import TestSupport
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltSensors
import XCTest

@testable import TiltService

/// The heading on the socket: the engine's `attitude` lines, fed synthetic attitudes (with and
/// without a magnetometer heading) and fixes, read back by a real client.
final class HeadingEngineTests: XCTestCase {
    static let deg = Double.pi / 180
    static let second: Nanoseconds = 1_000_000_000
    /// 2025-01-01T00:00:00Z and 2027-07-02T12:00:00Z: the dates of NOAA's WMM2025 test values.
    static let start2025: Nanoseconds = 1_735_689_600 * second
    static let mid2027: Nanoseconds = 1_814_529_600 * second

    /// The wearer (the assumed head frame: sensor y up, z to the back of the head) facing
    /// `heading` degrees clockwise from north, in an x-east, y-north, z-up world.
    static func facing(_ heading: Double) -> Quaternion {
        Quaternion(axis: Vector3(0, 0, 1), angle: -heading * deg) * Quaternion(axis: Vector3(1, 0, 0), angle: .pi / 2)
    }

    /// Runs `body` with the engine on its loop. The closure captures the engine, not the
    /// fixture: a fixture whose last reference the loop drops would stop its server on the loop,
    /// a wait there that NIO refuses.
    static func onEngine<T: Sendable>(_ f: ServerFixture, _ body: @escaping @Sendable (Engine) -> T) -> T {
        nonisolated(unsafe) let engine = f.engine
        return try! f.hub.loop.submit { body(engine) }.wait()
    }

    /// One sample and its attitude at `t` (s), magnetic or not, on the engine's loop.
    static func ingest(_ f: ServerFixture, t: Double, q: Quaternion, magnetic: Bool, disturbed: Bool = false) {
        let ns = Nanoseconds(t * 1e9)
        onEngine(f) { engine in
            var a = Attitude(t: ns, q: q, atRest: false, gyroBias: .zero)
            a.magneticHeading = magnetic
            a.magDisturbed = disturbed
            engine.ingest(sample: IMUSample(t: ns, accel: Vector3(0, 9.81, 0), gyro: .zero), attitude: a)
        }
    }

    /// A client that gets every attitude line.
    static func client(_ f: ServerFixture) throws -> LineClient {
        let c = try LineClient(path: f.path)
        _ = try c.next("hello")
        _ = try c.request(#"{"cmd":"watch","id":1,"attitude_hz":1000}"#, id: 1)
        return c
    }

    /// The attitude line of the sample at `t` seconds.
    static func line(_ c: LineClient, at t: Double) throws -> JSONValue {
        try c.next("attitude") { $0["t_ns"]?.intValue == Int64(t * 1e9) }
    }

    /// `true_heading_deg` − `heading_deg` on the wire is the model's declination at the fix, at
    /// three of NOAA's published WMM2025 test points (WorldMagneticModelTests has all twelve).
    func testTrueHeadingIsMagneticPlusTheDeclinationAtThePublishedTestPoints() throws {
        let f = try ServerFixture()
        let c = try Self.client(f)
        // (fix time, latitude, longitude, published declination): 80° N 0° E at 2025.0, 0° N
        // 120° E and 80° S 240° E (−120°, as a receiver reports it) at 2027.5.
        let points: [(Nanoseconds, Double, Double, Double)] = [
            (Self.start2025, 80, 0, 1.28), (Self.mid2027, 0, 120, -0.24), (Self.mid2027, -80, -120, 68.49),
        ]
        var t = 100.0
        for (time, lat, lon, published) in points {
            Self.onEngine(f) { $0.ingest(fix: Fix(mode: 3, time: time, lat: lat, lon: lon, alt: 0, speed: 0)) }
            t += 1
            Self.ingest(f, t: t, q: Self.facing(30), magnetic: true)
            let a = try Self.line(c, at: t)
            let label = "\(lat), \(lon): \(a.jsonText)"
            XCTAssertEqual(a["heading_source"], "mag", label)
            XCTAssertEqual(a["mag_disturbed"], .bool(false), label)
            let magnetic = try XCTUnwrap(a["heading_deg"]?.doubleValue, label)
            let trueHeading = try XCTUnwrap(a["true_heading_deg"]?.doubleValue, label)
            XCTAssertEqual(magnetic, 30, accuracy: 0.05, label)
            XCTAssertEqual(remainder(trueHeading - magnetic, 360), published, accuracy: 0.1, label)
            let status = Self.onEngine(f) { $0.statusFields() }
            XCTAssertEqual(status["heading"]?["source"], "mag")
            XCTAssertEqual(status["heading"]?["declination_deg"]?.doubleValue ?? .nan, published, accuracy: 0.0051)
        }
    }

    /// Without a magnetometer: the course while walking with a fresh fix, none once stopped or
    /// when the fix is stale; every other field as before, and no `mag_disturbed`.
    func testWithoutAMagnetometerTheCourseWhileMovingElseNone() throws {
        let f = try ServerFixture()
        let c = try Self.client(f)
        let q = Self.facing(250)
        Self.ingest(f, t: 10, q: q, magnetic: false)
        let before = try Self.line(c, at: 10)
        XCTAssertEqual(before["heading_source"], "none", before.jsonText)
        for k in ["heading_deg", "true_heading_deg", "mag_disturbed"] { XCTAssertNil(before[k], before.jsonText) }
        // The other fields are the attitude's, as an old daemon wrote them.
        let plain = Event.attitude(Attitude(t: 10 * Self.second, q: q, atRest: false, gyroBias: .zero)).encode(seq: 0)
        let old = try JSONParser.parse(String(decoding: plain.dropLast(), as: UTF8.self))
        for (k, v) in old.objectValue!.entries where k != "seq" { XCTAssertEqual(before[k], v, k) }

        // Walking at 1.4 m/s (above [course] on_speed) with a course of 200°, in Berlin, 2027.
        let walking = Fix(mode: 3, time: Self.mid2027, lat: 52.52, lon: 13.40, alt: 34, speed: 1.4, track: 200)
        Self.onEngine(f) { $0.ingest(fix: walking) }
        Self.ingest(f, t: 11, q: q, magnetic: false)
        let moving = try Self.line(c, at: 11)
        XCTAssertEqual(moving["heading_source"], "course", moving.jsonText)
        XCTAssertEqual(moving["true_heading_deg"]?.doubleValue, 200, moving.jsonText)
        let declination = try XCTUnwrap(
            Self.onEngine(f) { $0.statusFields() }["heading"]?["declination_deg"]?.doubleValue)
        XCTAssertEqual(declination, 5.5, accuracy: 1.5, "Berlin's declination is a few degrees east")
        XCTAssertEqual(moving["heading_deg"]?.doubleValue ?? .nan, 200 - declination, accuracy: 0.06, moving.jsonText)
        XCTAssertNil(moving["mag_disturbed"], moving.jsonText)
        // The fix came after the sample at 10 s: its age counts from there on the IMU's time
        // line. 3 s without a fix: still the course; after that, stale.
        Self.ingest(f, t: 13, q: q, magnetic: false)
        XCTAssertEqual(try Self.line(c, at: 13)["heading_source"], "course")
        Self.ingest(f, t: 13.5, q: q, magnetic: false)
        XCTAssertEqual(try Self.line(c, at: 13.5)["heading_source"], "none")
        // Moving again, then stopped: the course filter takes the track away.
        Self.onEngine(f) { $0.ingest(fix: walking) }
        Self.ingest(f, t: 15, q: q, magnetic: false)
        XCTAssertEqual(try Self.line(c, at: 15)["heading_source"], "course")
        let stopped = Fix(mode: 3, time: Self.mid2027, lat: 52.52, lon: 13.40, alt: 34, speed: 0.1)
        Self.onEngine(f) { $0.ingest(fix: stopped) }
        Self.ingest(f, t: 15.5, q: q, magnetic: false)
        XCTAssertEqual(try Self.line(c, at: 15.5)["heading_source"], "none")
    }

    /// The chain with a magnetometer: mag, mag while briefly disturbed (held on the gyro), the
    /// course once disturbed for over a minute while walking, mag again when the field is clean.
    func testMagnetometerFirstThenTheCourseWhenDisturbedTooLong() throws {
        let f = try ServerFixture()
        let c = try Self.client(f)
        let q = Self.facing(90)
        let walking = Fix(mode: 3, time: Self.mid2027, lat: 52.52, lon: 13.40, speed: 1.4, track: 10)
        Self.onEngine(f) { $0.ingest(fix: walking) }
        Self.ingest(f, t: 20, q: q, magnetic: true)
        XCTAssertEqual(try Self.line(c, at: 20)["heading_source"], "mag")
        Self.ingest(f, t: 21, q: q, magnetic: true, disturbed: true)
        let held = try Self.line(c, at: 21)
        XCTAssertEqual(held["heading_source"], "mag", held.jsonText)
        XCTAssertEqual(held["mag_disturbed"], .bool(true), held.jsonText)
        XCTAssertEqual(held["heading_deg"]?.doubleValue ?? .nan, 90, accuracy: 0.05, held.jsonText)
        Self.ingest(f, t: 81.5, q: q, magnetic: true, disturbed: true)
        Self.onEngine(f) { $0.ingest(fix: walking) }
        Self.ingest(f, t: 82, q: q, magnetic: true, disturbed: true)
        let long = try Self.line(c, at: 82)
        XCTAssertEqual(long["heading_source"], "course", long.jsonText)
        XCTAssertEqual(long["true_heading_deg"]?.doubleValue, 10, long.jsonText)
        XCTAssertEqual(long["mag_disturbed"], .bool(true), long.jsonText)
        Self.ingest(f, t: 83, q: q, magnetic: true)
        let clean = try Self.line(c, at: 83)
        XCTAssertEqual(clean["heading_source"], "mag", clean.jsonText)
        XCTAssertEqual(clean["mag_disturbed"], .bool(false), clean.jsonText)
    }

    /// A fix's date outside WMM2025 gives no declination: `status` says so, and a course has no
    /// magnetic heading.
    func testOutsideTheModelsYearsStatusSaysSo() throws {
        let f = try ServerFixture()
        let c = try Self.client(f)
        let may2024: Nanoseconds = 1_714_816_801 * Self.second
        Self.onEngine(f) { $0.ingest(fix: Fix(mode: 3, time: may2024, lat: 52.52, lon: 13.40, speed: 1.4, track: 80)) }
        Self.ingest(f, t: 5, q: Self.facing(0), magnetic: false)
        let a = try Self.line(c, at: 5)
        XCTAssertEqual(a["heading_source"], "course", a.jsonText)
        XCTAssertEqual(a["true_heading_deg"]?.doubleValue, 80, a.jsonText)
        XCTAssertNil(a["heading_deg"], a.jsonText)
        let status = try c.request(#"{"cmd":"status","id":2}"#, id: 2)
        XCTAssertEqual(status["heading"]?["source"], "course", status.jsonText)
        XCTAssertEqual(status["heading"]?["model"], "WMM-2025", status.jsonText)
        XCTAssertNil(status["heading"]?["declination_deg"], status.jsonText)
        let note = status["heading"]?["model_note"]?.stringValue ?? ""
        XCTAssertTrue(note.contains("2024.34") && note.contains("2025.0–2030.0"), note)
    }

    /// The sampler is given the field the model expects at the first fix, and again only when
    /// the place changes it noticeably.
    func testTheSamplerIsSeededWithTheModelsFieldAtTheFix() throws {
        let sampler = SeedRecorder()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let hub = HubHandle(loop: group.next())
        nonisolated(unsafe) var made: Engine?
        try hub.submit {
            made = Engine(
                hub: $0, config: Configuration(), logger: Logger(label: "test"),
                services: EngineServices(sampler: sampler))
        }.wait()
        nonisolated(unsafe) let engine = made!
        func fix(_ lat: Double, _ lon: Double, _ time: Nanoseconds) throws {
            try hub.loop.submit { engine.ingest(fix: Fix(mode: 3, time: time, lat: lat, lon: lon, alt: 0)) }.wait()
        }
        XCTAssertTrue(sampler.seeds.withLock { $0.isEmpty })
        // 80° N 0° E at 2025.0: NOAA's test value X 6521.6, Y 145.9, Z 54791.5 nT.
        try fix(80, 0, Self.start2025)
        let expected = (strength: 55.1785, dip: atan2(54791.5, (6521.6 * 6521.6 + 145.9 * 145.9).squareRoot()))
        var seeds = sampler.seeds.withLock { $0 }
        XCTAssertEqual(seeds.count, 1)
        XCTAssertEqual(seeds.first?.strength ?? 0, expected.strength, accuracy: 0.001)
        XCTAssertEqual(seeds.first?.dip ?? 0, expected.dip, accuracy: 1e-5)
        // A few metres on, a second later: the same field; not seeded again.
        try fix(80.0001, 0, Self.start2025 + Self.second)
        XCTAssertEqual(sampler.seeds.withLock { $0.count }, 1)
        // The equator: another field.
        try fix(0, 120, Self.mid2027)
        seeds = sampler.seeds.withLock { $0 }
        XCTAssertEqual(seeds.count, 2)
        XCTAssertEqual(seeds.last?.dip ?? 0, atan2(-10381.8, 39702.0), accuracy: 1e-4)
    }
}

/// A sampler that only records the magnetic reference seeds it is given.
final class SeedRecorder: SamplerControl {
    let seeds = Mutex<[(strength: Double, dip: Double)]>([])
    func prepare(_ config: Configuration) throws(ConfigError) -> SensorPipeline {
        throw config.error("imu.device", "no sampler in this test")
    }
    func replace(with pipeline: SensorPipeline) {}
    func seedMagneticReference(strength: Double, dip: Double) { seeds.withLock { $0.append((strength, dip)) } }
}
