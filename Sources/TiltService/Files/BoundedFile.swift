// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import NIOCore
import NIOPosix
import TiltPlatform

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
        if let other {
            var a = stat()
            var b = stat()
            if stat(path, &a) == 0, stat(other, &b) == 0, a.st_dev == b.st_dev, a.st_ino == b.st_ino {
                throw Failure(description: "\(path) is the config file, not a deck")
            }
        }
        do {
            return try FileIO.readRegularFile(path, limit: limit)
        } catch {
            // The messages as they were: "cannot read PATH: reason", "PATH is not a regular file".
            throw Failure(
                description: error.code == 0
                    ? "\(path) \(error.call)" : "cannot read \(path): \(SystemError.text(error.code))")
        }
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
