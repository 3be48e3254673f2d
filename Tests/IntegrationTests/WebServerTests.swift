// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `tiltd web` in front of a replaying daemon, driven by plain HTTP and WebSocket clients:
/// pairing, origins, limits, misbehaving browsers, and /metrics checked by promtool.
final class WebServerTests: XCTestCase {
    private var rig: WebRig?

    override func tearDown() {
        if (testRun?.hasSucceeded ?? true) == false, let rig { print(rig.logs) }
        rig?.stop()
    }

    func start(_ webConfig: String = "") throws -> WebRig {
        let rig = try WebRig(webConfig: webConfig)
        self.rig = rig
        try rig.startDaemon()
        try rig.startWeb()
        return rig
    }

    func pairCookie(_ rig: WebRig) async throws -> String {
        let (status, body, headers) = try await http(
            rig, "/pair", method: "POST", body: #"{"code":"\#(WebRig.pairingCode)"}"#)
        XCTAssertEqual(status, 200, body)
        let setCookie = headers["set-cookie"] ?? ""
        XCTAssertTrue(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"), setCookie)
        return String(setCookie.split(separator: ";")[0])
    }

    func testPairedBrowsersCommandTheGameOthersOnlyWatch() async throws {
        let rig = try start()
        // Unpaired: the start is refused by tiltd web.
        let unpaired = try await session(rig, send: [#"{"cmd":"game.start","id":1}"#]) {
            $0.contains { $0["id"] == .int(1) }
        }
        let refusal = unpaired.lines.first { $0["id"] == .int(1) }
        XCTAssertEqual(refusal?["error"]?["code"], .string("not_paired"), "\(unpaired.lines.suffix(3))")

        // Paired through POST /pair: the start reaches the daemon, and the round's events follow.
        let cookie = try await pairCookie(rig)
        let paired = try await session(rig, cookie: cookie, send: [#"{"cmd":"game.start","id":"go","round_s":10}"#]) {
            lines in
            // (The reply and the event may arrive in either order: the reply takes its own path.)
            lines.contains { $0["class"] == .string("game") && $0["kind"] == .string("round_started") }
                && lines.contains { $0["id"] == .string("go") }
        }
        let reply = paired.lines.first { $0["id"] == .string("go") }
        XCTAssertEqual(reply?["ok"], .bool(true), "\(String(describing: reply))")
        XCTAssertEqual(paired.lines.first?["event"], .string("session"))
        XCTAssertEqual(paired.lines.first?["paired"], .bool(true))

        // A wrong code is refused with 403, and a cross-site page may not even try.
        let (wrong, body, _) = try await http(rig, "/pair", method: "POST", body: #"{"code":"999-999"}"#)
        XCTAssertEqual(wrong, 403, body)
        let (cross, _, _) = try await http(
            rig, "/pair", method: "POST", body: #"{"code":"\#(WebRig.pairingCode)"}"#, origin: "http://evil.example")
        XCTAssertEqual(cross, 403)
    }

    func testCrossOriginWebSocketsAreRefused() async throws {
        let rig = try start()
        let own = "http://127.0.0.1:\(rig.port)"
        // hummingbird-websocket answers every refused upgrade with 400.
        XCTAssertEqual(try upgradeStatus(rig, origin: "http://evil.example"), 400, "another site's page")
        XCTAssertEqual(try upgradeStatus(rig, origin: "http://127.0.0.1:1"), 400, "another port is another origin")
        XCTAssertEqual(
            try upgradeStatus(rig, origin: own, secondOrigin: "http://evil.example"), 400, "two Origin headers")
        XCTAssertTrue(rig.web!.log.contains("refused a WebSocket"), rig.web!.log)
        XCTAssertEqual(try upgradeStatus(rig, origin: own), 101, "the page's own origin")
        XCTAssertEqual(try upgradeStatus(rig, origin: nil), 101, "no Origin: not a browser page")
        // DNS rebinding: Origin and Host both another site's name, pointed at this server.
        let rebound = "evil.example:\(rig.port)"
        XCTAssertEqual(try upgradeStatus(rig, origin: "http://\(rebound)", host: rebound), 400, "the stream")
        XCTAssertEqual(try upgradeStatus(rig, origin: nil, host: rebound, path: "/live"), 421, "a page")
        XCTAssertTrue(rig.web!.log.contains("Host \(rebound) is not this server's"), rig.web!.log)
    }

    /// Sends a WebSocket handshake by hand (so the headers are exactly these) and returns the status.
    func upgradeStatus(
        _ rig: WebRig, origin: String?, secondOrigin: String? = nil, host: String? = nil, path: String = "/ws"
    ) throws -> Int {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(s) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(rig.port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw LineClient.Failure(description: "connect failed") }
        var req =
            "GET \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(rig.port)")\r\n"
        // Only /ws is a WebSocket handshake; any other path is a plain request.
        if path == "/ws" {
            req +=
                "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        }
        if let origin { req += "Origin: \(origin)\r\n" }
        if let secondOrigin { req += "Origin: \(secondOrigin)\r\n" }
        req += "\r\n"
        _ = req.withCString { send(s, $0, strlen($0), 0) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8](repeating: 0, count: 256)
        let n = recv(s, &buf, buf.count, 0)
        let head = String(decoding: buf.prefix(max(0, n)), as: UTF8.self)
        guard let code = head.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw LineClient.Failure(description: "no HTTP status in \(head)")
        }
        return code
    }

    func testAMisbehavingBrowserIsClosedAndTheOthersGoOn() async throws {
        let rig = try start("max_messages_per_s = 5")
        let watcher = Task {
            try await session(rig) { lines in lines.filter { $0["class"] == .string("attitude") }.count >= 200 }
        }

        let oversized = try await session(
            rig, send: [#"{"cmd":"ping","pad":""# + String(repeating: "x", count: 5000) + #""}"#])
        XCTAssertEqual(oversized.close?.closeCode, .messageTooLarge)
        let garbage = try await session(rig, send: ["this is not json"])
        XCTAssertEqual(garbage.close?.closeCode, .unacceptableData)
        let flood = try await session(rig, send: Array(repeating: #"{"cmd":"ping"}"#, count: 40))
        XCTAssertEqual(flood.close?.closeCode, .policyViolation)
        // A well-formed command the browser may not send gets an error reply; the connection lives.
        let forbidden = try await session(rig, send: [#"{"cmd":"credits.redeem","id":5}"#, #"{"cmd":"ping","id":6}"#]) {
            l in l.contains { $0["id"] == .int(6) }
        }
        XCTAssertEqual(forbidden.lines.first { $0["id"] == .int(5) }?["error"]?["code"], .string("not_allowed"))
        XCTAssertEqual(forbidden.lines.first { $0["id"] == .int(6) }?["pong"], .bool(true))

        // The quiet browser kept receiving attitude all along (at 30 Hz: 200 lines ≈ 7 s).
        let seen = try await watcher.value
        XCTAssertGreaterThanOrEqual(seen.lines.filter { $0["class"] == .string("attitude") }.count, 200)
    }

    func testMoreBrowsersThanMaxClientsAreTurnedAway() async throws {
        let rig = try start("max_clients = 2")
        let gate = Gate()
        let holders = (0..<2).map { _ in Task { try await session(rig) { _ in gate.isOpen } } }
        try await waitUntilAsync("two browsers connected") {
            try await http(rig, "/metrics").1.contains("tiltd_web_browsers 2")
        }
        do {
            _ = try await session(rig) { _ in true }
            XCTFail("a third browser must be refused")
        } catch {}
        gate.open()
        for h in holders { _ = try await h.value }
    }

    func testMetricsPassPromtool() async throws {
        let rig = try start()
        _ = try await session(rig) { $0.count > 3 }
        let (status, text, headers) = try await http(rig, "/metrics")
        XCTAssertEqual(status, 200)
        XCTAssertTrue(headers["content-type"]?.hasPrefix("text/plain") == true)
        for name in [
            "tiltd_up 1", "tiltd_uptime_seconds", "tiltd_sample_rate_hz", "tiltd_samples_dropped_total",
            "tiltd_clients",
            "tiltd_lines_dropped_total{class=\"attitude\"}", "tiltd_decisions_total{kind=\"correct\"}",
            "tiltd_rounds_total",
            "tiltd_reloads_total", "tiltd_web_browsers", "tiltd_web_daemon_connects_total 1",
        ] {
            XCTAssertTrue(text.contains(name), "\(name) missing from:\n\(text)")
        }
        // Every sample line: a name, optional labels, a number.
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            XCTAssertNotNil(
                line.wholeMatch(of: /[a-z_:][a-z0-9_:]*(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+]+/),
                String(line))
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") else {
            let reason = "promtool is not installed (apt-get install prometheus, see scripts/install-deps --test)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail(reason) }
            throw XCTSkip(reason)
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/promtool")
        p.arguments = ["check", "metrics"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input; p.standardOutput = output; p.standardError = output
        try p.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(p.terminationStatus, 0, "promtool check metrics: \(said)")
        XCTAssertEqual(said.trimmingCharacters(in: .whitespacesAndNewlines), "", "promtool's lint findings")
    }
}

/// One WebSocket session: sends `send` (each as a text message), collects text messages until
/// `until` returns true or the server closes; returns them and the server's close frame.
/// Gives up after `timeout` s (attitude lines arrive all the time, so the check runs often).
func session(
    _ rig: WebRig, cookie: String? = nil, send: [String] = [], timeout: Double = 20,
    until: @escaping @Sendable ([JSONValue]) -> Bool = { _ in false }
) async throws -> (lines: [JSONValue], close: WebSocketCloseFrame?) {
    let deadline = Date().addingTimeInterval(timeout)
    // (The client sends its own Origin, ws://127.0.0.1:PORT, which is this server's.)
    var headers = HTTPFields()
    if let cookie { headers[.cookie] = cookie }
    let box = LinesBox()
    let close = try await WebSocketClient.connect(
        url: "ws://127.0.0.1:\(rig.port)/ws?attitude=1",
        configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: headers),
        logger: Logger(label: "test")
    ) { inbound, outbound, _ in
        for m in send { try await outbound.write(.text(m)) }
        for try await message in inbound.messages(maxSize: 1 << 20) {
            guard case .text(let t) = message, let v = try? JSONParser.parse(t) else { continue }
            if until(box.append(v)) { try await outbound.close(.normalClosure, reason: nil); break }
            if Date() > deadline {
                XCTFail("session: condition not met within \(timeout) s; last lines: \(box.lines.suffix(3))")
                try await outbound.close(.normalClosure, reason: nil); break
            }
        }
    }
    return (box.lines, close)
}

func http(
    _ rig: WebRig, _ path: String, method: String = "GET", body: String? = nil, origin: String? = nil
) async throws -> (Int, String, [String: String]) {
    var r = URLRequest(url: URL(string: "http://127.0.0.1:\(rig.port)\(path)")!)
    r.httpMethod = method
    r.timeoutInterval = 10
    if let body { r.httpBody = Data(body.utf8); r.setValue("application/json", forHTTPHeaderField: "Content-Type") }
    if let origin { r.setValue(origin, forHTTPHeaderField: "Origin") }
    let (data, response) = try await URLSession.shared.data(for: r)
    let h = response as! HTTPURLResponse
    var headers: [String: String] = [:]
    for (k, v) in h.allHeaderFields { headers[String(describing: k).lowercased()] = String(describing: v) }
    return (h.statusCode, String(decoding: data, as: UTF8.self), headers)
}

final class LinesBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [JSONValue] = []
    func append(_ v: JSONValue) -> [JSONValue] { lock.lock(); defer { lock.unlock() }; stored.append(v); return stored }
    var lines: [JSONValue] { lock.lock(); defer { lock.unlock() }; return stored }
}

final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var opened = false
    func open() { lock.lock(); opened = true; lock.unlock() }
    var isOpen: Bool { lock.lock(); defer { lock.unlock() }; return opened }
}

func waitUntilAsync(
    _ what: String, timeout: Double = 10, _ condition: @escaping @Sendable () async throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try await !condition() {
        if Date() > deadline {
            throw LineClient.Failure(description: "timed out after \(timeout) s waiting for \(what)")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
