// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

@testable import TiltSensors

/// A gpsd host that does not answer (down, or a firewall dropping packets) must not hold the
/// source for the kernel's SYN retry time: the attempt fails after `connectTimeout`.
final class GPSDConnectTimeoutTests: XCTestCase {
    func testAnUnansweringHostTimesOut() throws {
        // A loopback listener whose accept queue is full and never drained: the kernel drops
        // further SYNs, so a connect to it hangs exactly like one to a host that is down,
        // without sending anything off this machine.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let len = socklen_t(MemoryLayout<sockaddr_in>.size)
        XCTAssertEqual(
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) }
            }, 0)
        XCTAssertEqual(listen(listener, 0), 0)
        var bound = sockaddr_in(), boundLen = len
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &boundLen) }
        }
        let port = Int(UInt16(bigEndian: bound.sin_port))
        var fillers: [Int32] = []
        defer { for filler in fillers { close(filler) } }
        // Fill the queue: connects that complete go into it; stop at the first that cannot.
        while fillers.count < 16 {
            if TCPReachability.check(host: "127.0.0.1", port: port, timeout: 0.3) != nil { break }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &addr) { p -> Int32 in
                var a = p.pointee; a.sin_port = bound.sin_port
                return withUnsafePointer(to: &a) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, len) }
                }
            }
            fillers.append(fd)
            usleep(20_000)
        }
        XCTAssertNotNil(TCPReachability.check(host: "127.0.0.1", port: port, timeout: 0.3), "the queue never filled")

        let started = ContinuousClock.now
        let collector = FixCollector(
            running: GPSDSource(
                config: GPSDConfig(
                    host: "127.0.0.1", port: port, backoff: Backoff(initial: 5, maximum: 5), connectTimeout: 1)))
        defer { XCTAssertTrue(collector.stopAndWait(), "run did not return after stop") }
        XCTAssertTrue(waitFor(6) { collector.statuses.contains { $0.state == .retrying } }, "\(collector.all)")
        let elapsed = started.duration(to: .now)
        let retrying = try XCTUnwrap(collector.statuses.first { $0.state == .retrying })
        XCTAssertTrue(retrying.message.contains("timed out"), retrying.message)
        XCTAssertLessThan(elapsed, .seconds(4), "the attempt ended near its 1 s timeout")
    }
}
