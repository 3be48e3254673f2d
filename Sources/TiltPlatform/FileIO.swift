// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and buffered writes on plain descriptors: what Foundation's `FileHandle` did
/// here, without linking the full Foundation (and ICU) into the daemon.
public enum FileIO {
    /// A failed call, with the path and errno's text: "PATH: what: reason" (`reason` without the path).
    public typealias Failure = SystemError

    /// Reads `path` as UTF-8 text (invalid bytes become U+FFFD).
    public static func readText(_ path: String) throws(Failure) -> String {
        String(decoding: try readAll(path), as: UTF8.self)
    }

    /// Reads everything from `path` (a file, a pipe or a FIFO: reads until end of file).
    public static func readAll(_ path: String) throws(Failure) -> [UInt8] {
        let fd = try retryingInterrupts("cannot read", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        return try Syscall.readAll(fd, call: "cannot read", path: path)
    }

    /// Reads `path` if it is a regular file of at most `limit` bytes (a file that shrinks meanwhile
    /// gives what is there). For files named by a client or a config key: a FIFO or a huge file is
    /// refused rather than waited on or held in memory.
    public static func readRegularFile(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        let fd = try retryingInterrupts("cannot read", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var st = stat()
        _ = try retryingInterrupts("cannot read", path: path) { fstat(fd, &st) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw Failure("is not a regular file", code: 0, path: path) }
        guard st.st_size <= limit else {
            throw Failure("is \(st.st_size) bytes, more than the \(limit) allowed", code: 0, path: path)
        }
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        let got = try Syscall.readFully(fd, into: &out, call: "cannot read", path: path)
        return Array(out[..<got])
    }

    /// A file opened for writing (created or truncated), closed by `close`.
    public final class Writer {
        private var fd: Int32
        /// The path, for messages.
        public let path: String

        /// Creates or truncates `path` (mode 0644 before the umask).
        public init(path: String) throws(Failure) {
            self.path = path
            fd = try retryingInterrupts("cannot create", path: path) {
                open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            }
        }

        deinit { if fd >= 0 { Glibc.close(fd) } }

        /// Writes all of `bytes`.
        public func write(_ bytes: [UInt8]) throws(Failure) {
            try Syscall.writeAll(fd, bytes, call: "cannot write", path: path)
        }

        /// Flushes to the device (fsync) and closes.
        public func close() throws(Failure) {
            defer { Glibc.close(fd); fd = -1 }
            _ = try retryingInterrupts("cannot sync", path: path) { fsync(fd) }
        }
    }
}
