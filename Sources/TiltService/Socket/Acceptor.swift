// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
import TiltPlatform
#endif

/// Accepts connections on the listening socket, on a thread of its own.
///
/// tiltd accepts itself instead of letting NIO's server channel do it because it needs each
/// client's descriptor: fan-out writes go straight to it with writev(2) (`ClientSession`), and
/// NIO does not expose the descriptors of the channels it accepts. Each accepted socket is then
/// handed to NIO (`ClientBootstrap.withConnectedSocket`), which reads the client's commands.
final class Acceptor: Sendable {
    /// The listening socket (ours to close).
    let listeningFD: CInt
    private let thread = SourceThread(name: "tiltd-accept")
    /// A pipe whose read end wakes the thread's poll(2) when stopping.
    private let wake: (read: CInt, write: CInt)

    /// - Parameter onAccept: called on the acceptor's thread with each new connection (a
    ///   non-blocking, close-on-exec descriptor it now owns).
    init(listeningFD: CInt, onAccept: @escaping @Sendable (CInt) -> Void) throws(SocketServer.StartError) {
        var fds: [CInt] = [-1, -1]
        guard pipe(&fds) == 0 else { throw .system("pipe", errno) }
        for fd in fds { Self.makeCloseOnExecNonBlocking(fd) }
        self.listeningFD = listeningFD
        self.wake = (fds[0], fds[1])
        let wakeFD = fds[0]
        thread.start { stop in
            var polls = [
                pollfd(fd: listeningFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
            ]
            while !stop.isStopped {
                // Blocks until a client connects or stop() writes to the pipe: no idle wake-ups.
                guard (try? Syscall.pollOnce(&polls, timeoutMilliseconds: -1)) != nil else { return }
                if polls[1].revents != 0 { return }
                guard polls[0].revents != 0 else { continue }
                // Drain the backlog; EAGAIN ends it (the listening socket may be non-blocking,
                // systemd's is), ECONNABORTED and friends are one client's problem, not ours.
                while true {
                    // (accept4 and SOCK_CLOEXEC are not in Swift's Glibc module; tiltd execs nothing
                    // while serving, so setting the flags just after is as good.)
                    let fd = accept(listeningFD, nil, nil)
                    if fd < 0 {
                        if errno == EMFILE || errno == ENFILE {
                            // Out of descriptors: wait a little rather than spin on a pending client.
                            usleep(100_000)
                        }
                        break
                    }
                    Self.makeCloseOnExecNonBlocking(fd)
                    onAccept(fd)
                }
            }
        }
    }

    static func makeCloseOnExecNonBlocking(_ fd: CInt) {
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// Stops accepting and closes the listening socket; waits (bounded) for the thread.
    func stop() {
        thread.stop.stop()
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        thread.shutdown(timeout: 2)
        close(listeningFD)
        close(wake.read)
        close(wake.write)
    }
}
