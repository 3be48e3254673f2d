// SPDX-License-Identifier: Apache-2.0
import Foundation
import SocketWriteRing
import TestSupport
import TiltCore
import TiltPlatform
import XCTest

@testable import TiltService

/// Fan-out through io_uring (`SocketWriteRing`), as the daemon does it where the kernel allows.
final class SocketWriteRingTests: XCTestCase {
    /// More clients than one submission holds (256), single lines (send) and bursts of many
    /// lines (sendmsg with iovecs, then write(2) past 64 lines), and a client that hangs up
    /// mid-stream: every other client gets every line, once, in order.
    func testManyClientsGetEveryLineInOrder() throws {
        let f = try ServerFixture(writeRing: true) { $0.attitudeHz = 1000 }
        XCTAssertEqual(f.onLoop { f.hub.value.fanoutWrites }, "io_uring")
        let n = 270
        var clients = try (0..<n).map { _ in try LineClient(path: f.path) }
        try waitUntil("\(n) clients") { f.onLoop { f.hub.value.clientCount } == n }
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
        try waitUntil("the hung-up client's session ends") { f.onLoop { f.hub.value.clientCount } == n - 1 }

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
        XCTAssertEqual(reply["fanout_registered_clients"]?.intValue, Int64(n - 1), "every socket in the file table")
        XCTAssertEqual(reply["lines_dropped"]?["attitude"]?.intValue, 0)
    }

    /// The ring's file table holds each client's socket open: a client the daemon closes must
    /// still see the end of the stream, and every client that goes gives its slot back.
    func testClientsLeaveTheFileTableWhenTheyGo() throws {
        let f = try ServerFixture(writeRing: true) { $0.attitudeHz = 1000 }
        // Closures run on the loop capture the hub, not the fixture: its last release must not
        // happen there (its deinit waits for the loop).
        let hub = f.hub
        let free = try XCTUnwrap(f.onLoop { hub.value.freeRingFileSlots })
        guard free > 0 else {
            let why = "this kernel gave the ring no file table (Linux < 5.19)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { return XCTFail("\(why); CI's kernel has one") }
            throw XCTSkip(why)
        }
        var t: Nanoseconds = 1_000_000_000
        /// One line to everyone connected, read by each of `readers`.
        func line(to readers: [LineClient]) throws {
            f.publishAttitudes(1, from: t, hz: 1000)
            for c in readers { XCTAssertEqual(try c.next("attitude")["t_ns"]?.intValue, t) }
            t += 1_000_000
        }
        func freeSlots() -> Int? { f.onLoop { hub.value.freeRingFileSlots } }

        var clients = try (0..<3).map { _ in try LineClient(path: f.path) }
        try waitUntil("3 clients") { f.onLoop { hub.value.clientCount } == 3 }
        for c in clients { _ = try c.next("hello") }
        XCTAssertEqual(freeSlots(), free - 3, "each client's socket entered the table when it connected")
        try line(to: clients)

        // The daemon closes the first client: it reads the end of the stream.
        f.onLoop { hub.value.clients[0].close() }
        let closed = clients.removeFirst()
        do {
            while let v = try closed.readJSON(timeout: 5) { XCTAssertEqual(v["class"], "attitude") }
        } catch {
            XCTFail("the client the daemon closed did not see the end of the stream: \(error)")
        }
        try waitUntil("its slot is free") { freeSlots() == free - 2 }
        // The second hangs up itself.
        clients.removeFirst()
        try waitUntil("the hung-up client's slot is free") { freeSlots() == free - 1 }

        // New clients take free slots; lines still reach everyone.
        clients += try (0..<2).map { _ in try LineClient(path: f.path) }
        try waitUntil("3 clients again") { f.onLoop { hub.value.clientCount } == 3 }
        for c in clients.suffix(2) { _ = try c.next("hello") }
        try line(to: clients)
        XCTAssertEqual(freeSlots(), free - 3)

        // Without the ring and with a new one: the old table went with the old ring.
        XCTAssertNil(f.onLoop { hub.value.useWriteRing(false) })
        try line(to: clients)
        XCTAssertNil(f.onLoop { hub.value.useWriteRing(true) })
        XCTAssertEqual(freeSlots(), free - 3, "the new ring's table has the clients, and no old slot")
        try line(to: clients)
    }

    /// Plain sends (`addSend`, the hub's direct path): more than one submission holds, each
    /// result handed back with its tag; a full socket answers −EAGAIN and a gone peer −EPIPE,
    /// at once, without a signal.
    func testPlainSendsReportEachResultByTag() throws {
        let ring: SocketWriteRing
        switch SocketWriteRing.make(entries: 256, files: 0) {
        case .success(let made): ring = made
        case .failure(let failure):
            let why = "io_uring is unavailable here (\(failure))"
            if ProcessInfo.processInfo.environment["CI"] == "true" { return XCTFail("\(why); CI's kernel has it") }
            throw XCTSkip(why)
        }
        var pairs: [(ours: Int32, theirs: Int32)] = []
        defer { for p in pairs { close(p.ours); close(p.theirs) } }
        for _ in 0..<300 {
            var fds: [Int32] = [-1, -1]
            XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
            pairs.append((fds[0], fds[1]))
        }
        let line = Array(#"{"class":"attitude","seq":1}"#.utf8) + [0x0A]
        var results = [Int32?](repeating: nil, count: pairs.count + 2)
        func record(_ tag: Int, _ result: Int32) {
            XCTAssertNil(results[tag], "tag \(tag) answered twice")
            results[tag] = result
        }
        // A socket with a full send buffer, and one whose peer is gone.
        let full = pairs[0].ours
        var small: Int32 = 4096
        setsockopt(full, SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(full, F_SETFL, fcntl(full, F_GETFL) | O_NONBLOCK)
        let filler = [UInt8](repeating: 0x20, count: 1024)
        while write(full, filler, filler.count) > 0 {}
        let orphan = pairs[1].ours
        close(pairs[1].theirs)
        pairs[1].theirs = -1

        try line.withUnsafeBytes { bytes in
            for (i, p) in pairs.enumerated() {
                if !ring.addSend(bytes, descriptor: p.ours, slot: -1, tag: i) {
                    XCTAssertEqual(i, 256, "the ring holds 256 requests")
                    try ring.submit(sent: record)
                    XCTAssertTrue(ring.addSend(bytes, descriptor: p.ours, slot: -1, tag: i))
                }
            }
            try ring.submit(sent: record)
        }
        XCTAssertEqual(results[0], -EAGAIN, "a full socket")
        XCTAssertEqual(results[1], -EPIPE, "a gone peer (fd \(orphan))")
        for i in 2..<pairs.count {
            XCTAssertEqual(results[i], Int32(line.count), "tag \(i)")
            var got = [UInt8](repeating: 0, count: 100)
            XCTAssertEqual(read(pairs[i].theirs, &got, got.count), line.count)
            XCTAssertEqual(Array(got.prefix(line.count)), line, "tag \(i)")
        }
        XCTAssertNil(results[pairs.count], "no answer for a tag never sent")
    }
}
