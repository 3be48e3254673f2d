// SPDX-License-Identifier: Apache-2.0
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TestSupport
import TiltClient
import TiltProtocol
import XCTest

/// `DaemonClient` against a scripted server on a Unix socket: framing, id-matched replies, the
/// `watch` on every connect, reconnect with backoff, timeouts and the line-length bound.
final class DaemonClientTests: XCTestCase {
    var dir = ""
    var path: String { "\(dir)/d.sock" }

    override func setUp() { dir = makeTempDir("client") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testRepliesAreMatchedByIDAndOtherLinesArriveTypedInOrder() async throws {
        let server = try await ScriptedServer.start(path: path) { line, conn in
            guard let o = try? JSONParser.parse(line).objectValue, let id = o["id"] else { return }
            if o["cmd"] == "ping" {
                // An event and a reply to someone else's id come first: neither is this reply.
                conn.write(
                    #"{"class":"attitude","seq":2,"t_ns":5,"q":[1,0,0,0],"roll_deg":1.5,"pitch_deg":-2,"at_rest":true}"#
                )
                conn.write(#"{"class":"reply","seq":3,"id":"other","cmd":"ping","ok":true,"pong":true}"#)
                conn.write(#"{"class":"reply","seq":4,"id":\#(id.jsonText),"cmd":"ping","ok":true,"pong":true}"#)
            }
        } onConnect: { conn in
            conn.write(
                #"{"class":"hello","seq":1,"version":"9","protocol":1,"sources":[{"source":"imu","state":"streaming","message":"ok"}]}"#
            )
        }
        defer { server.close() }
        let (client, events) = DaemonClient.makeStream(
            options: .init(socketPath: path, idPrefix: "t-", watch: ["attitude_hz": 5]))
        client.start()
        try await client.connected(timeout: 5).get()
        let reply = try await client.request(["cmd": "ping"], timeout: 5).get()
        XCTAssertTrue(reply.ok)
        XCTAssertEqual(reply["pong"], .bool(true))
        XCTAssertEqual(reply.cmd, "ping")
        client.close()

        var lines: [DaemonLine] = []
        for await e in events { if case .line(let l) = e { lines.append(l) } }
        XCTAssertEqual(lines.map(\.seq), [1, 2, 3], "the hello, the event and the foreign reply; not ours")
        guard case .hello(let hello) = lines[0].body else { return XCTFail("\(lines[0].body)") }
        XCTAssertEqual(hello.sources, [StatusBody(source: "imu", state: "streaming", message: "ok")])
        guard case .attitude(let a) = lines[1].body else { return XCTFail("\(lines[1].body)") }
        XCTAssertEqual(a.rollDeg, 1.5)
        XCTAssertNil(a.yawDeg)
        let received = server.received
        XCTAssertEqual(received.first, #"{"cmd":"watch","attitude_hz":5,"id":"t-watch"}"#, "watch first")
    }

    func testARequestWithoutReplyTimesOutAndALostConnectionFailsWhatWaits() async throws {
        let server = try await ScriptedServer.start(path: path) { line, conn in
            if line.contains("\"bye\"") { conn.close() }
        }
        defer { server.close() }
        var options = DaemonClient.Options(socketPath: path, idPrefix: "t-")
        options.reconnect = false
        let client = DaemonClient(options: options) { _ in }
        defer { client.close() }
        client.start()
        try await client.connected(timeout: 5).get()
        do {
            _ = try await client.request(["cmd": "ping"], timeout: 0.2).get()
            XCTFail("a reply came")
        } catch let e as DaemonClient.Failure { XCTAssertEqual(e, .timedOut(0.2)) }
        do {
            _ = try await client.request(["cmd": "bye"], timeout: 5).get()
            XCTFail("a reply came")
        } catch let e as DaemonClient.Failure { XCTAssertEqual(e, .connectionLost) }
    }

    func testReconnectsWithDoublingBackoffAndSendsWatchAgain() async throws {
        var options = DaemonClient.Options(socketPath: path, idPrefix: "t-", watch: ["samples": false])
        options.minRetry = 0.05
        options.maxRetry = 0.2
        let (client, events) = DaemonClient.makeStream(options: options)
        client.start()
        var retries: [Double] = []
        var reasons: [String] = []
        var it = events.makeAsyncIterator()
        while retries.count < 4, let e = await it.next() {
            if case .disconnected(let reason, let retry?) = e { retries.append(retry); reasons.append(reason) }
        }
        XCTAssertEqual(retries, [0.05, 0.1, 0.2, 0.2])
        XCTAssertEqual(reasons[0], "no socket at \(path)")
        let server = try await ScriptedServer.start(path: path) { _, _ in }
        defer { server.close() }
        while let e = await it.next() { if case .connected = e { break } }
        try await waitFor { server.received.count == 1 }
        server.dropConnections()
        while let e = await it.next() {
            if case .disconnected(let reason, let retry) = e {
                XCTAssertEqual(reason, "the daemon closed the connection")
                XCTAssertEqual(retry, 0.05, "a connection that was up starts the backoff again")
                break
            }
        }
        while let e = await it.next() { if case .connected = e { break } }
        try await waitFor { server.received.count == 2 }
        XCTAssertEqual(server.received, Array(repeating: #"{"cmd":"watch","samples":false,"id":"t-watch"}"#, count: 2))
        client.close()
        while await it.next() != nil {}
    }

    func testALineOverTheBoundClosesTheConnection() async throws {
        let server = try await ScriptedServer.start(path: path) { _, _ in
        } onConnect: { conn in
            conn.write(String(repeating: "x", count: 5000))
        }
        defer { server.close() }
        var options = DaemonClient.Options(socketPath: path)
        options.maxLineBytes = 1000
        options.reconnect = false
        let (client, events) = DaemonClient.makeStream(options: options)
        client.start()
        var reason: String?
        for await e in events { if case .disconnected(let r, _) = e { reason = r } }
        XCTAssertEqual(reason, "the daemon sent a line longer than 1000 bytes")
    }

    func testExchangeSaysWhenThereIsNoSocket() throws {
        XCTAssertThrowsError(try DaemonClient.exchange(["cmd": "ping"], socket: path, timeout: 2)) {
            XCTAssertEqual($0 as? DaemonClient.Failure, .cannotConnect("no socket at \(path)"))
        }
    }

    private func waitFor(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            if ContinuousClock.now > deadline { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
