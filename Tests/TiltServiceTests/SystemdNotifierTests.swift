// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import XCTest

@testable import TiltSystemd

/// A real datagram socket standing in for systemd's notify socket.
final class NotifySocketReceiver {
    let fd: Int32
    let address: NotifySocketAddress
    private let directory: URL?

    /// Binds a socket file in a fresh temporary directory, or an abstract name.
    init(abstract: Bool) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes: [UInt8]
        if abstract {
            let name = "tiltd-test-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            address = .abstract(name)
            bytes = [0] + Array(name.utf8)
            directory = nil
        } else {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-notify-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            directory = dir
            let path = dir.appendingPathComponent("notify").path
            address = .path(path)
            bytes = Array(path.utf8) + [0]
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard rc == 0 else { throw POSIXError(.init(rawValue: errno)!) }
    }

    deinit {
        close(fd)
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// The next datagram, or `nil` if none arrives before the deadline.
    func receive(timeout: TimeInterval = 2) -> String? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}

final class SystemdNotifierTests: XCTestCase {
    func testReadyAndStatusArriveInOneDatagramOnPathSocket() throws {
        let receiver = try NotifySocketReceiver(abstract: false)
        guard case .path(let path) = receiver.address else { return XCTFail("expected a path address") }
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        XCTAssertEqual(notifier.address, .path(path))

        try notifier.ready(status: "60 Hz from mpu6050, 0 clients")
        XCTAssertEqual(receiver.receive(), "READY=1\nSTATUS=60 Hz from mpu6050, 0 clients")
    }

    func testEveryStateOnAbstractSocket() throws {
        let receiver = try NotifySocketReceiver(abstract: true)
        guard case .abstract(let name) = receiver.address else { return XCTFail("expected an abstract address") }
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@" + name])
        XCTAssertEqual(notifier.address, .abstract(name))

        try notifier.watchdog()
        XCTAssertEqual(receiver.receive(), "WATCHDOG=1")
        try notifier.status("gpsd lost")
        XCTAssertEqual(receiver.receive(), "STATUS=gpsd lost")
        try notifier.stopping()
        XCTAssertEqual(receiver.receive(), "STOPPING=1")
        try notifier.notify(.errno(5))
        XCTAssertEqual(receiver.receive(), "ERRNO=5")

        let before = SystemdNotifier.monotonicMicroseconds()
        try notifier.reloading()
        let after = SystemdNotifier.monotonicMicroseconds()
        let reload = try XCTUnwrap(receiver.receive())
        let lines = reload.split(separator: "\n")
        XCTAssertEqual(lines.first, "RELOADING=1")
        let stamp = try XCTUnwrap(lines.last.flatMap { UInt64($0.dropFirst("MONOTONIC_USEC=".count)) })
        XCTAssertTrue(lines.last?.hasPrefix("MONOTONIC_USEC=") == true)
        XCTAssertTrue((before...after).contains(stamp), "\(stamp) not in \(before)...\(after)")
    }

    func testStatusLineBreaksBecomeSpaces() {
        XCTAssertEqual(NotifyState.status("a\nb\r\nc").assignment, "STATUS=a b c")
    }

    func testNoNotifySocketIsANoOp() throws {
        let notifier = SystemdNotifier(environment: [:])
        XCTAssertFalse(notifier.isEnabled)
        XCTAssertFalse(try notifier.notify(.ready))
    }

    func testUnsupportedOrEmptyAddressesAreIgnored() {
        XCTAssertNil(NotifySocketAddress(environmentValue: ""))
        XCTAssertNil(NotifySocketAddress(environmentValue: "@"))
        XCTAssertNil(NotifySocketAddress(environmentValue: "vsock:2:1234"))
        XCTAssertNil(NotifySocketAddress(environmentValue: "relative/path"))
    }

    func testMissingReceiverIsReportedAsError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-nobody-\(UUID().uuidString)")
        let notifier = SystemdNotifier(address: .path(dir.appendingPathComponent("notify").path))
        XCTAssertThrowsError(try notifier.notify(.ready)) { error in
            XCTAssertEqual((error as? NotifyError)?.operation, "sendto")
            XCTAssertEqual((error as? NotifyError)?.code, ENOENT)
        }
    }

    func testTooLongPathIsReportedAsAddressError() {
        let notifier = SystemdNotifier(address: .path("/" + String(repeating: "x", count: 200)))
        XCTAssertThrowsError(try notifier.notify(.ready)) { error in
            XCTAssertEqual(error as? NotifyError, NotifyError(operation: "address", code: 0))
        }
    }

    func testWatchdogIntervalFromEnvironment() {
        XCTAssertEqual(SystemdWatchdog.interval(environment: ["WATCHDOG_USEC": "10000000"], pid: 42), .seconds(10))
        XCTAssertEqual(
            SystemdWatchdog.interval(environment: ["WATCHDOG_USEC": "2500", "WATCHDOG_PID": "42"], pid: 42),
            .microseconds(2500))
        XCTAssertNil(
            SystemdWatchdog.interval(environment: ["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "41"], pid: 42))
        XCTAssertNil(SystemdWatchdog.interval(environment: ["WATCHDOG_USEC": "0"], pid: 42))
        XCTAssertNil(SystemdWatchdog.interval(environment: ["WATCHDOG_USEC": "ten"], pid: 42))
        XCTAssertNil(SystemdWatchdog.interval(environment: ["WATCHDOG_PID": "42"], pid: 42))
        XCTAssertNil(SystemdWatchdog.interval(environment: ["WATCHDOG_USEC": "1000", "WATCHDOG_PID": "x"], pid: 42))
    }
}
