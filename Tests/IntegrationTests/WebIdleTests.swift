// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import XCTest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Silent TCP connections to `tiltd web` are closed (issue 37): `max_connections` of them that
/// never sent a byte held the page for every browser. With `idle_timeout_s` 1, each is closed
/// within a few seconds and the page loads again.
final class WebIdleTests: XCTestCase {
    private var rig: WebRig?
    override func tearDown() { rig?.stop() }

    /// A TCP connection to the web server that sends nothing.
    func silentConnection(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw LineClient.Failure(description: "connect: \(String(cString: strerror(errno)))") }
        return fd
    }

    /// True once the server closed `fd` (a read gives EOF or a reset).
    func isClosedByServer(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        return read(fd, &byte, 1) <= 0
    }

    func testSilentConnectionsAreClosedAndThePageLoads() async throws {
        let rig = try WebRig(webConfig: "max_connections = 8\nidle_timeout_s = 1")
        self.rig = rig
        try rig.startDaemon()
        try rig.startWeb()
        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        for _ in 0..<8 { fds.append(try silentConnection(port: rig.port)) }
        // A slow one too: part of a request head, a byte a while, never the blank line.
        let slow = try silentConnection(port: rig.port)
        fds.append(slow)
        _ = send(slow, "GET / HTTP/1.1\r\n", 16, Int32(MSG_NOSIGNAL))
        let t0 = Date()
        try waitUntil("the server to close every silent connection", timeout: 15) {
            _ = send(slow, "X", 1, Int32(MSG_NOSIGNAL))  // no SIGPIPE once it is closed
            return fds.allSatisfy { isClosedByServer($0) }
        }
        let closedAfter = Date().timeIntervalSince(t0)
        XCTAssertLessThan(closedAfter, 10)
        let (status, _, _) = try await http(rig, "/")
        XCTAssertEqual(status, 200, "the page loads once the silent connections are gone")
        print(
            "tiltd web: 9 silent connections closed after \(String(format: "%.1f", closedAfter)) s (idle_timeout_s = 1)"
        )
    }
}
