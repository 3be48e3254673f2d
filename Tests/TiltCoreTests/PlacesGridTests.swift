// SPDX-License-Identifier: Apache-2.0
import TestSupport
import XCTest

@testable import TiltCore

final class PlacesGridTests: XCTestCase {
    func testCellsAreAboutTheRequestedSizeAndIdsRoundTrip() {
        let g = GeoGrid(cellSize: 200)
        for lat in [-89.0, -60.0, 0.0, 45.0, 52.52, 80.0] {
            let p = GeoPoint(lat: lat, lon: 13.4)
            let c = g.cell(p)
            XCTAssertEqual(GeoGrid.Cell(id: c.id), c)
            let b = g.bounds(c)
            XCTAssertTrue(b.south <= lat && lat < b.north)
            XCTAssertEqual((b.north - b.south) * Double.pi / 180 * Geo.earthRadius, 200, accuracy: 0.5)
            // Width at the band centre is within rounding of 200 m (one cell in n).
            let mid = (b.south + b.north) / 2 * Double.pi / 180
            let width = b.width * Double.pi / 180 * Geo.earthRadius * cos(mid)
            XCTAssertEqual(width, 200, accuracy: 200 / Double(g.columns(row: Int(c.row))) + 1e-6, "lat \(lat)")
            XCTAssertEqual(g.cell(g.centre(c)), c)
        }
        // Deterministic: a grid built again gives the same id.
        XCTAssertEqual(
            GeoGrid(cellSize: 200).cell(GeoPoint(lat: 52.52, lon: 13.4)).id, g.cell(GeoPoint(lat: 52.52, lon: 13.4)).id)
    }

    func testAntimeridianCellsAreNeighboursNotSplit() {
        let g = GeoGrid(cellSize: 200)
        let west = GeoPoint(lat: -16.5, lon: 179.9999), east = GeoPoint(lat: -16.5, lon: -179.9999)
        let cw = g.cell(west), ce = g.cell(east)
        XCTAssertEqual(cw.row, ce.row)
        let n = Int32(g.columns(row: Int(cw.row)))
        XCTAssertEqual(cw.column, n - 1)
        XCTAssertEqual(ce.column, 0)
        // +180 and −180 are the same meridian: the same cell.
        XCTAssertEqual(g.cell(GeoPoint(lat: 3, lon: 180)), g.cell(GeoPoint(lat: 3, lon: -180)))
        // A radius query at the line finds cells on both sides.
        var cells = Set<GeoGrid.Cell>()
        g.forEachCell(near: west, radius: 50) { cells.insert($0) }
        XCTAssertTrue(cells.contains(cw) && cells.contains(ce))
    }

    func testPolarBandsAreSmallWedgesAndQueriesCoverThem() {
        let g = GeoGrid(cellSize: 200)
        let top = g.bandCount - 1
        XCTAssertEqual(g.row(lat: 90), top)
        XCTAssertEqual(g.row(lat: -90), 0)
        XCTAssertLessThanOrEqual(g.columns(row: top), 4)
        XCTAssertEqual(g.columns(row: top), g.columns(row: 0))
        // Every longitude at the pole is one of the few polar wedges; the id is stable.
        let ids = Set(stride(from: -180.0, to: 180, by: 7.5).map { g.cell(GeoPoint(lat: 89.9999, lon: $0)).id })
        XCTAssertEqual(ids.count, g.columns(row: top))
        var near = Set<GeoGrid.Cell>()
        g.forEachCell(near: GeoPoint(lat: 89.999, lon: 40), radius: 300) { near.insert($0) }
        for id in ids { XCTAssertTrue(near.contains(GeoGrid.Cell(id: id))) }
    }

    func testRadiusQueryIsASupersetOfTheTrueCells() {
        // Random points within the radius must all land in a visited cell, everywhere on earth.
        let g = GeoGrid(cellSize: 250)
        var rng = SplitMix64(seed: 7)
        for centre in [
            GeoPoint(lat: 52.52, lon: 13.4), GeoPoint(lat: 0, lon: 179.999), GeoPoint(lat: -89.99, lon: 0),
            GeoPoint(lat: 88.5, lon: -179.99), GeoPoint(lat: 70, lon: -30),
        ] {
            var visited = Set<GeoGrid.Cell>()
            g.forEachCell(near: centre, radius: 1000) { visited.insert($0) }
            for _ in 0..<2000 {
                let p = Geo.destination(from: centre, distance: rng.uniform() * 1000, bearing: rng.uniform() * 360)
                XCTAssertTrue(visited.contains(g.cell(p)), "missed \(p) near \(centre)")
            }
        }
    }
}
