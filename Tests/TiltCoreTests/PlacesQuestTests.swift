// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import TiltCore

final class PlacesQuestTests: XCTestCase {
    func testAvailableOnEnteringCompleteOnlyInsideCooldownAndRewards() {
        var q = QuestGrid()
        let a = GeoPoint(lat: 52.52, lon: 13.40)
        let cellA = q.grid.cell(a)
        // Entering the first cell offers a quest worth the base reward; staying does not repeat it.
        XCTAssertEqual(
            q.update(placesFix(a, 0, eph: 5)),
            QuestGrid.Available(cell: cellA, centre: q.grid.centre(cellA), t: 0, visits: 0, xp: 100))
        XCTAssertNil(q.update(placesFix(a, 1, eph: 5)))
        // Completing someone else's cell is refused.
        let elsewhere = q.grid.cell(Geo.destination(from: a, distance: 1000, bearing: 0))
        XCTAssertEqual(q.complete(cell: elsewhere), .failure(.notInCell(requested: elsewhere, current: cellA)))
        guard case .success(let done) = q.complete(cell: cellA) else { return XCTFail("completion refused") }
        XCTAssertEqual(done.xp, 100)
        XCTAssertEqual(done.visits, 1)
        XCTAssertEqual(done.cooldownUntil, 3_601_000_000_000)
        XCTAssertEqual(q.complete(), .failure(.coolingDown(until: 3_601_000_000_000)))
        // Leave and come back within the hour: no offer; after it, an offer worth half.
        let b = Geo.destination(from: a, distance: 500, bearing: 90)
        XCTAssertNotNil(q.update(placesFix(b, 100, eph: 5)))
        XCTAssertNil(q.update(placesFix(a, 200, eph: 5)))
        // Cooldown runs out while standing in the cell: offered then.
        XCTAssertEqual(q.update(placesFix(a, 3601, eph: 5))?.xp, 50)
        guard case .success(let again) = q.complete() else { return XCTFail("second completion refused") }
        XCTAssertEqual(again.visits, 2)
        XCTAssertEqual(q.state(cellA), QuestGrid.CellState(visits: 2, cooldownUntil: 7201_000_000_000, xp: 150))
        XCTAssertEqual((0..<8).map { q.reward(visits: $0) }, [100, 50, 25, 12, 10, 10, 10, 10])
    }

    func testUncertainOrMissingFixCannotComplete() {
        var q = QuestGrid()
        XCTAssertEqual(q.complete(), .failure(.noFix))
        _ = q.update(placesFix(GeoPoint(lat: 1, lon: 1), 0, eph: 150))
        XCTAssertEqual(q.complete(), .failure(.uncertain(eph: 150, limit: 100)))
        // A fix that gives no uncertainty is judged by the assumed one, not as exact.
        var options = QuestGrid.Options()
        options.maxEph = 10
        var strict = QuestGrid(options: options)
        _ = strict.update(placesFix(GeoPoint(lat: 1, lon: 1), 0))
        XCTAssertEqual(strict.complete(), .failure(.uncertain(eph: Fix.assumedEphWhenUnknown, limit: 10)))
    }

    func testSavedStateIsRespectedAndPolarAndDatelineCellsWork() {
        let pole = GeoPoint(lat: -89.9995, lon: 123)
        let grid = GeoGrid(cellSize: 200)
        let poleCell = grid.cell(pole)
        // A restart with the store's state: the cell is still cooling until 10,000 s.
        var q = QuestGrid(cells: [poleCell.id: .init(visits: 3, cooldownUntil: 10_000_000_000_000, xp: 185)])
        XCTAssertNil(q.update(placesFix(pole, 5000, eph: 3)))
        XCTAssertEqual(q.update(placesFix(pole, 10_000, eph: 3))?.xp, 12)
        // Across the pole (lon −57) 100 m away, the wearer may be in another wedge but ids are stable.
        let across = GeoPoint(lat: -89.9995, lon: -57)
        XCTAssertEqual(grid.cell(across), grid.cell(GeoPoint(lat: -89.9995, lon: -57)))
        // At the antimeridian the two sides are different cells: completing the west one from the east fails.
        var d = QuestGrid()
        let west = GeoPoint(lat: 65, lon: 179.9999), east = GeoPoint(lat: 65, lon: -179.9999)
        _ = d.update(placesFix(east, 0, eph: 3))
        let westCell = d.grid.cell(west)
        XCTAssertNotEqual(westCell, d.grid.cell(east))
        XCTAssertEqual(
            d.complete(cell: westCell), .failure(.notInCell(requested: westCell, current: d.grid.cell(east))))
        _ = d.update(placesFix(west, 1, eph: 3))
        guard case .success = d.complete(cell: westCell) else { return XCTFail("completion at the date line refused") }
    }

    func testCompletionEventShape() {
        var q = QuestGrid()
        let p = GeoPoint(lat: 52.52, lon: 13.40)
        _ = q.update(placesFix(p, 0))
        guard case .success(let c) = q.complete() else { return XCTFail() }
        let line = c.event.encodedText(seq: 2)
        XCTAssertEqual(
            line,
            #"{"class":"quest","seq":2,"t_ns":0,"event":"completed","cell":\#(c.cell.id),"cell_name":"\#(c.cell)","xp":100,"visits":1,"cooldown_until_ns":3600000000000}"#
        )
    }
}
