// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import NIOCore
import NIOPosix

/// Reads a whole file with a size limit, never on the event loop: decks and places files are
/// read on NIO's blocking-I/O thread pool, so a slow disk or a huge file never stalls clients.
enum BoundedFile {
    /// Why a file could not be read.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads `path` (blocking) if it is a regular file of at most `limit` bytes and not the file
    /// `notSameFileAs` names (compared by device and inode, so neither a link nor another spelling
    /// of its path reaches it).
    static func read(_ path: String, limit: Int, notSameFileAs other: String? = nil) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw Failure(description: "\(path) is not a regular file") }
        var otherStat = stat()
        if let other, stat(other, &otherStat) == 0, otherStat.st_dev == st.st_dev, otherStat.st_ino == st.st_ino {
            throw Failure(description: "\(path) is the config file, not a deck")
        }
        guard st.st_size <= limit else {
            throw Failure(description: "\(path) is \(st.st_size) bytes, more than the \(limit) allowed")
        }
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        var got = 0
        while got < out.count {
            let n = out[got...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }  // it shrank meanwhile: what is there
            got += n
        }
        return Array(out[..<got])
    }

    /// Reads `path` on the blocking-I/O pool; the future completes on `loop`.
    static func read(
        _ path: String, limit: Int, notSameFileAs other: String? = nil, on loop: any EventLoop
    ) -> EventLoopFuture<[UInt8]> {
        NIOThreadPool.singleton.runIfActive(eventLoop: loop) { try read(path, limit: limit, notSameFileAs: other) }
    }

    /// The largest deck file read.
    static let deckLimit = 1_000_000
    /// The largest places file read (100,000 places of a few hundred bytes, with room).
    static let placesLimit = 128 << 20
}
