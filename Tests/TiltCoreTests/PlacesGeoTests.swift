// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol
import XCTest

@testable import TiltCore

/// Finds the repository root (the directory holding Package.swift) above this test file.
func placesRepoRoot(file: StaticString = #filePath) -> URL {
    var url = URL(fileURLWithPath: "\(file)").deletingLastPathComponent()
    while url.path != "/" {
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        url.deleteLastPathComponent()
    }
    fatalError("no Package.swift above \(file)")
}

/// A fix at `p` at `t` seconds.
func placesFix(_ p: GeoPoint, _ t: Double, eph: Double? = nil, speed: Double? = nil, track: Double? = nil) -> Fix {
    Fix(mode: 3, time: Nanoseconds(t * 1e9), lat: p.lat, lon: p.lon, speed: speed, track: track, eph: eph)
}

final class PlacesGeoTests: XCTestCase {
    func testDistanceKnownValues() {
        // One degree of latitude on the mean sphere: πR/180.
        let d = Geo.distance(GeoPoint(lat: 0, lon: 0), GeoPoint(lat: 1, lon: 0))
        XCTAssertEqual(d, Double.pi * Geo.earthRadius / 180, accuracy: 1e-6)
        // Brandenburger Tor → Alexanderplatz: ~2.48 km (627 m north, 2.40 km east).
        let b = Geo.distance(GeoPoint(lat: 52.516275, lon: 13.377704), GeoPoint(lat: 52.521918, lon: 13.413215))
        XCTAssertEqual(b, 2483, accuracy: 5)
    }

    func testAntimeridianDistanceAndBearing() {
        let west = GeoPoint(lat: 10, lon: 179.9995), east = GeoPoint(lat: 10, lon: -179.9995)
        let d = Geo.distance(west, east)
        XCTAssertEqual(d, 0.001 * Double.pi / 180 * Geo.earthRadius * cos(10 * Double.pi / 180), accuracy: 0.01)
        XCTAssertEqual(Geo.bearing(from: west, to: east), 90, accuracy: 0.01)
        XCTAssertEqual(Geo.bearing(from: east, to: west), 270, accuracy: 0.01)
        let local = LocalDistance(centre: west)
        XCTAssertEqual(local.distanceSquared(to: east).squareRoot(), d, accuracy: 0.01)
    }

    func testNearPoleDistancesAndDestinationRoundTrip() {
        let a = GeoPoint(lat: 89.9995, lon: 0), b = GeoPoint(lat: 89.9995, lon: 180)
        // Across the pole: 2 × 0.0005° of latitude.
        XCTAssertEqual(Geo.distance(a, b), 0.001 * Double.pi / 180 * Geo.earthRadius, accuracy: 0.01)
        XCTAssertEqual(LocalDistance(centre: a).distanceSquared(to: b).squareRoot(), Geo.distance(a, b), accuracy: 0.01)
        for (start, bearing) in [
            (GeoPoint(lat: 52.5, lon: 13.4), 37.0), (GeoPoint(lat: -89.9, lon: 10), 200.0),
            (GeoPoint(lat: 0, lon: 179.99), 90.0),
        ] {
            let dest = Geo.destination(from: start, distance: 1234, bearing: bearing)
            XCTAssertEqual(Geo.distance(start, dest), 1234, accuracy: 0.01)
            XCTAssertEqual(Geo.bearing(from: start, to: dest), bearing, accuracy: 0.01)
            let enu = Geo.enu(of: dest, from: start)
            XCTAssertEqual((enu.east * enu.east + enu.north * enu.north).squareRoot(), 1234, accuracy: 0.01)
        }
    }

    func testLocalDistanceAgreesWithHaversineInACity() {
        let c = GeoPoint(lat: 52.52, lon: 13.40)
        let local = LocalDistance(centre: c)
        for k in 0..<36 {
            let p = Geo.destination(from: c, distance: 2000, bearing: Double(k) * 10)
            XCTAssertEqual(local.distanceSquared(to: p).squareRoot(), 2000, accuracy: 2, "bearing \(k * 10)")
        }
    }

