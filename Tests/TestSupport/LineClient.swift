// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltProtocol

/// A blocking Unix-socket client that reads JSON lines with deadlines — what `socat` does,
/// in a test.
///
/// `@unchecked`: no lock; a client is used by one test thread at a time (its read buffer is
/// not shared), and is `Sendable` only so tests can hand it to a helper thread in turn.
public final class LineClient: @unchecked Sendable {
    public let fd: Int32
    /// Lines framed and not yet read, oldest first (the package's one framer; no bound worth
    /// enforcing in a test).
    private var framer = LineFramer(maxLineBytes: 1 << 26)
    private var lines: [String] = []

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Connects to `path`, retrying until `timeout` (the daemon may still be starting).
    public init(path: String, timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            let rc = withUnixAddress(path) { connect(s, $0, $1) }
            if rc == 0 { fd = s; return }
            close(s)
            if Date() > deadline {
                throw Failure(description: "cannot connect to \(path): \(String(cString: strerror(errno)))")
            }
            usleep(20_000)
        }
    }

    deinit { close(fd) }

    /// Sends raw bytes.
    public func send(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }; throw Failure(description: "write: \(String(cString: strerror(errno)))")
            }
            off += n
        }
    }

    /// Sends one line (a newline is added).
    public func send(_ line: String) throws { try send(Array((line + "\n").utf8)) }

    /// The next line, or nil at EOF; throws on timeout.
    public func readLine(timeout: Double = 5) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if !lines.isEmpty { return lines.removeFirst() }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { throw Failure(description: "no line within \(timeout) s") }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, Int32(max(1, left * 1000)))
            if r < 0 && errno == EINTR { continue }
            if r <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = read(fd, &chunk, chunk.count)
            if n == 0 {
                let rest = framer.remainder
                framer.reset()
                return rest.isEmpty ? nil : String(decoding: rest, as: UTF8.self)
            }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }; if errno == ECONNRESET { return nil };
                throw Failure(description: "read: \(String(cString: strerror(errno)))")
            }
            framer.feed(chunk[..<n]) { piece in
                if case .line(let bytes) = piece { lines.append(String(decoding: bytes, as: UTF8.self)) }
                return true
            }
        }
    }

    /// The next line parsed as JSON.
    public func readJSON(timeout: Double = 5) throws -> JSONValue? {
        guard let l = try readLine(timeout: timeout) else { return nil }
        do { return try JSONParser.parse(l) } catch {
            throw Failure(description: "not JSON: \(l.prefix(200)): \(error)")
        }
    }

    /// Reads until a line of class `cls` (optionally matching `where`) arrives; returns it.
    public func next(
        _ cls: String, timeout: Double = 5, where match: (JSONValue) -> Bool = { _ in true }
    ) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { throw Failure(description: "no \(cls) line within \(timeout) s") }
            guard let v = try readJSON(timeout: left) else {
                throw Failure(description: "connection closed while waiting for \(cls)")
            }
            if v["class"]?.stringValue == cls && match(v) { return v }
        }
    }

    /// Sends a command and returns its reply (skipping events in between).
    public func request(_ json: String, id: Int, timeout: Double = 5) throws -> JSONValue {
        try send(json)
        return try next("reply", timeout: timeout) { $0["id"] == .int(Int64(id)) }
    }
}

/// Polls `condition` until it holds or `timeout` passes; the way tests wait without sleeping blind.
public func waitUntil(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        if Date() > deadline {
            throw LineClient.Failure(description: "timed out after \(timeout) s waiting for \(what)")
        }
        usleep(10_000)
    }
}

/// A fresh temporary directory (short path: Unix socket paths are limited to 107 bytes).
public func makeTempDir(_ tag: String = "t") -> String {
    let p = "/tmp/tiltd-\(tag)-\(UUID().uuidString.prefix(8))"
    try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
    return p
}

/// Calls `body` with `path` as a `sockaddr_un` (truncated to fit) and its length: for bind and
/// connect in tests. (The daemon's own is `UnixSocketAddress` in TiltService.)
public func withUnixAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
        let b = Array(path.utf8.prefix(raw.count - 1)); raw.copyBytes(from: b); raw[b.count] = 0
    }
    return withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}
