// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import TiltService

/// How many socket clients a descriptor limit holds (`ClientSlots.clients(descriptors:)`): two
/// descriptors a client, a quarter of the limit (at least 256) kept for the store, the IMU and
/// gpsd. The daemon under load is `IdleClientsDaemonTests`.
final class ClientSlotsTests: XCTestCase {
    func testAQuarterOfTheDescriptorsStaysFreeOfClients() {
        XCTAssertEqual(ClientSlots.clients(descriptors: 8192), 3072, "the unit's LimitNOFILE")
        XCTAssertEqual(ClientSlots.clients(descriptors: 14_000), 5250)
        // A small limit keeps 256, not a quarter.
        XCTAssertEqual(ClientSlots.clients(descriptors: 1024), 384)
        // However small, one client can connect.
        XCTAssertEqual(ClientSlots.clients(descriptors: 100), 1)
        XCTAssertEqual(ClientSlots.clients(descriptors: 0), 1)
    }
}
