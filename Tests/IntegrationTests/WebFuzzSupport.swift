// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOCore
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The web fuzzer's parts (WebFuzzTests): seeded raw HTTP requests, one exchange over a plain
/// TCP socket, and WebSocket messages sent in chunks each closed by a `ping`.
enum WebFuzz {
    /// What became of one request.
    enum Outcome: Equatable {
        /// Response bytes came.
        case answered
        /// The server closed the connection without a byte (a malformed head, an idle timeout).
        case closed
        /// Neither within the time allowed.
        case hung
    }

    /// A paired browser's cookie (POST /pair with the rig's code).
    static func pair(_ rig: WebRig) async throws -> String {
        let (status, body, headers) = try await http(
            rig, "/pair", method: "POST", body: #"{"code":"\#(WebRig.pairingCode)"}"#)
        XCTAssertEqual(status, 200, body)
        return String((headers["set-cookie"] ?? "").split(separator: ";").first ?? "")
    }

    static let methods = [
        "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE", "get", "G\u{0}T", "",
    ]
    static let paths = [
        "/", "/live", "/plots", "/ws", "/ws?attitude=1", "/pair", "/unpair", "/session", "/metrics", "/api/recordings",
        "/api/recordings/head.csv/plot.svg", "/api/recordings/../../etc/passwd/plot.svg",
        "/api/recordings/%2e%2e%2ftiltd.toml/plot.svg", "/api/recordings/x.csv.gz/plot.svg?width=1e308",
        "/style.css", "/game.js", "/%00", "/%ff%fe", "//", "/..", "*", "http://evil.example/", "/?\u{7f}",
    ]
    static let bodies = [
        "", #"{"code":"000-000"}"#, #"{"code":"\#(WebRig.pairingCode)"}"#, #"{"code":null}"#, "{", "[]",
        #"{"code":"1e400"}"#, String(repeating: "x", count: 70_000), "\u{0}\u{1}\u{2}",
    ]
    static let headers = [
        "Content-Type: application/json", "Content-Length: 99999999999999999999", "Content-Length: -1",
        "Transfer-Encoding: chunked", "Transfer-Encoding: gzip, chunked", "Origin: http://evil.example",
        "Origin: http://127.0.0.1", "Cookie: tiltd_pair=\(String(repeating: "A", count: 5000))", "Cookie: ;;;=",
        "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: x",
        "Host: evil.example", "Host:", "X: \(String(repeating: "y", count: 20_000))", "Expect: 100-continue",
        "Range: bytes=0-1,2-3", "bad header line", ": empty name",
    ]

    /// One seeded request: mostly well-formed with odd parts, sometimes garbage bytes.
    static func request(_ rng: inout SplitMix64, cookie: String) -> [UInt8] {
        if rng.chance(0.1) { return (0..<rng.below(600)).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        let method = rng.pick(methods)
        var path = rng.pick(paths)
        if rng.chance(0.05) { path = "/" + String(repeating: "a", count: 9000) }
        let version = rng.chance(0.9) ? "HTTP/1.1" : rng.pick(["HTTP/1.0", "HTTP/2", "HTTP/9.9", "", "HTTP/1.1 extra"])
        var head = "\(method) \(path) \(version)\r\n"
        if rng.chance(0.9) { head += "Host: 127.0.0.1\r\n" }
        if rng.chance(0.4) { head += "Cookie: \(cookie)\r\n" }
        for _ in 0..<rng.below(4) { head += rng.pick(headers) + "\r\n" }
        var body = rng.chance(0.4) ? rng.pick(bodies) : ""
        if rng.chance(0.7) && !head.contains("Content-Length") { head += "Content-Length: \(body.utf8.count)\r\n" }
        if rng.chance(0.1) { body = String(body.prefix(body.count / 2)) }  // shorter than it said
        head += rng.chance(0.95) ? "\r\n" : ""  // sometimes the head never ends
        return Array(head.utf8) + Array(body.utf8)
    }

    /// A request's start, for a failure message.
    static func show(_ r: [UInt8]) -> String { String(decoding: r.prefix(300), as: UTF8.self).debugDescription }

    /// A TCP connection to the server on loopback.
    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            throw LineClient.Failure(description: "connect: \(String(cString: strerror(errno)))")
        }
        return fd
    }

