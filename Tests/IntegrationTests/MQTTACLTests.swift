// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import XCTest

/// The example ACL (config/mosquitto/tiltd.acl) in a real Mosquitto: a client that logs in as
/// `room` — whose own-prefix pattern is tiltd/room/# — cannot write a room's state or players,
/// while the room's named host can, and everyone still reads them.
final class MQTTACLTests: XCTestCase {
    func testADeviceNamedRoomCannotWriteTheRooms() throws {
        try requireMosquitto()
        let dir = makeTempDir("acl")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let acl =
            try String(contentsOfFile: "\(repositoryRoot)/config/mosquitto/tiltd.acl", encoding: .utf8)
            + "\nuser pi-a\ntopic write tiltd/room/party/state\n"
        let users = ["room": "pw-r", "pi-a": "pw-a", "watcher": "pw-w"]
        let broker = try MosquittoRig(dir: dir, users: users, acl: acl)
        defer { broker.stop() }
        let sub = try broker.subscribe(["tiltd/#"], user: ("watcher", "pw-w"))
        // The subscriber is ready once it sees a message of its own topic space.
        try waitUntil("the subscriber to be ready", timeout: 15) {
            try broker.publish("tiltd/watcher/ready", "1", user: ("watcher", "pw-w"))
            return !sub.payloads("tiltd/watcher/ready").isEmpty
        }
        try broker.publish("tiltd/room/party/state", "forged", user: ("room", "pw-r"))
        try broker.publish("tiltd/room/party/player/pi-a/decision", "forged", user: ("room", "pw-r"))
        try broker.publish("tiltd/room/party/state", "hosted", user: ("pi-a", "pw-a"))
        try broker.publish("tiltd/pi-a/status/mqtt", "own", user: ("pi-a", "pw-a"))
        _ = try sub.wait("tiltd/pi-a/status/mqtt")
        _ = try sub.wait("tiltd/room/party/state") { $0 == "hosted" }
        XCTAssertEqual(sub.payloads("tiltd/room/party/state"), ["hosted"], "only the host writes the room's state")
        XCTAssertEqual(sub.payloads("tiltd/room/party/player/pi-a/decision"), [], "\"room\" answers for no player")
    }
}
