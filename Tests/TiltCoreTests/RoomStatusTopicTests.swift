// SPDX-License-Identifier: Apache-2.0
import TiltCore
import XCTest

/// A player's presence names the status topic the host then subscribes to, as sent (issue 37):
/// `#` gave one player's presence all of `tiltd/#`. Wildcards, topics that are not a device's
/// `<prefix>/status`, and topics outside the host's first level are refused.
final class RoomStatusTopicTests: XCTestCase {
    func host() -> RoomHost {
        RoomHost(room: "party", host: "pi-a", hostStatusTopic: "tiltd/pi-a/status", session: "s")
    }

    func testWildcardsAndForeignStatusTopicsAreRefused() {
        for topic in [
            "#", "+", "tiltd/#", "tiltd/+/status", "tiltd/pi-b/#", "other/pi-b/status", "tiltd/pi-b/cmd",
            "tiltd/pi-b\u{0}/status", "tiltd/" + String(repeating: "x", count: 300) + "/status",
        ] {
            var h = host()
            let outcome = h.presence(
                RoomPresence(room: "party", player: "pi-b", presence: .here, statusTopic: topic), topicPlayer: "pi-b",
                at: 0)
            guard case .refused(let r) = outcome else { return XCTFail("\(topic) accepted: \(outcome)") }
            XCTAssertEqual(r.code, "bad_argument", topic)
            XCTAssertNil(h.state.player("pi-b"), "\(topic): the player did not join with it")
        }
    }

    func testADevicesOwnStatusTopicIsAccepted() {
        var h = host()
        XCTAssertEqual(
            h.presence(
                RoomPresence(room: "party", player: "pi-b", presence: .here, statusTopic: "tiltd/pi-b/status"),
                topicPlayer: "pi-b", at: 0), .changed)
        XCTAssertEqual(h.state.player("pi-b")?.statusTopic, "tiltd/pi-b/status")
    }
}