    /// Sends `request` on a new connection, half-closes it, and waits up to `timeout` s for the
    /// first response byte or the server's close.
    static func exchange(port: Int, _ request: [UInt8], timeout: Double = 10) throws -> Outcome {
        let fd = try connect(port: port)
        defer { close(fd) }
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the server closed early (a refused head): fine
            sent += n
        }
        shutdown(fd, Int32(SHUT_WR))
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &buffer, buffer.count)
            return n > 0 ? .answered : .closed
        }
        return .hung
    }

    /// Whether `tiltd web` keeps a browser that sends `message` (a JSON object within
    /// `max_message_bytes`; anything else closes its connection, by design).
    static func isKept(_ message: String, maxBytes: Int = 4096) -> Bool {
        message.utf8.count <= maxBytes && (try? JSONParser.parse(message))?.objectValue != nil
    }

    /// Sends `messages` as a browser (`cookie`: paired): the ones the server keeps a browser for
    /// in chunks of 250 on a connection each, every chunk closed by a `ping` whose reply must come
    /// (60 s); each other one (not an object, too big, or binary) on a connection of its own, which
    /// the server must close. Returns the replies seen and the connections closed.
    static func socketChunks(_ rig: WebRig, cookie: String?, _ messages: [String]) async throws -> (Int, Int) {
        var replies = 0
        var closed = 0
        let kept = messages.filter { isKept($0) }
        for start in stride(from: 0, to: kept.count, by: 250) {
            let sync = "sync-\(start)"
            let chunk = Array(kept[start..<min(start + 250, kept.count)]) + [#"{"cmd":"ping","id":"\#(sync)"}"#]
            let r = try await session(rig, cookie: cookie, chunk.map { .text($0) }) { $0["id"] == .string(sync) }
            replies += r.replies
            XCTAssertTrue(r.done, "no reply to \(sync) (the chunk from kept message \(start))\n\(rig.logs)")
            if !r.done { return (replies, closed) }
        }
        let closing =
            messages.filter { !isKept($0) }.map { WebSocketOutboundWriter.OutboundFrame.text($0) } + [
                .binary(ByteBuffer(bytes: [0, 1, 0xff]))
            ]
        for (i, m) in closing.enumerated() {
            let r = try await session(rig, cookie: cookie, [m]) { _ in false }
            XCTAssertTrue(r.closed, "the server kept a browser after closing message \(i)\n\(rig.logs)")
            if !r.closed { return (replies, closed) }
            closed += 1
        }
        return (replies, closed)
    }

    /// One WebSocket session: sends `messages`, then reads until a reply satisfies `done`, the
    /// server closes, or 60 s pass (attitude lines keep arriving, so the time is checked often).
    static func session(
        _ rig: WebRig, cookie: String?, _ messages: [WebSocketOutboundWriter.OutboundFrame],
        done: @escaping @Sendable (JSONValue) -> Bool
    ) async throws -> (replies: Int, done: Bool, closed: Bool) {
        var headers = HTTPFields()
        if let cookie { headers[.cookie] = cookie }
        let result = LinesBox()
        _ = try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(rig.port)/ws?attitude=1",
            configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: headers), logger: Logger(label: "web-fuzz")
        ) { inbound, outbound, _ in
            // (The server may close while the messages are still being written.)
            for m in messages { do { try await outbound.write(m) } catch { break } }
            let deadline = Date().addingTimeInterval(60)
            var replies = 0
            var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            while Date() < deadline {
                guard let message = try? await iterator.next() else {
                    _ = result.append(.object(["replies": .int(Int64(replies)), "closed": true]))
                    return
                }
                guard case .text(let t) = message, let v = try? JSONParser.parse(t), v["class"] == "reply" else {
                    continue
                }
                replies += 1
                if done(v) {
                    _ = result.append(.object(["replies": .int(Int64(replies)), "done": true]))
                    try? await outbound.close(.normalClosure, reason: nil)
                    return
                }
            }
            _ = result.append(.object(["replies": .int(Int64(replies))]))
            try? await outbound.close(.normalClosure, reason: nil)
        }
        let r = result.lines.last ?? .null
        return (Int(r["replies"]?.intValue ?? 0), r["done"] == .bool(true), r["closed"] == .bool(true))
    }
}
