// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
import TiltPlatform
#endif

/// A file descriptor the service manager passed to this process (socket activation).
public struct InheritedSocket: Sendable, Equatable {
    /// The descriptor number (3, 4, … in the order of the socket unit's `Listen*=` lines).
    public let fd: Int32
    /// Its name from `FileDescriptorName=` (`LISTEN_FDNAMES`), or "unknown" when none was given,
    /// as sd_listen_fds_with_names(3) does.
    public let name: String

    /// Creates a record of an inherited descriptor.
    public init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    /// Whether the descriptor is a listening `AF_UNIX` stream socket — what `tiltd.socket` passes and what
    /// the socket server can accept on. Checked before use so a misconfigured unit (e.g. a datagram or
    /// TCP socket) gives a clear error instead of odd failures later.
    public var isListeningUnixStream: Bool {
        var type: Int32 = 0
        var listening: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0 else { return false }
        size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 else { return false }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return false }
        #if os(Linux)
        let streamType = Int32(SOCK_STREAM.rawValue)
        #else
        let streamType = SOCK_STREAM
        #endif
        return type == streamType && listening != 0 && Int32(storage.ss_family) == AF_UNIX
    }
}

/// A socket-activation environment that is present but wrong.
public enum SocketActivationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `LISTEN_FDS` or `LISTEN_PID` is not a number.
    case malformed(variable: String, value: String)
    /// A descriptor `LISTEN_FDS` promises is not open in this process.
    case descriptorNotOpen(Int32)

    /// Readable summary for logs.
    public var description: String {
        switch self {
        case .malformed(let variable, let value):
            return "socket activation: \(variable)=\"\(value)\" is not a valid number"
        case .descriptorNotOpen(let fd):
            return "socket activation: LISTEN_FDS includes fd \(fd), but it is not open"
        }
    }
}

/// Takes the sockets systemd passes to a socket-activated service (the sd_listen_fds(3) protocol).
///
/// systemd opens the sockets of `tiltd.socket`, starts the daemon with them as descriptors 3, 4, … and sets
/// `LISTEN_FDS` (how many), `LISTEN_PID` (which process they are for) and `LISTEN_FDNAMES` (colon-separated
/// names). Without these variables the daemon binds its own socket.
public enum SocketActivation {
    /// The first passed descriptor, right after stdin, stdout and stderr (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3

    /// The variables of the protocol, removed after reading so child processes don't take them too.
    static let variables = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]

    /// Reads this process's activation environment, marks the descriptors close-on-exec and removes the
    /// variables from the environment.
    ///
    /// - Returns: the passed descriptors; empty when the daemon was not socket-activated (or the
    ///   variables were meant for another process).
    /// - Throws: ``SocketActivationError`` when the variables are there but wrong.
    public static func listenFDs() throws(SocketActivationError) -> [InheritedSocket] {
        try listenFDs(firstDescriptor: firstDescriptor)
    }

    /// ``listenFDs()`` with a movable first descriptor, so tests can use real descriptors above the ones
    /// the test runner holds.
    static func listenFDs(firstDescriptor: Int32) throws(SocketActivationError) -> [InheritedSocket] {
        // Unset even on error: a broken activation environment must not leak into anything spawned later.
        defer { for name in variables { unsetenv(name) } }
        let sockets = try parse(
            environment: ProcessInfo.processInfo.environment, pid: getpid(), firstDescriptor: firstDescriptor)
        for socket in sockets {
            let flags = fcntl(socket.fd, F_GETFD)
            guard flags >= 0 else { throw .descriptorNotOpen(socket.fd) }
            // Inherited descriptors come without FD_CLOEXEC; a spawned helper must not hold the socket open.
            _ = fcntl(socket.fd, F_SETFD, flags | FD_CLOEXEC)
        }
        return sockets
    }

    /// Interprets activation variables without touching the process: which descriptors are passed to the
    /// process `pid`, and their names.
    ///
    /// Like sd_listen_fds(3), anything other than a `LISTEN_PID` equal to `pid` means "not for us"
    /// (empty result), and names missing from `LISTEN_FDNAMES` become "unknown".
    public static func parse(
        environment: [String: String], pid: pid_t, firstDescriptor: Int32 = firstDescriptor
    ) throws(SocketActivationError) -> [InheritedSocket] {
        guard let pidText = environment["LISTEN_PID"] else { return [] }
        guard let listenPID = pid_t(pidText.trimmingWhitespace(newlines: false)) else {
            throw .malformed(variable: "LISTEN_PID", value: pidText)
        }
        guard listenPID == pid else { return [] }
        guard let countText = environment["LISTEN_FDS"] else { return [] }
        guard let count = Int32(countText.trimmingWhitespace(newlines: false)), count >= 0,
            count <= Int32.max - firstDescriptor
        else {
            throw .malformed(variable: "LISTEN_FDS", value: countText)
        }
        let names =
            environment["LISTEN_FDNAMES"].map {
                $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            } ?? []
        return (0..<count).map { index in
            let name = Int(index) < names.count && !names[Int(index)].isEmpty ? names[Int(index)] : "unknown"
            return InheritedSocket(fd: firstDescriptor + index, name: name)
        }
    }
}
