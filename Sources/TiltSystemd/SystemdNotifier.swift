// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltPlatform

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One state change the daemon reports to the service manager.
///
/// These are the assignments of the `sd_notify` datagram protocol (see sd_notify(3)); several may go in
/// one datagram, one per line.
public enum NotifyState: Sendable, Equatable {
    /// `READY=1`: start-up is finished and the socket is being served.
    case ready
    /// `STATUS=…`: one line of free text that `systemctl status` shows.
    case status(String)
    /// `WATCHDOG=1`: the keep-alive ping; must come more often than `WatchdogSec=`.
    case watchdog
    /// `STOPPING=1`: shutdown has begun.
    case stopping
    /// `RELOADING=1` (with `MONOTONIC_USEC=` when given): a config reload has begun; finish with `.ready`.
    case reloading(monotonicMicroseconds: UInt64?)
    /// `ERRNO=…`: the errno-style reason of a failure, shown by `systemctl status`.
    case errno(Int32)

    /// The protocol text of this state, without a trailing newline.
    ///
    /// A status line loses its line breaks: the protocol is line-based, and a newline inside a value would
    /// start a new (bogus) assignment.
    public var assignment: String {
        switch self {
        case .ready: return "READY=1"
        case .status(let text):
            let oneLine = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
                .joined(separator: " ")
            return "STATUS=\(oneLine)"
        case .watchdog: return "WATCHDOG=1"
        case .stopping: return "STOPPING=1"
        case .reloading(let usec):
            if let usec { return "RELOADING=1\nMONOTONIC_USEC=\(usec)" }
            return "RELOADING=1"
        case .errno(let code): return "ERRNO=\(code)"
        }
    }
}

/// Where the service manager listens for notifications, parsed from `$NOTIFY_SOCKET`.
public enum NotifySocketAddress: Sendable, Equatable {
    /// A socket file, e.g. `/run/systemd/notify`.
    case path(String)
    /// A Linux abstract-namespace socket: `$NOTIFY_SOCKET` started with `@`, which stands for a leading NUL.
    case abstract(String)

    /// Parses a `$NOTIFY_SOCKET` value; `nil` for an empty value or a form this daemon does not speak
    /// (e.g. `vsock:`), in which case notifications are silently skipped like under no service manager.
    public init?(environmentValue value: String) {
        if value.hasPrefix("/") {
            self = .path(value)
        } else if value.hasPrefix("@"), value.utf8.count > 1 {
            self = .abstract(String(value.dropFirst()))
        } else {
            return nil
        }
    }
}

/// Why a notification could not be delivered.
public struct NotifyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The failing step: "socket", "address" or "sendto".
    public let operation: String
    /// The errno the step failed with (0 for an address that does not fit `sockaddr_un`).
    public let code: Int32

    /// Readable summary for logs, e.g. `sd_notify sendto failed: Connection refused (errno 111)`.
    public var description: String {
        if code == 0 { return "sd_notify \(operation) failed" }
        return "sd_notify \(operation) failed: \(SystemError.text(code)) (errno \(code))"
    }
}

/// Sends service-manager notifications (`sd_notify`) over the documented datagram protocol.
///
/// The protocol is small enough that linking libsystemd buys nothing: each notification is one
/// `AF_UNIX`/`SOCK_DGRAM` datagram of newline-separated `KEY=VALUE` lines sent to `$NOTIFY_SOCKET`.
/// When the daemon is not run by systemd (`$NOTIFY_SOCKET` unset) every call is a no-op, so callers never
/// need to ask. Sending never blocks (`MSG_DONTWAIT`): the watchdog ping comes from the sampling path,
/// which must not stall on a busy service manager.
public struct SystemdNotifier: Sendable {
    /// The service manager's socket, or `nil` when there is none to talk to.
    public let address: NotifySocketAddress?

    /// A notifier for an explicit address (`nil`: a notifier that does nothing).
    public init(address: NotifySocketAddress?) {
        self.address = address
    }

