// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and buffered writes on plain descriptors: what Foundation's `FileHandle` did
/// here, without linking the full Foundation (and ICU) into the daemon.
public enum FileIO {
    /// A failed call, with the path and errno's text.
    public struct Failure: Error, CustomStringConvertible {
        /// "PATH: what: reason".
        public var description: String
        /// "what: reason", without the path (for messages that name the file themselves).
        public var reason: String
        init(_ path: String, _ what: String) {
            reason = "\(what): \(String(cString: strerror(errno)))"
            description = "\(path): \(reason)"
        }
    }

    /// Reads `path` as UTF-8 text (invalid bytes become U+FFFD).
    public static func readText(_ path: String) throws(Failure) -> String {
        String(decoding: try readAll(path), as: UTF8.self)
    }

    /// Reads everything from `path` (a file, a pipe or a FIFO: reads until end of file).
    public static func readAll(_ path: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path, "cannot read") }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(path, "cannot read")
            }
            if n == 0 { return out }
            out.append(contentsOf: chunk[0..<n])
        }
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    /// A file opened for writing (created or truncated), closed by `close`.
    public final class Writer {
        private var fd: Int32
        /// The path, for messages.
        public let path: String

        /// Creates or truncates `path` (mode 0644 before the umask).
        public init(path: String) throws(Failure) {
            self.path = path
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw Failure(path, "cannot create") }
        }

        deinit { if fd >= 0 { Glibc.close(fd) } }

        /// Writes all of `bytes`.
        public func write(_ bytes: [UInt8]) throws(Failure) {
            guard FileIO.writeAll(fd, bytes) else {
                throw Failure(path, "cannot write")
            }
        }

        /// Flushes to the device (fsync) and closes.
        public func close() throws(Failure) {
            defer { Glibc.close(fd); fd = -1 }
            guard fsync(fd) == 0 else { throw Failure(path, "cannot sync") }
        }
    }
}
