// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import TiltClient
import TiltCommandLine
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltSensors
import TiltService

#if canImport(Glibc)
import Glibc
#endif

/// `tiltd monitor`: a live view of a running daemon, for standing at the Pi while calibrating.
struct Monitor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a running daemon live: attitude, heading, roll gauge, game, fix, rate and drops.",
        discussion: """
            Connects to the daemon's socket and redraws a full-screen view (q or Ctrl-C quits). \
            The heading line shows the magnetic and true heading, the compass point and where \
            the heading comes from (mag, course or none; docs/protocol.md, "attitude"). \
            When stdout is not a terminal it prints one summary line per second instead. \
            If the daemon goes away the monitor says so and reconnects when it is back.
            """)

    @OptionGroup var target: SocketPathOptions

    @Option(help: "Attitude lines per second to ask the daemon for.")
    var attitudeHz: Double = 30

    @Flag(help: "Print summary lines even when stdout is a terminal.")
    var plain = false

    func validate() throws {
        guard (0.1...1000).contains(attitudeHz) else {
            throw ValidationError("--attitude-hz must be within 0.1...1000")
        }
    }

    func run() throws {
        let path = try target.socketPath()
        let fullScreen = !plain && isatty(STDOUT_FILENO) == 1
        let loop = MonitorLoop(socketPath: path, attitudeHz: attitudeHz, fullScreen: fullScreen)
        try loop.run()
    }
}

/// The monitor's single-threaded loop: poll() on the keyboard, a signal pipe and the pipe its
/// `DaemonClient` wakes it through; everything it learns goes into a `MonitorState`, which
/// `MonitorView` draws.
final class MonitorLoop {
    /// Redraws at most this often: smooth enough to follow a nod, cheap over SSH.
    static let maxRedrawHz = 15.0
    /// How often the monitor asks for `status` (sample rate, clients, drops) and retries a connection.
    static let statusPeriod = 1.0
    static let retryPeriod = 1.0

    let attitudeHz: Double
    let fullScreen: Bool
    var state: MonitorState

    private let socketPath: String
    private var client: DaemonClient?
    private let inbox = Inbox()
    private var quit = false
    /// The client has reported its first attempt (connected or not).
    private var firstAttemptDone = false

    private var signalPipe: (read: Int32, write: Int32) = (-1, -1)
    private var signalSources: [any DispatchSourceSignal] = []
    private var savedTermios: termios?
    private var size = (width: 80, height: 24)

    init(socketPath: String, attitudeHz: Double, fullScreen: Bool) {
        self.socketPath = socketPath
        let rules = TiltGame.Rules()
        self.state = MonitorState(
            socketPath: socketPath, defaultThresholdsDeg: (rules.lowThresholdDeg, rules.highThresholdDeg))
        self.attitudeHz = attitudeHz
        self.fullScreen = fullScreen
    }

