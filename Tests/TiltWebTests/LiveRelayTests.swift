// SPDX-License-Identifier: Apache-2.0
import Logging
import TiltCore
import TiltProtocol
import XCTest

@testable import TiltWeb

/// What a browser that connects later is greeted with: the current daemon's state, never a gone
/// daemon's.
final class LiveRelayTests: XCTestCase {
    func testTheMapOfAGoneDaemonIsNotGivenToNewBrowsers() throws {
        let relay = LiveRelay(
            hub: BrowserHub(capacity: 8), map: NearbyMap(places: [], questCellSize: 200),
            logger: Logger(label: "test"))
        let fix = try XCTUnwrap(DaemonLine(text: #"{"class":"fix","seq":3,"mode":3,"lat":52.517,"lon":13.4}"#))
        relay.linkChanged(.connected)
        relay.receive(fix)
        func nearby() -> Bool { relay.greeting().contains { $0.contains(#""event":"nearby""#) } }
        XCTAssertTrue(nearby(), "a fix draws the map")

        relay.linkChanged(.reconnecting(retryInSeconds: 0.5, reason: "gone"))
        XCTAssertFalse(nearby(), "the daemon is away: no map of its last fix")
        XCTAssertTrue(relay.greeting()[0].contains(#""state":"reconnecting""#))

        relay.linkChanged(.connected)
        relay.receive(fix)
        XCTAssertTrue(nearby())
        relay.receive(try XCTUnwrap(DaemonLine(text: #"{"class":"hello","seq":1,"sources":[]}"#)))
        XCTAssertFalse(nearby(), "a new daemon's hello: its fix, if any, draws the map anew")
        XCTAssertNil(relay.fixAge)
    }
}
