// SPDX-License-Identifier: Apache-2.0
import TiltWeb
import XCTest

/// The plot route's cache and drawing bound (issue 37): a plot is drawn once per file version,
/// one at a time, and the cache holds a bounded number.
final class PlotCacheTests: XCTestCase {
    func key(_ n: Int, size: Int64 = 10) -> PlotCache.Key {
        PlotCache.Key(name: "r\(n).csv", game: false, size: size, modified: 1)
    }

    func testOnePlotIsDrawnAtATimeAndKeptPerFileVersion() {
        let c = PlotCache()
        XCTAssertTrue(c.beginDrawing())
        XCTAssertFalse(c.beginDrawing(), "a second drawing waits for the first")
        c.endDrawing(key(1), svg: "<svg/>")
        XCTAssertEqual(c.plot(key(1)), "<svg/>")
        XCTAssertNil(c.plot(key(1, size: 11)), "a changed file is drawn again")
        XCTAssertTrue(c.beginDrawing(), "the slot is back")
        c.endDrawing(key(2), svg: nil)
        XCTAssertNil(c.plot(key(2)), "a failed drawing is not kept")
    }

    func testTheCacheIsBounded() {
        let c = PlotCache()
        for i in 0..<(PlotCache.maxEntries * 3) {
            XCTAssertTrue(c.beginDrawing())
            c.endDrawing(key(i), svg: "<svg>\(i)</svg>")
        }
        XCTAssertEqual(c.count, PlotCache.maxEntries)
        XCTAssertNotNil(c.plot(key(PlotCache.maxEntries * 3 - 1)), "the newest is kept")
        XCTAssertNil(c.plot(key(0)), "the oldest went")
    }
}
