// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// `echo '{"cmd":"credits"}' | socat - UNIX-CONNECT:…` printed no reply: the client shuts down its
/// write side after its line, and the daemon ended the session at that EOF, before the store's
/// answer came. Every reply, the store's too, must reach a half-closed client, then EOF.
final class HalfClosedClientTests: ReplayDaemonTestCase {
    override var tempTag: String { "halfclose" }

    func startDaemon() throws {
        try startReplayDaemon()
    }

    /// Sends `lines`, shuts down the write side, and reads until EOF: every reply, by its id's text.
    func halfClosedExchange(_ lines: [String]) throws -> [String: JSONValue] {
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try c.next("hello")
        for l in lines { try c.send(l) }
        XCTAssertEqual(shutdown(c.fd, Int32(SHUT_WR)), 0)
        var replies: [String: JSONValue] = [:]
        // EOF must come too: the session ends once its replies are out.
        while let v = try c.readJSON(timeout: 10) {
            if v["class"]?.stringValue == "reply", let id = v["id"] { replies["\(id)"] = v }
        }
        return replies
    }

    func testEveryReplyReachesAClientThatHalfClosedAfterItsLines() throws {
        try startDaemon()
        for round in 0..<20 {
            let replies = try halfClosedExchange([
                #"{"cmd":"credits","id":1}"#, #"{"cmd":"history","id":2,"n":1000}"#, #"{"cmd":"ping","id":3}"#,
                #"{"cmd":"credits","id":4}"#,
            ])
            for id in 1...4 {
                XCTAssertEqual(
                    replies["\(JSONValue.int(Int64(id)))"]?["ok"], .bool(true),
                    "round \(round): reply \(id) of \(replies)")
            }
        }
    }

    func testTheStoresReplyAloneReachesAHalfClosedClient() throws {
        try startDaemon()
        for round in 0..<20 {
            let replies = try halfClosedExchange([#"{"cmd":"credits","id":"c"}"#])
            XCTAssertEqual(replies["\(JSONValue.string("c"))"]?["ok"], .bool(true), "round \(round): \(replies)")
        }
        XCTAssertTrue(daemon!.isRunning, "log:\n\(daemon!.log)")
    }
}
