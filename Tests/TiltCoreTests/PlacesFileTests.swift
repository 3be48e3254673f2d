// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import TiltCore

final class PlacesFileTests: XCTestCase {
    func testParsesPointsAndSkipsBadFeaturesWithReasons() throws {
        let text = """
            {"type":"FeatureCollection","features":[
             {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[13.4,52.5]},"properties":{"name":"Café A","category":"Cafe","credit":true,"radius_m":40}},
             {"type":"Feature","geometry":{"type":"Point","coordinates":[13.41,52.51,34]},"properties":{"name":"Markt","category":"Food_Market","id":7}},
             {"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{"name":"Road"}},
             {"type":"Feature","geometry":{"type":"Point","coordinates":[13.4,95]},"properties":{"name":"Nowhere"}},
             {"type":"Feature","geometry":{"type":"Point","coordinates":[13.4,52.5]},"properties":{"category":"cafe"}},
             {"type":"Feature","geometry":{"type":"Point","coordinates":[13.4,52.5]},"properties":{"name":"Bad","radius_m":-3}},
             {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[13.5,52.5]},"properties":{"name":"Café A2"}}
            ]}
            """
        let f = try PlacesFile.parse(text)
        XCTAssertEqual(f.places.map(\.id), ["a", "7", "a#2"])
        XCTAssertEqual(
            f.places[0],
            Place(
                id: "a", name: "Café A", category: "cafe", point: GeoPoint(lat: 52.5, lon: 13.4), credit: true,
                radius: 40))
        XCTAssertEqual(f.places[1].category, "food market")
        XCTAssertEqual(f.places[2].category, "other")
        XCTAssertEqual(
            f.skipped,
            [
                "feature 2: geometry LineString is not a Point",
                "feature 3: coordinates [13.4, 95.0] out of range",
                "feature 4: missing properties.name",
                "feature 5: properties.radius_m must be a positive number",
                "feature 6: duplicate id \"a\", renamed \"a#2\"",
            ])
    }

    func testRejectsFilesThatAreNotFeatureCollections() {
        XCTAssertThrowsError(try PlacesFile.parse("not json")) { XCTAssertTrue("\($0)".contains("not valid JSON")) }
        XCTAssertThrowsError(try PlacesFile.parse(#"{"type":"Feature"}"#)) {
            XCTAssertTrue("\($0)".contains("FeatureCollection"))
        }
        XCTAssertThrowsError(try PlacesFile.parse(#"{"type":"FeatureCollection"}"#)) {
            XCTAssertTrue("\($0)".contains("features"))
        }
    }

    func testGeofenceValidation() {
        XCTAssertNoThrow(try Geofence(name: "home", lat: 52, lon: 13, radius: 50).validate())
        XCTAssertThrowsError(try Geofence(name: "x", lat: 91, lon: 13, radius: 50).validate())
        XCTAssertThrowsError(try Geofence(name: "x", lat: 1, lon: 13, radius: 0).validate()) {
            XCTAssertEqual("\($0)", "geofence x: radius must be > 0 and ≤ 100000 m")
        }
        XCTAssertThrowsError(try Geofence(name: " ", lat: 1, lon: 1, radius: 5).validate())
    }

    func testNearbyPromptsFilterByCategoryAndRadius() throws {
        let c = GeoPoint(lat: 52.52, lon: 13.40)
        func place(_ name: String, _ cat: String, _ d: Double, _ b: Double = 0) -> Place {
            Place(id: name, name: name, category: cat, point: Geo.destination(from: c, distance: d, bearing: b))
        }
        let places = [
            place("Far Café", "cafe", 2100), place("Near Bakery", "bakery", 100), place("Museum", "museum", 50),
            place("Mid Restaurant", "restaurant", 1500, 200), place("Edge Café", "cafe", 1990, 300),
            place("Near Bakery", "bakery", 300, 90), place("Markt", "Food_Market", 700, 45),
        ]
        var n = NearbyPlaces(places: places)
        XCTAssertNil(n.prompts(), "no fix yet: the caller falls back to its deck")
        n.update(Fix(mode: 1))
        XCTAssertNil(n.prompts())
        n.update(placesFix(c, 0))
        XCTAssertEqual(n.prompts(), ["Near Bakery", "Markt", "Mid Restaurant", "Edge Café"])
        var all = NearbyPlaces.Options(); all.categories = []; all.radius = 60
        XCTAssertEqual(NearbyPlaces(places: places, options: all).prompts(near: placesFix(c, 0)), ["Museum"])
        // Across the antimeridian.
        let w = GeoPoint(lat: -16, lon: 179.999)
        let dl = NearbyPlaces(places: [
            Place(id: "e", name: "East Side Café", category: "cafe", point: GeoPoint(lat: -16, lon: -179.999))
        ])
        XCTAssertEqual(dl.prompts(near: placesFix(w, 0)), ["East Side Café"])
    }

    func testNearbyListFollowsTheWearerAfterMovingFarEnough() {
        let c = GeoPoint(lat: 52.52, lon: 13.40)
        let a = Place(id: "a", name: "A Café", category: "cafe", point: c)
        let b = Place(
            id: "b", name: "B Bakery", category: "bakery", point: Geo.destination(from: c, distance: 5000, bearing: 0))
        var n = NearbyPlaces(places: [a, b])
        n.update(placesFix(c, 0))
        XCTAssertEqual(n.prompts(), ["A Café"])
        n.update(placesFix(Geo.destination(from: c, distance: 3100, bearing: 0), 1))
        XCTAssertEqual(n.prompts(), ["B Bakery"])
        // 20 m further (under the 25 m requery distance) keeps the list; a fresh query agrees here.
        let p = Geo.destination(from: c, distance: 3120, bearing: 0)
        n.update(placesFix(p, 2))
        XCTAssertEqual(n.prompts(), n.prompts(near: placesFix(p, 2)))
    }

    func testDemoPlacesFileLoads() throws {
        let url = placesRepoRoot().appendingPathComponent("config/demo/places.geojson")
        let f = try PlacesFile.parse(Array(try Data(contentsOf: url)))
        XCTAssertEqual(f.skipped, [])
        XCTAssertGreaterThanOrEqual(f.places.count, 40)
        XCTAssertTrue(f.places.contains { $0.category == "food market" })
        XCTAssertTrue(f.places.contains { $0.name == "Café Kompass" && $0.credit == true })
    }
}
