// SPDX-License-Identifier: Apache-2.0
import TestSupport
import TiltProtocol
import XCTest

@testable import TiltCore

final class PlacesGeofenceTests: XCTestCase {
    let centre = GeoPoint(lat: 52.52, lon: 13.40)

    func fence(
        _ name: String = "home", at c: GeoPoint? = nil, radius: Double = 30, dwell: Double = 600,
        cooldown: Double = 3600, credit: Bool = false
    ) -> Fence {
        Fence(
            Geofence(
                name: name, lat: (c ?? centre).lat, lon: (c ?? centre).lon, radius: radius,
                dwell: dwell, cooldown: cooldown, credit: credit))
    }

    func at(_ metres: Double, bearing: Double = 90, from c: GeoPoint? = nil) -> GeoPoint {
        Geo.destination(from: c ?? centre, distance: metres, bearing: bearing)
    }

    func kinds(_ es: [GeofenceMonitor.Event]) -> [String] { es.map { "\($0.kind.rawValue) \($0.fence.name)" } }

    func testEnterDwellExitTimedFromFixTimes() {
        var m = GeofenceMonitor(fences: [fence()])
        var log: [(Double, String)] = []
        // Walk in from 100 m east at 1 m/s, stay 700 s, walk out; the fixes carry the time.
        var t = 1_000.0
        func feed(_ p: GeoPoint) {
            for e in m.update(placesFix(p, t, eph: 5)) { log.append((t, "\(e.kind.rawValue)")) }; t += 1
        }
        for d in stride(from: 100.0, through: 0, by: -1) { feed(at(d)) }
        let arrived = t
        for _ in 0..<700 { feed(centre) }
        for d in stride(from: 0.0, through: 100, by: 1) { feed(at(d, bearing: 270)) }
        XCTAssertEqual(log.map(\.1), ["enter", "dwell", "exit"])
        // σ = 5/2.4477 ≈ 2.04 m: enter at the first d with d + σ ≤ 30, i.e. d = 27 m.
        XCTAssertEqual(log[0].0, arrived - 28)
        XCTAssertEqual(log[1].0 - log[0].0, 600, "dwell fires exactly 600 s of fix time after enter")
        // Exit ring: d − σ > 30 + max(10, 7.5) → d = 43 m.
        XCTAssertEqual(log[2].0, arrived + 700 + 43)
    }

    func testDwellUsesFixTimeNotFixCount() {
        // Ten fixes a minute apart reach the 600 s dwell; 5,000 fixes within 100 s do not.
        var sparse = GeofenceMonitor(fences: [fence()])
        var events: [GeofenceMonitor.Event] = []
        for k in 0...10 { events += sparse.update(placesFix(centre, Double(k) * 60)) }
        XCTAssertEqual(events.map(\.kind), [.enter, .dwell])
        XCTAssertEqual(events[1].t, 600_000_000_000)
        var dense = GeofenceMonitor(fences: [fence()])
        events = []
        for k in 0..<5000 { events += dense.update(placesFix(centre, Double(k) * 0.02)) }
        XCTAssertEqual(events.map(\.kind), [.enter])
    }

    func testEdgeJitterDoesNotFlap() {
        var m = GeofenceMonitor(fences: [fence(radius: 30)])
        var rng = SplitMix64(seed: 42)
        var events: [GeofenceMonitor.Event] = []
        events += m.update(placesFix(centre, 0, eph: 4))
        // 30 minutes of fixes jittering ±8 m around the 30 m edge, eph 4–12 m.
        for k in 1...1800 {
            let d = 30 + (rng.uniform() * 16 - 8)
            events += m.update(placesFix(at(d, bearing: rng.uniform() * 360), Double(k), eph: 4 + rng.uniform() * 8))
        }
        XCTAssertEqual(kinds(events), ["enter home", "dwell home"], "jitter at the edge must not exit")
        // Walking away does exit, once.
        events = m.update(placesFix(at(60), 1801, eph: 4))
        XCTAssertEqual(kinds(events), ["exit home"])
    }

    func testOutsideJitterDoesNotEnter() {
        var m = GeofenceMonitor(fences: [fence(radius: 30)])
        var rng = SplitMix64(seed: 9)
        var events: [GeofenceMonitor.Event] = []
        // Standing just outside: fixes 31–40 m from the centre with eph 5 m never enter.
        for k in 0..<1000 {
            events += m.update(placesFix(at(31 + rng.uniform() * 9, bearing: rng.uniform() * 360), Double(k), eph: 5))
        }
        XCTAssertTrue(events.isEmpty)
    }

    func testLargeEphFixDoesNotEnter() {
        var m = GeofenceMonitor(fences: [fence(radius: 30)])
        // 20 m from the centre but eph 60 m (σ ≈ 24.5 m): the circle is mostly outside.
        XCTAssertTrue(m.update(placesFix(at(20), 0, eph: 60)).isEmpty)
        // Even dead centre, an eph of 100 m (σ ≈ 41 m > r) says nothing.
        XCTAssertTrue(m.update(placesFix(centre, 1, eph: 100)).isEmpty)
        // The same place with a good fix enters.
        XCTAssertEqual(kinds(m.update(placesFix(at(20), 2, eph: 8))), ["enter home"])
        // And a huge-eph fix far away does not exit either (uninformative).
        XCTAssertTrue(m.update(placesFix(at(80), 3, eph: 200)).isEmpty)
        XCTAssertEqual(m.insideKeys, ["geofence:home"])
    }