    /// A notifier for the address in `$NOTIFY_SOCKET` of the given environment (default: this process's).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.address = environment["NOTIFY_SOCKET"].flatMap(NotifySocketAddress.init(environmentValue:))
    }

    /// Whether notifications go anywhere.
    public var isEnabled: Bool { address != nil }

    /// Sends the states in one datagram. Returns `false` when there is no service manager.
    ///
    /// - Throws: ``NotifyError`` when a socket exists but the datagram cannot be sent; the daemon should log
    ///   it and carry on, as a missed notification is not a reason to stop serving.
    @discardableResult
    public func notify(_ states: [NotifyState]) throws(NotifyError) -> Bool {
        guard let address, !states.isEmpty else { return false }
        let text = states.map(\.assignment).joined(separator: "\n")
        try Self.send(Array(text.utf8), to: address)
        return true
    }

    /// Sends one state. Returns `false` when there is no service manager.
    @discardableResult
    public func notify(_ state: NotifyState) throws(NotifyError) -> Bool {
        try notify([state])
    }

    /// Reports start-up done, with an optional first status line.
    public func ready(status: String? = nil) throws(NotifyError) {
        var states: [NotifyState] = [.ready]
        if let status { states.append(.status(status)) }
        try notify(states)
    }

    /// Updates the status line `systemctl status` shows.
    public func status(_ text: String) throws(NotifyError) {
        try notify(.status(text))
    }

    /// Sends the watchdog keep-alive.
    public func watchdog() throws(NotifyError) {
        try notify(.watchdog)
    }

    /// Reports that shutdown has begun.
    public func stopping() throws(NotifyError) {
        try notify(.stopping)
    }

    /// Reports that a config reload has begun, stamped with `CLOCK_MONOTONIC` as systemd ≥ 253 expects;
    /// send ``ready(status:)`` when it is over (whether the new config was taken or refused).
    public func reloading() throws(NotifyError) {
        try notify(.reloading(monotonicMicroseconds: Self.monotonicMicroseconds()))
    }

    /// The current `CLOCK_MONOTONIC` time in microseconds, the clock `MONOTONIC_USEC=` is read against.
    public static func monotonicMicroseconds() -> UInt64 {
        UInt64(MonotonicClock.nanoseconds() / 1000)  // since boot: never negative
    }

    private static func send(_ payload: [UInt8], to address: NotifySocketAddress) throws(NotifyError) {
        #if os(Linux)
        let socketType = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let socketType = SOCK_DGRAM
        #endif
        let fd = socket(AF_UNIX, socketType, 0)
        guard fd >= 0 else { throw NotifyError(operation: "socket", code: errno) }
        defer { close(fd) }

        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let pathBytes: [UInt8]
        switch address {
        case .path(let path): pathBytes = Array(path.utf8) + [0]
        case .abstract(let name): pathBytes = [0] + Array(name.utf8)
        }
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard pathBytes.count <= capacity else { throw NotifyError(operation: "address", code: 0) }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        // Abstract names are not NUL-terminated: the length alone says where they end.
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathBytes.count)

        let sent = payload.withUnsafeBytes { body in
            withUnsafePointer(to: &addr) { addrPointer in
                addrPointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    sendto(fd, body.baseAddress, body.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), sa, length)
                }
            }
        }
        guard sent >= 0 else { throw NotifyError(operation: "sendto", code: errno) }
    }
}

/// The watchdog deadline systemd set for this process (`WatchdogSec=`), from `$WATCHDOG_USEC`.
public enum SystemdWatchdog {
    /// The interval within which a `WATCHDOG=1` must arrive, or `nil` when no watchdog applies to this
    /// process: unset/invalid/zero `$WATCHDOG_USEC`, or `$WATCHDOG_PID` naming another process (the
    /// variable was inherited by a child that is not the service's main process).
    public static func interval(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        pid: pid_t = getpid()
    ) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"] {
            guard let ownerPID = pid_t(owner), ownerPID == pid else { return nil }
        }
        return .microseconds(Int64(clamping: usec))
    }
}
