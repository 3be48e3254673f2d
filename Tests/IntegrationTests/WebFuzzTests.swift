// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import TestSupport
import TiltCore
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real `tiltd web` under hostile peers (issue 37): 10,000 seeded messages (TILTD_FUZZ_WEB;
/// seed TILTD_FUZZ_SEED) — raw HTTP requests, half of them malformed, and WebSocket messages from
/// a paired and an unpaired browser, the socket fuzzer's command lines among them. No crash, no
/// hang (every request answered or closed, every WebSocket chunk's `ping` answered), and the
/// page still loads after.
final class WebFuzzTests: XCTestCase {
    private var rig: WebRig?
    override func tearDown() {
        if (testRun?.hasSucceeded ?? true) == false, let rig { print(rig.logs) }
        rig?.stop()
    }

    static var budget: Int { SocketFuzzTests.env["TILTD_FUZZ_WEB"].flatMap { Int($0) } ?? 10_000 }

    func testFuzzedHTTPAndWebSocketMessagesLeaveThePageLoading() async throws {
        // Messages as fast as the fuzzer sends them: `max_messages_per_s` (10) would close the
        // browser after its first burst, and the messages behind it would test nothing.
        let rig = try WebRig(webConfig: "idle_timeout_s = 1\nmax_messages_per_s = 1000")
        self.rig = rig
        try rig.startDaemon()
        try rig.startWeb()
        let cookie = try await WebFuzz.pair(rig)
        var rng = SplitMix64(seed: SocketFuzzTests.seed &+ 3)
        let t0 = Date()

        // Half the budget as raw HTTP requests, one connection each.
        let httpCount = Self.budget / 2
        var answered = 0
        var closedSilently = 0
        for i in 0..<httpCount {
            let request = WebFuzz.request(&rng, cookie: cookie)
            switch try WebFuzz.exchange(port: rig.port, request, timeout: 10) {
            case .answered: answered += 1
            case .closed: closedSilently += 1
            case .hung:
                return XCTFail("request \(i) neither answered nor closed in 10 s:\n\(WebFuzz.show(request))")
            }
            if i % 500 == 499 {
                XCTAssertTrue(rig.web?.isRunning ?? false, "tiltd web runs after request \(i):\n\(rig.logs)")
                let page = try WebFuzz.exchange(port: rig.port, Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                XCTAssertEqual(page, .answered, "the page after request \(i)")
            }
        }
        let httpSeconds = Date().timeIntervalSince(t0)

        // The other half as WebSocket messages, paired and not, in chunks each closed by a ping.
        let help = try LineClient(path: rig.socketPath, timeout: 15)
        try help.send(#"{"cmd":"help","id":"help"}"#)
        let catalogue = FuzzCommand.catalogue(fromHelp: try help.next("reply", timeout: 5) { $0["id"] == "help" })
        var maker = FuzzLineMaker(rng: SplitMix64(seed: SocketFuzzTests.seed &+ 4), commands: catalogue)
        let wsCount = Self.budget - httpCount
        var messages: [String] = []
        for i in 0..<wsCount {
            messages.append(
                maker.rng.chance(0.15)
                    ? String(
                        decoding: maker.rawLine(from: maker.commandLine(serial: i, edgeIDAllowed: false).line),
                        as: UTF8.self)
                    : maker.commandLine(serial: i, edgeIDAllowed: true).line)
        }
        let t1 = Date()
        let half = messages.count / 2
        let (pairedReplies, pairedClosed) = try await WebFuzz.socketChunks(
            rig, cookie: cookie, Array(messages[..<half]))
        let (unpairedReplies, unpairedClosed) = try await WebFuzz.socketChunks(
            rig, cookie: nil, Array(messages[half...]))
        let wsSeconds = Date().timeIntervalSince(t1)

        XCTAssertTrue(rig.web?.isRunning ?? false, "tiltd web runs:\n\(rig.logs)")
        XCTAssertTrue(rig.daemon?.isRunning ?? false, "the daemon runs:\n\(rig.logs)")
        let (status, body, _) = try await http(rig, "/")
        XCTAssertEqual(status, 200, "the page loads after the fuzz")
        XCTAssertTrue(body.contains("<html") || body.contains("<!DOCTYPE"), String(body.prefix(200)))
        // (A malformed head is closed without an answer: hummingbird's HTTP parser gives up on it.)
        XCTAssertGreaterThan(answered, httpCount / 4, "the well-formed requests get an HTTP answer")
        XCTAssertGreaterThan(pairedReplies + unpairedReplies, wsCount / 2, "the kept messages are answered")
        print(
            "tiltd web fuzz: \(httpCount) HTTP requests (\(answered) answered, \(closedSilently) closed without one) in \(String(format: "%.1f", httpSeconds)) s; \(wsCount) WebSocket messages (\(pairedReplies) + \(unpairedReplies) replies, paired + unpaired; \(pairedClosed + unpairedClosed) closed the browser as they should) in \(String(format: "%.1f", wsSeconds)) s; 0 crashes, 0 hangs, the page loads"
        )
    }

    /// 500 TCP connections to `tiltd web` that never send a byte: the page still loads (once
    /// `idle_timeout_s` has closed enough of them), and meanwhile the daemon commits a redeem and
    /// a round's end within 1 s.
    func testFiveHundredSilentConnectionsThePageLoadsAndCommitsStayFast() async throws {
        let rig = try WebRig(webConfig: "idle_timeout_s = 2")
        self.rig = rig
        try rig.startDaemon()
        try rig.startWeb()
        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        for _ in 0..<500 { fds.append(try WebFuzz.connect(port: rig.port)) }
        let t0 = Date()
        // The daemon's commits, with the web's connections all held.
        let c = try LineClient(path: rig.socketPath, timeout: 15)
        let t1 = Date()
        let redeem = try c.request(
            #"{"cmd":"credits.redeem","id":1,"amount":1,"request_id":"silent"}"#, id: 1, timeout: 10)
        let redeemSeconds = Date().timeIntervalSince(t1)
        XCTAssertEqual(redeem["error"]?["code"], "insufficient_credits", "the write was decided: \(redeem)")
        XCTAssertLessThan(redeemSeconds, 1)
        XCTAssertEqual(
            try c.request(#"{"cmd":"game.start","id":2,"round_s":30}"#, id: 2, timeout: 10)["ok"], .bool(true))
        let t2 = Date()
        try c.send(#"{"cmd":"game.stop","id":3}"#)
        _ = try c.next("game", timeout: 10) { $0["kind"] == "stopped" }  // sent once the round is committed
        let roundSeconds = Date().timeIntervalSince(t2)
        XCTAssertLessThan(roundSeconds, 1, "the stopped round was committed and announced within 1 s")
        // The page: its request waits behind the silent ones the server has not yet closed.
        var page = WebFuzz.Outcome.hung
        try waitUntil("the page to load with 500 silent connections", timeout: 60) {
            page = try WebFuzz.exchange(
                port: rig.port, Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), timeout: 60)
            return page == .answered
        }
        let pageSeconds = Date().timeIntervalSince(t0)
        XCTAssertTrue(rig.web?.isRunning ?? false, rig.logs)
        print(
            "tiltd web: with 500 silent TCP connections (max_connections 128, idle_timeout_s 2) the page loaded after \(String(format: "%.1f", pageSeconds)) s; the daemon decided a redeem in \(String(format: "%.3f", redeemSeconds)) s and committed a stopped round in \(String(format: "%.3f", roundSeconds)) s"
        )
    }
}
