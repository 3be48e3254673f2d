// SPDX-License-Identifier: Apache-2.0
import TestSupport
import TiltCore
import TiltRecordings
import XCTest

@testable import TiltSensors

/// Replays the bundled demo walk (config/demo/walk.gpx) through the place pipeline, as the
/// daemon's GPX replay does, and checks the events the demo promises.
final class PlacesDemoWalkTests: XCTestCase {
    func load() throws -> (places: [Place], fixes: [Fix]) {
        let root = URL(fileURLWithPath: repositoryRoot)
        let places = try PlacesFile.parse(
            Array(try Data(contentsOf: root.appendingPathComponent("config/demo/places.geojson")))
        ).places
        let fixes = try GPX.parseFixes(Array(try Data(contentsOf: root.appendingPathComponent("config/demo/walk.gpx"))))
        return (places, fixes)
    }

    func testWalkEntersDwellsAndExitsTheExpectedPlaces() throws {
        let (places, fixes) = try load()
        XCTAssertGreaterThan(fixes.count, 2000)
        var monitor = GeofenceMonitor(fences: places.map { Fence($0, defaults: Fence.PlaceDefaults()) })
        var credits = CreditPolicy()
        var course = CourseFilter()
        var log: [String] = []
        var dwellAfter: Double?
        var grants: [CreditPolicy.Grant] = []
        var tracksWhileStill = 0
        for f in fixes {
            let filtered = course.filter(f)
            if (f.speed ?? 0) < 0.3, filtered.track != nil { tracksWhileStill += 1 }
            for e in monitor.update(filtered) {
                log.append("\(e.kind.rawValue) \(e.fence.name)")
                if e.kind == .dwell { dwellAfter = Double(e.t - e.enteredAt) / 1e9 }
                if let g = credits.consider(e) { grants.append(g) }
            }
        }
        XCTAssertEqual(
            log,
            [
                "enter Bäckerei Korn & Kruste", "exit Bäckerei Korn & Kruste",
                "enter Café Kompass", "dwell Café Kompass", "exit Café Kompass",
                "enter Stern-Apotheke", "exit Stern-Apotheke",
                "enter Eisdiele Polar", "exit Eisdiele Polar",
                "enter Trattoria an der Ecke", "exit Trattoria an der Ecke",
                "enter Imbiss an der Brücke", "exit Imbiss an der Brücke",
            ])
        XCTAssertEqual(dwellAfter ?? 0, 600, accuracy: 1)
        XCTAssertEqual(grants.map(\.fenceKey), ["place:cafe-kompass"])
        XCTAssertEqual(tracksWhileStill, 0, "no course while standing in the café")
    }

    func testNearbyPromptsAlongTheWalk() throws {
        let (places, fixes) = try load()
        let nearby = NearbyPlaces(places: places)
        let names = nearby.prompts(near: fixes[0])
        XCTAssertTrue(names.contains("Café Kompass"))
        XCTAssertFalse(names.contains("Uhrenmuseum"), "museums are not food")
        XCTAssertFalse(names.contains("Brauhaus Alt"), "3.3 km away")
        XCTAssertEqual(Set(names).count, names.count)
    }
}
