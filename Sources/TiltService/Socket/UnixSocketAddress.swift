// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc

/// A filesystem Unix socket address (`sockaddr_un`), made once for bind, connect and probes.
public struct UnixSocketAddress: Sendable {
    /// The socket file's path.
    public let path: String
    private let storage: sockaddr_un

    /// Nil when `path` does not fit `sun_path` (107 bytes and a NUL on Linux).
    public init?(path: String) {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let fits = withUnsafeMutableBytes(of: &addr.sun_path) { raw -> Bool in
            guard bytes.count < raw.count else { return false }
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
            return true
        }
        guard fits else { return nil }
        self.path = path
        storage = addr
    }

    /// `connect(2)` on `fd`; 0 or -1 with errno set.
    public func connect(_ fd: Int32) -> Int32 { withSockaddr { Glibc.connect(fd, $0, $1) } }

    /// `bind(2)` on `fd`; 0 or -1 with errno set.
    public func bind(_ fd: Int32) -> Int32 { withSockaddr { Glibc.bind(fd, $0, $1) } }

    private func withSockaddr(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var addr = storage
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
