// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

@testable import TiltService

/// A client flushed on its own (`flushNow`, as the socket server does after a batch of reads)
/// and then queued again in the same loop turn is in the hub's flush list once: each of its
/// lines is written once, in order, through io_uring as through write(2).
final class FlushListTests: XCTestCase {
    func testALineQueuedAfterAnOwnFlushIsWrittenOnceThroughTheWriteRing() throws {
        try checkWrittenOnce(writeRing: true)
    }

    func testALineQueuedAfterAnOwnFlushIsWrittenOnceWithWrite() throws {
        try checkWrittenOnce(writeRing: false)
    }

    private func checkWrittenOnce(writeRing: Bool) throws {
        let f = try ServerFixture(writeRing: writeRing)
        let hub = f.hub
        let client = try LineClient(path: f.path)
        try waitUntil("the client") { f.onLoop { hub.value.clientCount } == 1 }
        _ = try client.next("hello")

        let listed = f.onLoop {
            let s = hub.value.sessions[0]
            s.reply(.reply(id: .int(1), cmd: "ping"))
            s.flushNow()
            // A reply that comes later in the same turn (a store command's, a game event's).
            s.reply(.reply(id: .int(2), cmd: "ping"))
            return s.inHubFlushList
        }
        XCTAssertTrue(listed, "the second reply waits for the hub's flush")
        f.onLoop { hub.value.sessions[0].reply(.reply(id: .int(3), cmd: "ping")) }

        var ids: [Int64] = []
        while ids.count < 3, let line = try client.readJSON(timeout: 5) {
            if line["class"] == "reply", let id = line["id"]?.intValue { ids.append(id) }
        }
        XCTAssertEqual(ids, [1, 2, 3], "each reply once, in order")
        let sent = f.onLoop { hub.value.sessions[0].sentTotal }
        XCTAssertEqual(sent, 4, "hello and three replies handed to the socket, none twice")
    }
}