    func testCourseFilterHysteresisAndNothingInvented() {
        var f = CourseFilter(onSpeed: 1.0, offSpeed: 0.5)
        let p = GeoPoint(lat: 52.5, lon: 13.4)
        // Standing: random tracks from the receiver are dropped.
        XCTAssertNil(f.filter(placesFix(p, 0, speed: 0.3, track: 123)).track)
        XCTAssertNil(f.filter(placesFix(p, 1, speed: 0.9, track: 200)).track)  // below "on"
        XCTAssertEqual(f.filter(placesFix(p, 2, speed: 1.1, track: 90)).track, 90)
        XCTAssertEqual(f.filter(placesFix(p, 3, speed: 0.7, track: 91)).track, 91)  // between: stays on
        XCTAssertNil(f.filter(placesFix(p, 4, speed: 0.4, track: 92)).track)  // below "off"
        XCTAssertFalse(f.moving)
        // No speed from the source: moving is judged from positions, but the fix reports only
        // what the source gave: no speed or track is made up.
        var g = CourseFilter()
        _ = g.filter(placesFix(p, 10))
        let north = Geo.destination(from: p, distance: 1.5, bearing: 0)
        let out = g.filter(placesFix(north, 11))
        XCTAssertTrue(g.moving)
        XCTAssertNil(out.speed)
        XCTAssertNil(out.track)
        // A track the source gave passes while moving so judged.
        let further = Geo.destination(from: north, distance: 1.5, bearing: 0)
        XCTAssertEqual(g.filter(placesFix(further, 12, track: 3)).track, 3)
    }

    func testSnoozeWakesAfterMovingFarEnoughNotFromNoise() {
        var gate = SnoozeGate(distance: 50)
        let o = GeoPoint(lat: 52.5, lon: 13.4)
        XCTAssertEqual(gate.check(placesFix(o, 0)), .pass)
        _ = gate.snooze(at: placesFix(o, 0))
        // Jitter at 45 m with a large eph does not wake it; nor does 48 m.
        XCTAssertEqual(
            gate.check(placesFix(Geo.destination(from: o, distance: 55, bearing: 10), 5, eph: 30)), .suppress)
        XCTAssertEqual(gate.check(placesFix(Geo.destination(from: o, distance: 48, bearing: 10), 6, eph: 2)), .suppress)
        XCTAssertEqual(gate.check(Fix(mode: 1, time: 7_000_000_000)), .suppress)
        // 52 m without an eph: the assumed 25 m (σ ≈ 10 m) leaves it unsure.
        XCTAssertEqual(gate.check(placesFix(Geo.destination(from: o, distance: 52, bearing: 10), 7.5)), .suppress)
        guard case .woke(let w) = gate.check(placesFix(Geo.destination(from: o, distance: 52, bearing: 10), 8, eph: 2))
        else {
            return XCTFail("did not wake at 52 m")
        }
        XCTAssertEqual(w.moved, 52, accuracy: 0.01)
        XCTAssertEqual(w.since, 0)
        XCTAssertEqual(
            w.event.encodedText(seq: 1),
            #"{"class":"place","seq":1,"t_ns":8000000000,"event":"woke","moved_m":52,"snoozed_ns":0}"#)
        XCTAssertEqual(gate.check(placesFix(o, 9)), .pass)
    }

    func testSnoozeWithoutFixStartsAtFirstPosition() {
        var gate = SnoozeGate(distance: 50)
        _ = gate.snooze(at: nil)
        let far = GeoPoint(lat: 10, lon: 10)
        XCTAssertEqual(gate.check(placesFix(far, 1)), .suppress)  // becomes the origin
        XCTAssertEqual(gate.origin, far)
        XCTAssertEqual(gate.check(placesFix(Geo.destination(from: far, distance: 20, bearing: 0), 2)), .suppress)
    }
}

extension Event {
    /// The line without its newline, for readable assertions.
    func encodedText(seq: UInt64) -> String {
        var b = encode(seq: seq)
        b.removeLast()
        return String(decoding: b, as: UTF8.self)
    }
}
