// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

extension ClientHandler {
    /// The peer's uid, gid and pid (SO_PEERCRED) and its supplementary groups (SO_PEERGROUPS),
    /// both as the kernel recorded them when the peer connected.
    ///
    /// Why SO_PEERGROUPS: users are told to `usermod -aG tiltd` to be trusted, which adds a
    /// supplementary group, and SO_PEERCRED carries only the primary one. Reading
    /// /proc/PID/status instead would not work under the unit's ProtectProc=invisible and
    /// ProcSubset=pid, which hide other users' processes, and would race with the pid's reuse.
    /// Read from the accepted socket itself (the acceptor has its descriptor, see `Acceptor`);
    /// nil when the kernel will not say.
    static func peerCredentials(_ fd: CInt) -> ClientSession.Credentials? {
        var cred = PeerCred()
        var credLength = socklen_t(MemoryLayout<PeerCred>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credLength) == 0 else { return nil }
        var groups = PeerGroups()
        var groupsLength = socklen_t(MemoryLayout<PeerGroups>.size)
        // A peer in more groups than PeerGroups holds (ERANGE) is judged by its primary group alone.
        let gids =
            getsockopt(fd, SOL_SOCKET, soPeerGroups, &groups, &groupsLength) == 0
            ? groups.gids(count: Int(groupsLength) / MemoryLayout<UInt32>.size) : []
        return ClientSession.Credentials(pid: cred.pid, uid: cred.uid, gid: cred.gid, groups: gids)
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

/// Room for SO_PEERGROUPS' answer: an array of gid_t, as many as the peer has; getsockopt(2)
/// says how many bytes of it the kernel wrote.
struct PeerGroups: Sendable {
    static let capacity = 256
    var storage = InlineArray<256, UInt32>(repeating: 0)

    /// The first `count` gids (the ones the kernel wrote).
    func gids(count: Int) -> [UInt32] {
        (0..<min(max(count, 0), Self.capacity)).map { storage[$0] }
    }
}
