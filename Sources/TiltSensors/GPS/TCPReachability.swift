// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// A TCP connect with a deadline, made before libgps connects.
///
/// Why: libgps (3.22, Debian 12) connects with a blocking connect(2), so a gpsd host that is down
/// or behind a firewall that drops packets holds the source for the kernel's whole SYN retry time
/// (over two minutes), and the stop signal and status go unheard meanwhile. Probing first with a
/// non-blocking connect bounds that wait; libgps then connects to a host that has just answered.
/// (Only a host that vanishes between the two connects can still stall libgps.)
enum TCPReachability {
    /// A message when no address of `host:port` answered within `timeout` seconds; nil when one
    /// accepted, and also when the attempt failed fast (unknown host, refused): libgps then fails
    /// the same way at once and says why in its own words.
    static func timedOut(host: String, port: Int, timeout: Double) -> String? {
        guard let reason = check(host: host, port: port, timeout: timeout), reason.hasPrefix("connect timed out") else {
            return nil
        }
        return reason
    }

    /// nil when `host:port` accepted a connection within `timeout` seconds, else why not.
    static func check(host: String, port: Int, timeout: Double) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            return "cannot resolve \(host): \(SystemError.text(rc, resolver: true))"
        }
        defer { freeaddrinfo(list) }
        let deadline = ContinuousClock.now + .milliseconds(Int64(saturating: timeout * 1000))
        var lastError = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let ai = next {
            next = ai.pointee.ai_next
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return "connect timed out after \(format(timeout)) s" }
            switch attempt(ai.pointee, within: remaining) {
            case nil: return nil
            case let reason?: lastError = reason
            }
        }
        return lastError
    }

    /// One address: nil on success, else the reason.
    private static func attempt(_ ai: addrinfo, within remaining: Duration) -> String? {
        let fd = socket(
            ai.ai_family, ai.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), ai.ai_protocol)
        guard fd >= 0 else { return SystemError.text(errno) }
        defer { close(fd) }
        if connect(fd, ai.ai_addr, ai.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return SystemError.text(errno) }
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ms = Int32(
            clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
        let n = poll(&p, 1, max(1, ms))
        if n == 0 {
            let s = Double(ms) / 1000
            return "connect timed out after \(format(s)) s"
        }
        guard n > 0 else { return SystemError.text(errno) }
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 else { return SystemError.text(errno) }
        return err == 0 ? nil : SystemError.text(err)
    }

    private static func format(_ s: Double) -> String {
        s == s.rounded() && abs(s) < 1e15 ? String(Int64(saturating: s)) : cFormat("%.1f", s)
    }
}
