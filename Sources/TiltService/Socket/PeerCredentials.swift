import NIOCore
import NIOPosix

extension ClientHandler {
    /// The peer's uid, gid and pid (SO_PEERCRED) and its supplementary groups (SO_PEERGROUPS),
    /// both as the kernel recorded them when the peer connected.
    ///
    /// Why SO_PEERGROUPS: users are told to `usermod -aG tiltd` to be trusted, which adds a
    /// supplementary group, and SO_PEERCRED carries only the primary one. Reading
    /// /proc/PID/status instead would not work under the unit's ProtectProc=invisible and
    /// ProcSubset=pid, which hide other users' processes, and would race with the pid's reuse.
    static func peerCredentials(_ channel: any Channel) -> EventLoopFuture<ClientSession.Credentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        let cred: EventLoopFuture<PeerCred> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET), name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
        let groups: EventLoopFuture<PeerGroups> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET), name: NIOBSDSocket.Option(rawValue: soPeerGroups))
        // A peer in more groups than PeerGroups holds (ERANGE) is judged by its primary group alone.
        let known = groups.map { $0.gids }.recover { _ in [] }
        return cred.and(known).map { c, gids in
            ClientSession.Credentials(pid: c.pid, uid: c.uid, gid: c.gid, groups: gids)
        }
    }

    /// SO_PEERGROUPS from <asm-generic/socket.h> (Linux ≥ 4.13); Glibc's module does not export it.
    static let soPeerGroups: Int32 = 59
}

/// `struct ucred` from <sys/socket.h> (hidden behind _GNU_SOURCE in Swift's Glibc module).
struct PeerCred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Room for SO_PEERGROUPS' answer: an array of gid_t, as many as the peer has.
///
/// NIO's getsockopt passes this type's size and zero-fills it, and does not return the length the
/// kernel wrote, so the padding cannot be told from a real gid 0 by position alone. The kernel
/// keeps a process's groups sorted (setgroups sorts them), so a genuine gid 0 can only come first
/// and a later 0 is padding; a lone leading 0 (groups {0} or no groups at all) is read as no
/// groups, the safe side: it can only withhold trust, never grant it. The primary group still
/// counts through SO_PEERCRED.
struct PeerGroups: Sendable {
    static let capacity = 256
    var storage = InlineArray<256, UInt32>(repeating: 0)

    /// The supplementary gids the kernel reported.
    var gids: [UInt32] {
        var out: [UInt32] = []
        for i in 0..<Self.capacity {
            let g = storage[i]
            if g == 0 {
                if i == 0, Self.capacity > 1, storage[1] != 0 { out.append(0) }
                continue
            }
            if let last = out.last, g <= last { break }  // past the sorted list: padding or garbage
            out.append(g)
        }
        return out
    }
}
