// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

// System calls made again when a signal cut them short, and whole reads and writes, in the manner
// of swift-nio's `NIOPosix/System.swift`: the one file that knows about EINTR, so a loop around
// read(2), write(2), poll(2) or flock(2) is written once and right (a short write resumed where it
// stopped, a would-block not spun on) instead of once per caller.

extension SystemError {
    /// Whether the call was cut short by a signal and is to be made again.
    public var isInterruption: Bool { Self.isInterruption(code) }

    /// Whether `code` means a call cut short by a signal. For results that carry their errno
    /// themselves (io_uring's negated codes, a write the caller resumes, gpsd's wait).
    public static func isInterruption(_ code: Int32) -> Bool { code == EINTR }

    /// The errno of a call cut short by a signal, for results reported without a call (io_uring's
    /// "not sent" is its negation).
    public static let interruptedCode: Int32 = EINTR
}

/// Makes `body` (a call returning -1 and setting errno on failure) until it is not interrupted by a
/// signal; any other failure throws `SystemError(call, errno, path)`.
@inlinable
public func retryingInterrupts<T: FixedWidthInteger>(
    _ call: String, path: String? = nil, _ body: () -> T
) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(call, code: code, path: path)
    }
}

/// Whole reads and writes on plain descriptors.
public enum Syscall {
    /// Writes all of `bytes` to `fd`: a short write goes on where it stopped, an interrupted one is
    /// made again. A non-blocking descriptor that is full (EAGAIN) throws, unless `waitWhenFull`:
    /// then it waits in poll(2) until the reader has made room (never spinning on the write).
    public static func writeAll(
        _ fd: Int32, _ bytes: some Collection<UInt8>, call: String = "write", path: String? = nil,
        waitWhenFull: Bool = false
    ) throws(SystemError) {
        let buffer = Array(bytes)
        var offset = 0
        while offset < buffer.count {
            do {
                offset += try retryingInterrupts(call, path: path) {
                    buffer[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                }
            } catch  where waitWhenFull && error.isWouldBlock {
                var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
                _ = try poll(&fds, timeoutMilliseconds: -1)
            }
        }
    }

    /// Reads from `fd` until end of file (a file, a pipe or a FIFO), at most `limit` bytes (a file
    /// that grows meanwhile is cut there).
    public static func readAll(
        _ fd: Int32, limit: Int = .max, call: String = "read", path: String? = nil
    ) throws(SystemError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while out.count < limit {
            let want = min(chunk.count, limit - out.count)
            let n = try retryingInterrupts(call, path: path) {
                chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, want) }
            }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }

    /// Reads up to `buffer.count` bytes into `buffer` from `fd`, going on after short reads until it
    /// is full or the file ends; returns how many were read.
    public static func readFully(
        _ fd: Int32, into buffer: inout [UInt8], call: String = "read", path: String? = nil
    ) throws(SystemError) -> Int {
        var got = 0
        while got < buffer.count {
            let n = try retryingInterrupts(call, path: path) {
                buffer[got...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            }
            if n == 0 { break }
            got += n
        }
        return got
    }

    /// poll(2) on `fds`, made again when a signal interrupts it; the number of ready descriptors
    /// (0 on a timeout).
    public static func poll(_ fds: inout [pollfd], timeoutMilliseconds: Int32) throws(SystemError) -> Int32 {
        try retryingInterrupts("poll") { Glibc.poll(&fds, nfds_t(fds.count), timeoutMilliseconds) }
    }

    /// poll(2) that treats an interruption as "nothing ready yet" (returns 0), for loops that check
    /// a stop flag between waits and so must not wait again blindly.
    public static func pollOnce(_ fds: inout [pollfd], timeoutMilliseconds: Int32) throws(SystemError) -> Int32 {
        let n = Glibc.poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
        if n >= 0 { return n }
        let code = errno
        if code == EINTR { return 0 }
        throw SystemError("poll", code: code)
    }
}
