// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltPlatform
import XCTest

@testable import TiltService

/// The fan-out's fast path (`DirectWrites`): an attitude line written from the shared bytes to
/// every client with nothing queued, and taken back into a client's queue when something else
/// for that client comes in the same loop turn.
final class DirectWritesTests: XCTestCase {
    func testALineInTheBatchStaysAheadOfWhatFollowsItInTheSameTurn() throws {
        try checkOrderInOneTurn(writeRing: false)
    }

    func testALineInTheBatchStaysAheadOfWhatFollowsItInTheSameTurnThroughTheWriteRing() throws {
        try checkOrderInOneTurn(writeRing: true)
    }

    /// In one loop turn: an attitude line (every client joins the batch), then a reply to the
    /// first client, the daemon closing the second, and a second attitude line for everyone.
    /// Each client takes its line back out of the batch (so it gets one write for the turn) and
    /// reads its lines once, in that order; the closed one reads the first line, then the end
    /// of the stream.
    private func checkOrderInOneTurn(writeRing: Bool) throws {
        let (f, clients) = try serverWithClients(3, writeRing: writeRing)
        let hub = f.hub
        nonisolated(unsafe) let engine = f.engine

        let t1: Nanoseconds = 1_000_000_000, t2 = t1 + 1_000_000
        let inBatch = f.onLoop {
            let attitude = { (t: Nanoseconds) in Self.ingestAttitude(at: t, into: engine) }
            attitude(t1)
            let joined = hub.value.directWrites.targets.count
            let sessions = hub.value.sessions
            sessions[0].reply(.reply(id: .int(5), cmd: "ping"))
            sessions[1].close()
            attitude(t2)
            return (joined, hub.value.directWrites.targets.map(\.done))
        }
        XCTAssertEqual(inBatch.0, 3, "all three clients had nothing queued: the first line went the direct way")
        XCTAssertEqual(
            inBatch.1, [true, true, true],
            "each client took its line back into its queue: the turn's lines go in one write, in order")

        let first = try clients[0].readJSON(timeout: 5)
        XCTAssertEqual(first?["t_ns"]?.intValue, t1)
        XCTAssertEqual(try clients[0].readJSON(timeout: 5)?["class"], "reply", "the reply after the line before it")
        XCTAssertEqual(try clients[0].next("attitude")["t_ns"]?.intValue, t2)

        XCTAssertEqual(try clients[1].readJSON(timeout: 5)?["t_ns"]?.intValue, t1)
        do {
            while let v = try clients[1].readJSON(timeout: 5) { XCTFail("after the close: \(v)") }
        } catch {
            XCTFail("the closed client did not see the end of the stream: \(error)")
        }

        XCTAssertEqual(try clients[2].readJSON(timeout: 5)?["t_ns"]?.intValue, t1)
        XCTAssertEqual(try clients[2].readJSON(timeout: 5)?["t_ns"]?.intValue, t2)

        // The count of lines handed over matches what was read: a line taken back out of the
        // batch is counted once, when its queue writes it.
        try waitUntil("the closed client is gone") { f.onLoop { hub.value.clientCount } == 2 }
        let sent = f.onLoop { hub.value.sessions.map(\.sentTotal) }
        XCTAssertEqual(sent, [4, 3], "hello, line, reply, line; hello, line, line")
    }

    /// A client whose connection ends while its line waits in the batch leaves the batch: the
    /// line is not written to its (closed, perhaps reused) descriptor, and the others get it.
    func testAClientThatEndsLeavesTheBatch() throws {
        let (f, clients) = try serverWithClients(2, writeRing: true)
        let hub = f.hub
        nonisolated(unsafe) let engine = f.engine

        let t: Nanoseconds = 1_000_000_000
        let left = f.onLoop {
            Self.ingestAttitude(at: t, into: engine)
            let gone = hub.value.sessions[0]
            // What the socket server does when the channel goes inactive.
            hub.value.remove(gone)
            gone.ended()
            return hub.value.directWrites.targets.map(\.done)
        }
        XCTAssertEqual(left, [true, false], "the ended client's target is out of the batch, the other's is not")
        XCTAssertEqual(try clients[1].readJSON(timeout: 5)?["t_ns"]?.intValue, t)
    }

    /// A server sending every attitude line, and `n` clients that have read their `hello`.
    private func serverWithClients(_ n: Int, writeRing: Bool) throws -> (ServerFixture, [LineClient]) {
        let f = try ServerFixture(writeRing: writeRing) { $0.attitudeHz = 1000 }
        let hub = f.hub
        let clients = try (0..<n).map { _ in try LineClient(path: f.path) }
        try waitUntil("\(n) clients") { f.onLoop { hub.value.clientCount } == n }
        for c in clients { _ = try c.next("hello") }
        return (f, clients)
    }

    /// What the sampler hands the engine for a sample at `t` (on the loop).
    private static func ingestAttitude(at t: Nanoseconds, into engine: Engine) {
        let s = IMUSample(t: t, accel: Vector3(0, 0, 9.81), gyro: .zero)
        engine.ingest(sample: s, attitude: Attitude(t: t, q: .identity, atRest: false, gyroBias: .zero))
    }
}