    func run() throws {
        try installSignals()
        try inbox.open()
        var options = DaemonClient.Options(
            socketPath: socketPath, idPrefix: "monitor-", watch: Command.Watch(attitudeHz: attitudeHz).fields)
        options.minRetry = Self.retryPeriod
        options.maxRetry = Self.retryPeriod
        options.requestTimeout = Self.statusPeriod * 5
        let inbox = self.inbox
        let client = DaemonClient(options: options) { inbox.post($0) }
        self.client = client
        client.start()
        if fullScreen { enterScreen() }
        defer {
            if fullScreen { leaveScreen() }
            client.close()
        }

        var nextStatus = Double.infinity
        var nextSummary = 0.0
        var lastDraw = -Double.infinity
        var dirty = true
        var lastPrintedConnection: Bool?

        while !quit {
            var now = monotonic()
            if state.connected && now >= nextStatus {
                // Not a request of the client's own (whose reply it would keep): the reply comes as a
                // line, and `MonitorState` reads every `status` reply.
                client.send(["cmd": "status", "id": "status"])
                nextStatus = now + Self.statusPeriod
            }

            now = monotonic()
            if fullScreen {
                if dirty && now - lastDraw >= 1 / Self.maxRedrawHz {
                    draw()
                    lastDraw = now
                    dirty = false
                }
            } else {
                // Plain output: connection changes at once, then a summary each second.
                // Nothing before the first attempt's outcome: "connected" comes first when it connects.
                if firstAttemptDone && lastPrintedConnection != state.connected {
                    lastPrintedConnection = state.connected
                    printLine(state.connected ? "connected to \(state.socketPath)" : MonitorView.summary(state))
                    nextSummary = now + 1
                } else if state.connected && now >= nextSummary {
                    printLine(MonitorView.summary(state))
                    nextSummary = now + 1
                }
            }

            var deadline = state.connected ? nextStatus : now + 1
            if fullScreen && dirty { deadline = min(deadline, lastDraw + 1 / Self.maxRedrawHz) }
            if !fullScreen && state.connected { deadline = min(deadline, nextSummary) }
            let timeoutMs = Int32(saturating: max(0, min(1000, (deadline - monotonic()) * 1000)).rounded(.up))

            var fds = [
                pollfd(fd: signalPipe.read, events: Int16(POLLIN), revents: 0),
                pollfd(fd: inbox.wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let watchKeys = fullScreen && savedTermios != nil
            if watchKeys { fds.append(pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)) }
            // An interruption (a signal: its byte is on the pipe) counts as nothing ready yet.
            do { _ = try Syscall.pollOnce(&fds, timeoutMilliseconds: timeoutMs) } catch {
                throw ValidationFailure(message: "tiltd monitor: \(error)")
            }
            if fds[0].revents != 0 { handleSignals(&dirty) }
            if fds[1].revents != 0 {
                for e in inbox.take() { apply(e, nextStatus: &nextStatus) }
                dirty = true
            }
            if watchKeys && fds[2].revents != 0 { handleKeys() }
        }
    }

    // MARK: connection

    private func apply(_ e: DaemonClient.Event, nextStatus: inout Double) {
        switch e {
        case .connected:
            firstAttemptDone = true
            state.didConnect()
            nextStatus = monotonic()
        case .disconnected(let reason, _):
            firstAttemptDone = true
            state.didDisconnect(reason: reason)
        case .line(let line):
            state.apply(line)
        case .unparsable:
            state.badLines += 1
        }
    }

    // MARK: signals and keys

    private func installSignals() throws {
        signalPipe = try makeWakePipe()
        // Writes to a daemon that just went away must be an error, not a kill.
        signal(SIGPIPE, SIG_IGN)
        let writeEnd = signalPipe.write
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGWINCH] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                var b = UInt8(truncatingIfNeeded: sig)
                _ = write(writeEnd, &b, 1)
            }
            source.resume()
            signalSources.append(source)
        }
    }

    private func handleSignals(_ dirty: inout Bool) {
        var b = [UInt8](repeating: 0, count: 16)
        while true {
            let n = read(signalPipe.read, &b, b.count)
            if n <= 0 { return }
            for s in b[..<n] {
                if Int32(s) == SIGWINCH {
                    updateSize()
                    writeOut("\u{1B}[2J")
                    dirty = true
                } else {
                    quit = true
                }
            }
        }
    }

    private func handleKeys() {
        var b = [UInt8](repeating: 0, count: 64)
        let n = read(STDIN_FILENO, &b, b.count)
        if n == 0 { savedTermios = nil; return }  // stdin closed: keep running, stop watching it
        guard n > 0 else { return }
        if b[..<n].contains(where: { $0 == UInt8(ascii: "q") || $0 == UInt8(ascii: "Q") }) { quit = true }
    }

    // MARK: terminal

    private func enterScreen() {
        if isatty(STDIN_FILENO) == 1 {
            var t = termios()
            if tcgetattr(STDIN_FILENO, &t) == 0 {
                savedTermios = t
                // Keys one at a time and not echoed; ISIG stays on so Ctrl-C is SIGINT.
                t.c_lflag &= ~tcflag_t(ICANON | ECHO)
                withUnsafeMutableBytes(of: &t.c_cc) { cc in
                    cc[Int(VMIN)] = 1; cc[Int(VTIME)] = 0
                }
                tcsetattr(STDIN_FILENO, TCSANOW, &t)
            }
        }
        updateSize()
        // Alternate screen, cursor hidden, cleared.
        writeOut("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    private func leaveScreen() {
        writeOut("\u{1B}[?25h\u{1B}[?1049l")
        if var t = savedTermios { tcsetattr(STDIN_FILENO, TCSANOW, &t) }
    }

    private func updateSize() {
        var ws = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0, ws.ws_row > 0 {
            size = (Int(ws.ws_col), Int(ws.ws_row))
        }
    }

    private func draw() {
        let lines = MonitorView.screen(state, width: size.width, height: size.height)
        // Home, each line then clear-to-end-of-line, then clear below: no flicker, no full clear.
        var out = "\u{1B}[H"
        for (i, l) in lines.enumerated() {
            out += l + "\u{1B}[K"
            if i < lines.count - 1 { out += "\r\n" }
        }
        out += "\u{1B}[J"
        writeOut(out)
    }

    private func printLine(_ line: String) { writeOut(line + "\n") }

    /// Writes all of `s` to stdout; a closed stdout (e.g. `| head`) ends the monitor.
    private func writeOut(_ s: String) {
        // A full non-blocking stdout waits in poll(2) for the terminal, not in a loop of writes.
        do { try Syscall.writeAll(STDOUT_FILENO, s.utf8, waitWhenFull: true) } catch { quit = true }
    }

    private func monotonic() -> Double { MonotonicClock.seconds() }
}

/// What the client's event loop hands the monitor's thread: its events, and a byte on a pipe
/// that wakes the monitor's poll().
private final class Inbox: Sendable {
    private let events = Mutex<[DaemonClient.Event]>([])
    private let pipeEnds = Mutex<(read: Int32, write: Int32)>((-1, -1))

    func open() throws {
        let ends = try makeWakePipe()
        pipeEnds.withLock { $0 = ends }
    }

    var wakeRead: Int32 { pipeEnds.withLock { $0.read } }

    func post(_ e: DaemonClient.Event) {
        let wasEmpty = events.withLock { q in
            defer { q.append(e) }
            return q.isEmpty
        }
        // One byte per batch: the monitor takes everything queued when it wakes.
        if wasEmpty {
            var b: UInt8 = 1
            _ = write(pipeEnds.withLock { $0.write }, &b, 1)
        }
    }

    func take() -> [DaemonClient.Event] {
        var b = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &b, b.count) > 0 {}
        return events.withLock { q in
            defer { q = [] }
            return q
        }
    }
}

/// A non-blocking, close-on-exec pipe whose write end wakes the monitor's poll loop (signals,
/// the client's events).
private func makeWakePipe() throws -> (read: Int32, write: Int32) {
    var p: [Int32] = [0, 0]
    guard pipe(&p) == 0 else {
        throw ValidationFailure(message: "tiltd monitor: \(SystemError("pipe"))")
    }
    for fd in p {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    return (p[0], p[1])
}
