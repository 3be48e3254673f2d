// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import TiltService
import XCTest

@testable import TiltSystemd

final class SystemdSocketActivationTests: XCTestCase {
    func testParseNamesAndNumbering() throws {
        let sockets = try SocketActivation.parse(
            environment: ["LISTEN_PID": "77", "LISTEN_FDS": "3", "LISTEN_FDNAMES": "tiltd::extra"], pid: 77)
        XCTAssertEqual(
            sockets,
            [
                InheritedSocket(fd: 3, name: "tiltd"),
                InheritedSocket(fd: 4, name: "unknown"),
                InheritedSocket(fd: 5, name: "extra"),
            ])
    }

    func testParseWithoutNames() throws {
        let sockets = try SocketActivation.parse(environment: ["LISTEN_PID": "77", "LISTEN_FDS": "1"], pid: 77)
        XCTAssertEqual(sockets, [InheritedSocket(fd: 3, name: "unknown")])
    }

    func testVariablesForAnotherProcessOrAbsentMeanNoActivation() throws {
        XCTAssertEqual(try SocketActivation.parse(environment: [:], pid: 77), [])
        XCTAssertEqual(try SocketActivation.parse(environment: ["LISTEN_FDS": "1"], pid: 77), [])
        XCTAssertEqual(try SocketActivation.parse(environment: ["LISTEN_PID": "76", "LISTEN_FDS": "1"], pid: 77), [])
        XCTAssertEqual(try SocketActivation.parse(environment: ["LISTEN_PID": "77", "LISTEN_FDS": "0"], pid: 77), [])
    }

    func testMalformedVariablesAreErrors() {
        XCTAssertThrowsError(try SocketActivation.parse(environment: ["LISTEN_PID": "me", "LISTEN_FDS": "1"], pid: 77))
        {
            XCTAssertEqual($0 as? SocketActivationError, .malformed(variable: "LISTEN_PID", value: "me"))
        }
        XCTAssertThrowsError(
            try SocketActivation.parse(environment: ["LISTEN_PID": "77", "LISTEN_FDS": "-1"], pid: 77)
        ) {
            XCTAssertEqual($0 as? SocketActivationError, .malformed(variable: "LISTEN_FDS", value: "-1"))
            XCTAssertEqual("\($0)", "socket activation: LISTEN_FDS=\"-1\" is not a valid number")
        }
    }

    /// Real descriptors, placed at consecutive numbers as systemd would, taken through the process
    /// environment: names, CLOEXEC set, variables removed, socket type recognised.
    func testTakesRealDescriptorsFromProcessEnvironment() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-act-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let listening = try makeUnixSocket(
            type: SOCK_STREAM, path: directory.appendingPathComponent("s").path, listen: true)
        let datagram = try makeUnixSocket(
            type: SOCK_DGRAM, path: directory.appendingPathComponent("d").path, listen: false)
        // Move them to a free pair of numbers without CLOEXEC, like an exec'd child inherits them.
        let first: Int32 = 700
        XCTAssertEqual(dup2(listening, first), first)
        XCTAssertEqual(dup2(datagram, first + 1), first + 1)
        close(listening)
        close(datagram)
        defer { close(first); close(first + 1) }
        XCTAssertEqual(fcntl(first, F_GETFD) & FD_CLOEXEC, 0)

        setenv("LISTEN_PID", String(getpid()), 1)
        setenv("LISTEN_FDS", "2", 1)
        setenv("LISTEN_FDNAMES", "tiltd:other", 1)
        let sockets = try SocketActivation.listenFDs(firstDescriptor: first)

        XCTAssertEqual(sockets.map(\.name), ["tiltd", "other"])
        XCTAssertEqual(sockets.map(\.fd), [first, first + 1])
        XCTAssertNotEqual(fcntl(first, F_GETFD) & FD_CLOEXEC, 0)
        XCTAssertNotEqual(fcntl(first + 1, F_GETFD) & FD_CLOEXEC, 0)
        XCTAssertTrue(sockets[0].isListeningUnixStream)
        XCTAssertFalse(sockets[1].isListeningUnixStream)
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
            XCTAssertNil(getenv(name), "\(name) should be unset")
        }
    }

    func testDescriptorThatIsNotOpenIsAnErrorAndEnvironmentStillCleared() {
        let first: Int32 = 900
        close(first)
        setenv("LISTEN_PID", String(getpid()), 1)
        setenv("LISTEN_FDS", "1", 1)
        XCTAssertThrowsError(try SocketActivation.listenFDs(firstDescriptor: first)) {
            XCTAssertEqual($0 as? SocketActivationError, .descriptorNotOpen(first))
        }
        XCTAssertNil(getenv("LISTEN_FDS"))
        XCTAssertNil(getenv("LISTEN_PID"))
    }

    func testWithoutActivationTheProcessGetsNothing() throws {
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        XCTAssertEqual(try SocketActivation.listenFDs(), [])
    }

    private func makeUnixSocket(type: __socket_type, path: String, listen shouldListen: Bool) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(type.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
        let rc = UnixSocketAddress(path: path)!.bind(fd)
        guard rc == 0 else { throw POSIXError(.init(rawValue: errno)!) }
        if shouldListen { guard listen(fd, 4) == 0 else { throw POSIXError(.init(rawValue: errno)!) } }
        return fd
    }
}
