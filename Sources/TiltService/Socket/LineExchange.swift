import FoundationEssentials
import Glibc
import TiltCore
import TiltSensors

/// One request and its reply over the daemon's socket, for command-line clients (`tiltd
/// reload`): connect, send a line, read lines until the reply with the request's id. Every
/// wait is bounded by one deadline.
public enum LineExchange {
    /// Why the exchange failed.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, for people.
        public var description: String
    }

    /// Sends `line` to the daemon at `socket` and returns the `reply` whose `id` is `id`.
    /// - Parameter timeout: seconds for the whole exchange.
    public static func request(_ line: String, id: JSONValue, socket path: String, timeout: Double) throws -> JSONValue
    {
        let deadline = MonotonicDeadline(seconds: timeout)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard let addr = UnixSocketAddress(path: path) else {
            throw Failure(description: "socket path too long: \(path)")
        }
        guard addr.connect(fd) == 0 else {
            let e = errno
            throw Failure(
                description: e == ENOENT
                    ? "no daemon socket at \(path)" : "cannot connect to \(path): \(String(cString: strerror(e)))")
        }
        let bytes = Array((line + "\n").utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw Failure(description: "cannot send to \(path): \(String(cString: strerror(errno)))")
        }
        var pending: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = deadline.millisecondsLeft
            guard left > 0 else {
                throw Failure(description: "no reply from the daemon at \(path) within \(timeout) s")
            }
            let r = poll(&p, 1, left)
            if r < 0 && errno == EINTR { continue }
            guard r > 0 else { continue }
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw Failure(description: "the daemon at \(path) closed the connection before replying")
            }
            pending.append(contentsOf: buf[0..<n])
            while let nl = pending.firstIndex(of: 0x0A) {
                let l = pending[..<nl]
                pending.removeSubrange(...nl)
                if let v = try? JSONParser.parse(l), v["class"] == "reply", v["id"] == id { return v }
            }
        }
    }
}

/// A point in time on the monotonic clock, for bounding waits.
struct MonotonicDeadline {
    let at: UInt64
    init(seconds: Double) { at = MonotonicClock.nanoseconds() + UInt64(max(0, seconds) * 1e9) }
    /// Milliseconds until the deadline (0 when past), capped for poll(2).
    var millisecondsLeft: Int32 {
        let now = MonotonicClock.nanoseconds()
        return now >= at ? 0 : Int32(min(UInt64(Int32.max), (at - now) / 1_000_000 + 1))
    }
}
