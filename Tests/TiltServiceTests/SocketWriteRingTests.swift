import Foundation
import TestSupport
import TiltCore
import XCTest

@testable import TiltService

/// Fan-out through io_uring (`SocketWriteRing`), as the daemon does it where the kernel allows.
final class SocketWriteRingTests: XCTestCase {
    /// More clients than one submission holds (256), single lines (send) and bursts of many
    /// lines (sendmsg with iovecs, then write(2) past 64 lines), and a client that hangs up
    /// mid-stream: every other client gets every line, once, in order.
    func testManyClientsGetEveryLineInOrder() throws {
        let f = try ServerFixture(writeRing: true) { $0.attitudeHz = 1000 }
        XCTAssertEqual(f.onLoop { f.hub.fanoutWrites }, "io_uring")
        let n = 270
        var clients = try (0..<n).map { _ in try LineClient(path: f.path) }
        try waitUntil("\(n) clients") { f.onLoop { f.hub.clientCount } == n }
        for c in clients { _ = try c.next("hello") }

        // 20 turns of one line each, then 4 turns of 50 lines.
        var t: Nanoseconds = 1_000_000_000
        for _ in 0..<20 {
            f.publishAttitudes(1, from: t, hz: 1000)
            t += 1_000_000
        }
        clients.removeLast()  // hangs up with lines unread and more coming
        for _ in 0..<4 {
            f.publishAttitudes(50, from: t, hz: 1000)
            t += 50_000_000
        }
        try waitUntil("the hung-up client's session ends") { f.onLoop { f.hub.clientCount } == n - 1 }

        for (i, c) in clients.enumerated() {
            var last: Int64 = 0
            for k in 0..<220 {
                let v = try c.next("attitude")
                let seq = try XCTUnwrap(v["seq"]?.intValue)
                XCTAssertGreaterThan(seq, last, "client \(i), line \(k): out of order or repeated")
                last = seq
                XCTAssertEqual(v["t_ns"]?.intValue, 1_000_000_000 + Int64(k) * 1_000_000, "client \(i), line \(k)")
            }
        }
        let reply = try clients[0].request(#"{"cmd":"stats","id":7}"#, id: 7)
        XCTAssertEqual(reply["fanout_writes"], "io_uring")
        XCTAssertEqual(reply["lines_dropped"]?["attitude"]?.intValue, 0)
    }
}
