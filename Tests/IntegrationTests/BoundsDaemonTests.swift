// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// Bounds on what a socket peer can make the daemon hold (issue 37): clients at once, bytes
/// queued per client, reads waiting for the store, and `room.show` past the line limit. Each
/// test fails on a daemon without the bound.
final class BoundsDaemonTests: ReplayDaemonTestCase {
    override var tempTag: String { "bounds" }

    func startDaemon(_ socketKeys: String = "", store: String = "") throws -> LineClient {
        try writeConfig(socketKeys: socketKeys, storeKeys: store)
        return try startReplayDaemon()
    }

    /// 1,000 clients connect (the default cap); the next one gets one line, a reply with
    /// `unavailable` and no id, and EOF, and so do 4,000 more (5,000 in all). The first client
    /// still answers `credits` within 1 s; once one leaves, a newcomer is served again.
    func testAThousandClientsConnectAndTheNextIsRefusedWithOneLine() throws {
        let first = try startDaemon()
        var clients: [LineClient] = [first]
        let t0 = Date()
        for i in 1..<1000 {
            let c = try LineClient(path: "\(dir)/tiltd.sock")
            _ = try c.next("hello", timeout: 10)
            clients.append(c)
            if i % 250 == 0 {
                XCTAssertEqual(try first.request(#"{"cmd":"ping","id":\#(i)}"#, id: i)["ok"], .bool(true))
            }
        }
        let connectSeconds = Date().timeIntervalSince(t0)
        let extra = try LineClient(path: "\(dir)/tiltd.sock")
        let refusal = try XCTUnwrap(try extra.readJSON(timeout: 10), "the refused client gets a line")
        XCTAssertEqual(refusal["class"], "reply", "\(refusal)")
        XCTAssertEqual(refusal["ok"], .bool(false), "\(refusal)")
        XCTAssertEqual(refusal["error"]?["code"], "unavailable", "\(refusal)")
        XCTAssertTrue(refusal["error"]?["message"]?.stringValue?.contains("max_clients") ?? false, "\(refusal)")
        XCTAssertNil(try extra.readJSON(timeout: 10), "then EOF")

        // 4,000 more try while the 1,000 stay (5,000 in all): each is refused with its line.
        let t2 = Date()
        var refused: [LineClient] = []
        for _ in 0..<4000 {
            let c = try LineClient(path: "\(dir)/tiltd.sock")
            XCTAssertEqual(try c.readJSON(timeout: 10)?["error"]?["code"], "unavailable")
            refused.append(c)
        }
        let refuseSeconds = Date().timeIntervalSince(t2)
        let t1 = Date()
        XCTAssertEqual(try first.request(#"{"cmd":"credits","id":2000}"#, id: 2000)["ok"], .bool(true))
        let creditsSeconds = Date().timeIntervalSince(t1)
        XCTAssertLessThan(creditsSeconds, 1, "credits answer within 1 s with 1,000 clients")

        clients.removeLast()  // closes it
        try waitUntil("a newcomer to be served once a client left", timeout: 10) {
            let c = try LineClient(path: "\(dir)/tiltd.sock")
            return (try c.readJSON(timeout: 5))?["class"] == "hello"
        }
        XCTAssertTrue(daemon!.isRunning, daemon!.log)
        print(
            "tiltd bounds: 1000 clients connected in \(String(format: "%.2f", connectSeconds)) s, 4000 more refused in \(String(format: "%.2f", refuseSeconds)) s; credits in \(String(format: "%.3f", creditsSeconds)) s with 1000 connected"
        )
    }

    /// A client that does not read and asks for many big replies: with `queue_bytes` 64 KiB its
    /// queue drops lines long before 1,024 of them (the line bound) wait, and says so with `gap`.
    func testAClientQueueIsBoundedInBytesNotOnlyLines() throws {
        let probe = try startDaemon("queue_bytes = 65536")
        let sleeper = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try sleeper.next("hello")
        // ~10 KB each: 400 of them are ~4 MB, far past the socket's buffers and 64 KiB.
        let asks = (0..<400).map { #"{"cmd":"help","id":\#($0)}"# + "\n" }.joined()
        try sleeper.send(Array(asks.utf8))
        var dropped: Int64 = 0
        try waitUntil("the sleeper's queue to drop lines", timeout: 20) {
            let s = try probe.request(#"{"cmd":"status","id":1}"#, id: 1)
            dropped = s["dropped_lines"]?.intValue ?? 0
            return dropped > 0
        }
        XCTAssertGreaterThan(dropped, 0)
        // The sleeper reads now: a gap event says how many of its lines went.
        let gap = try sleeper.next("gap", timeout: 20)
        XCTAssertGreaterThan(gap["dropped"]?.intValue ?? 0, 0, "\(gap)")
        XCTAssertTrue(daemon!.isRunning)
    }

    /// `room.show` with a view of ~10 KB (a room of ~30 players) past the 4 KiB default line
    /// limit: shown, with its id. Another command as long gets `line_too_long` with its id.
    func testRoomShowMayBeLongerThanTheLineLimitAndOtherLongLinesKeepTheirId() throws {
        let c = try startDaemon()
        let players = (0..<30).map {
            #"{"player":"device-\#($0)-\#(String(repeating: "x", count: 200))","score":\#($0)}"#
        }.joined(separator: ",")
        let view = #"{"room":"r1","state":"playing","players":[\#(players)]}"#
        XCTAssertGreaterThan(view.utf8.count, 4096)
        let shown = try c.request(#"{"cmd":"room.show","id":1,"view":\#(view)}"#, id: 1)
        XCTAssertEqual(shown["ok"], .bool(true), "\(shown)")
        let long = try c.request(#"{"cmd":"help","id":2,"command":"\#(String(repeating: "h", count: 5000))"}"#, id: 2)
        XCTAssertEqual(long["ok"], .bool(false), "\(long)")
        XCTAssertEqual(long["error"]?["code"], "line_too_long", "\(long)")
        XCTAssertEqual(try c.request(#"{"cmd":"ping","id":3}"#, id: 3)["ok"], .bool(true))
    }

    /// A client floods `history`; with `max_queued_reads` 4 the excess is answered `unavailable`
    /// at once, and a write (a redeem) still commits within 1 s.
    func testHistoryFloodIsBoundedAndAWriteStillCommitsWithinASecond() throws {
        let c = try startDaemon(store: "max_queued_reads = 4")
        let flooder = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try flooder.next("hello")
        // Replies only: what its full queue drops is then replies, counted by `gap`.
        _ = try flooder.request(#"{"cmd":"watch","id":-1,"classes":[],"attitude_hz":0}"#, id: -1)
        let n = 2000
        try flooder.send(Array((0..<n).map { #"{"cmd":"history","id":\#($0),"n":1000}"# + "\n" }.joined().utf8))
        let t0 = Date()
        let redeemed = try c.request(
            #"{"cmd":"credits.redeem","id":7,"amount":1,"request_id":"flood"}"#, id: 7, timeout: 10)
        let seconds = Date().timeIntervalSince(t0)
        XCTAssertEqual(redeemed["error"]?["code"], "insufficient_credits", "the write was decided: \(redeemed)")
        XCTAssertLessThan(seconds, 1, "a write waits behind no more than 4 reads")
        var busy = 0, answered = 0, dropped = 0
        while answered + dropped < n, let v = try flooder.readJSON(timeout: 20) {
            if v["class"] == "gap" { dropped += Int(v["dropped"]?.intValue ?? 0) }
            guard v["class"] == "reply" else { continue }
            answered += 1
            if v["error"]?["code"] == "unavailable" { busy += 1 }
        }
        XCTAssertEqual(answered + dropped, n, "every history request is answered (or its reply dropped, and counted)")
        XCTAssertGreaterThan(busy, 0, "some history requests were refused as busy")
        print(
            "tiltd bounds: a write decided in \(String(format: "%.3f", seconds)) s under \(n) history requests; \(busy) refused as busy"
        )
    }
}
