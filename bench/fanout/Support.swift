// SPDX-License-Identifier: Apache-2.0
import Foundation

/// CLOCK_MONOTONIC in nanoseconds: the clock IIO timestamps use, so scan write times and line
/// read times are on the same clock as the daemon's `t_ns`.
func monotonicNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// Sleeps until the CLOCK_MONOTONIC instant `deadline` (ns); an absolute deadline keeps a paced
/// loop on its grid however long each step took.
func sleepUntil(_ deadline: Int64) {
    var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
}

/// A benchmark failure with a message for the operator.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Connects a blocking Unix stream socket to `path`, retrying while the daemon starts.
func connectUnix(_ path: String, timeout: Double = 10) throws -> Int32 {
    let deadline = monotonicNanoseconds() + Int64(timeout * 1e9)
    while true {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket(): \(String(cString: strerror(errno)))") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if rc == 0 { return fd }
        let e = errno
        close(fd)
        if monotonicNanoseconds() > deadline {
            throw BenchError("cannot connect to \(path): \(String(cString: strerror(e)))")
        }
        usleep(20_000)
    }
}

/// Writes all of `text` to a blocking fd.
func sendAll(_ fd: Int32, _ text: String) throws {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw BenchError("write to the daemon: \(String(cString: strerror(errno)))")
        }
        offset += n
    }
}

/// Makes an fd non-blocking.
func setNonBlocking(_ fd: Int32) {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
}

/// Raises the soft open-file limit to the hard one (1000 clients need more than the usual 1024);
/// the daemon, started from here, inherits it. Returns the limit now in force.
func raiseOpenFileLimit() -> UInt64 {
    var lim = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim)
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim)
    }
    return UInt64(lim.rlim_cur)
}

/// Latency figures from a set of per-line latencies (ns).
struct LatencySummary {
    var count = 0
    var p50: Int64 = 0
    var p99: Int64 = 0
    var max: Int64 = 0

    /// No lines measured.
    init() {}

    /// Sorts `values` (in place) and picks the nearest-rank percentiles.
    init(_ values: inout [Int64]) {
        guard !values.isEmpty else { return }
        values.sort()
        count = values.count
        func rank(_ p: Double) -> Int64 {
            values[Swift.min(values.count - 1, Int((p * Double(values.count)).rounded(.up)) - 1)]
        }
        p50 = rank(0.50)
        p99 = rank(0.99)
        max = values[values.count - 1]
    }
}

/// Formats nanoseconds as milliseconds with three decimals.
func ms(_ ns: Int64) -> String { String(format: "%.3f", Double(ns) / 1e6) }