    func testFixWithoutUncertaintyIsNotTakenAsExact() {
        var m = GeofenceMonitor(fences: [fence(radius: 30)])
        // 25 m from the centre of a 30 m fence, no eph: with eph taken as 0 it would enter; with
        // the assumed 25 m (σ ≈ 10 m) the fix is too close to the edge to say.
        XCTAssertTrue(m.update(placesFix(at(25), 0)).isEmpty)
        XCTAssertEqual(kinds(m.update(placesFix(at(10), 1))), ["enter home"])
        // Just outside the exit ring (30 + 10 m) is not confidently outside either.
        XCTAssertTrue(m.update(placesFix(at(45), 2)).isEmpty)
        XCTAssertEqual(kinds(m.update(placesFix(at(60), 3))), ["exit home"])
    }

    func testAntimeridianAndPolarFences() {
        let dateLine = GeoPoint(lat: -17.0, lon: 179.9998)  // east of the line it is −179.99…
        let pole = GeoPoint(lat: 89.9999, lon: 0)
        var m = GeofenceMonitor(fences: [
            fence("dateline", at: dateLine, radius: 40, dwell: 60),
            fence("pole", at: pole, radius: 40, dwell: 60),
        ])
        // 25 m east of the fence centre lies across the line (lon −179.99…).
        let across = at(25, bearing: 90, from: dateLine)
        XCTAssertLessThan(across.lon, 0)
        XCTAssertEqual(kinds(m.update(placesFix(across, 0, eph: 3))), ["enter dateline"])
        XCTAssertEqual(kinds(m.update(placesFix(at(25, bearing: 270, from: dateLine), 61, eph: 3))), ["dwell dateline"])
        XCTAssertEqual(kinds(m.update(placesFix(at(60, bearing: 90, from: dateLine), 62, eph: 3))), ["exit dateline"])
        // Near the pole: a fix on the other side of the pole (lon 180) 20 m away is inside.
        let otherSide = GeoPoint(lat: 89.99999, lon: 180)
        XCTAssertLessThan(Geo.distance(otherSide, pole), 15)
        XCTAssertEqual(kinds(m.update(placesFix(otherSide, 100, eph: 3))), ["enter pole"])
        XCTAssertEqual(kinds(m.update(placesFix(GeoPoint(lat: 89.9999, lon: -90), 161, eph: 3))), ["dwell pole"])
    }

    func testManyFencesUseTheIndexAndStillFindTheRightOne() {
        var fences: [Fence] = []
        var rng = SplitMix64(seed: 3)
        for k in 0..<20_000 {
            let p = Geo.destination(from: centre, distance: rng.uniform() * 20_000, bearing: rng.uniform() * 360)
            fences.append(fence("f\(k)", at: p, radius: 25))
        }
        let target = fences[12_345]
        var m = GeofenceMonitor(fences: fences)
        let events = m.update(placesFix(target.centre, 0, eph: 2))
        XCTAssertTrue(events.contains { $0.kind == .enter && $0.fence.name == "f12345" })
        // Cross-check against brute force: every fence whose circle holds the point is entered.
        let expected = fences.filter { Geo.distance($0.centre, target.centre) + 2 / 2.4477 <= $0.radius }.map(\.name)
        XCTAssertEqual(Set(events.map(\.fence.name)), Set(expected))
    }

    func testCreditPolicyOnePerVisitAndCooldown() {
        let cafe = fence("cafe", radius: 30, dwell: 600, cooldown: 3600, credit: true)
        var m = GeofenceMonitor(fences: [cafe, fence("plain", radius: 30, dwell: 600)])
        var policy = CreditPolicy()
        var grants: [CreditPolicy.Grant] = []
        func visit(from t0: Double, seconds: Double) {
            for k in stride(from: 0.0, through: seconds, by: 10) {
                for e in m.update(placesFix(centre, t0 + k, eph: 3)) {
                    if let g = policy.consider(e) { grants.append(g) }
                }
            }
            _ = m.update(placesFix(at(100), t0 + seconds + 1, eph: 3))
        }
        visit(from: 0, seconds: 1500)  // one long visit: one credit (not one per 600 s)
        visit(from: 2000, seconds: 700)  // dwell at 2600 s: within 3600 s cooldown → none
        visit(from: 5000, seconds: 700)  // dwell at 5600 s: 5000 s after the first → credit
        XCTAssertEqual(grants.map(\.requestId), ["dwell:geofence:cafe:0", "dwell:geofence:cafe:5000000000000"])
        XCTAssertEqual(
            grants[0].event(balance: 1).encodedText(seq: 4),
            #"{"class":"credit","seq":4,"t_ns":600000000000,"event":"earned","fence":"geofence:cafe","name":"cafe","amount":1,"request_id":"dwell:geofence:cafe:0","balance":1}"#
        )
    }

    func testPlaceEventShape() {
        let place = Place(id: "cafe-1", name: "Café Eins", category: "Cafe", point: centre)
        var m = GeofenceMonitor(fences: [Fence(place, defaults: Fence.PlaceDefaults())])
        let e = m.update(placesFix(at(10), 5, eph: 3))
        XCTAssertEqual(
            e.first?.event.encodedText(seq: 9),
            #"{"class":"place","seq":9,"t_ns":5000000000,"event":"enter","fence":"place:cafe-1","name":"Café Eins","category":"cafe","distance_m":10,"entered_ns":5000000000}"#
        )
    }
}
