// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltPlatform
import TiltSensors

/// A source's own thread. Sources block (in libiio, libgps, or sleeping to pace a replay),
/// so each runs on a thread of its own, never on the event loop. The thread's `StopSignal`
/// doubles as its heartbeat (see `StopSignal`), which feeds the systemd watchdog.
final class SourceThread: Sendable {
    let name: String
    let stop = StopSignal()
    private let done = StopSignal()

    init(name: String) { self.name = name }

    /// Runs `body` on a new thread; `onEnd` runs on it after `body` returns.
    func start(_ body: @escaping @Sendable (StopSignal) -> Void, onEnd: @escaping @Sendable () -> Void = {}) {
        stop.heartbeat()
        startThread(name: name) { [stop, done] in
            body(stop)
            done.stop()
            onEnd()
        }
    }

    /// True once the body has returned.
    var isDone: Bool { done.isStopped }

    /// Whether the thread is making progress: it checked its stop signal within `window` ns,
    /// or it has ended.
    func isAlive(within window: Nanoseconds) -> Bool {
        if done.isStopped { return true }
        let beat = stop.lastHeartbeat
        return beat != 0 && MonotonicClock.nanoseconds() - beat < window
    }

    /// Signals stop and waits up to `timeout` seconds for the body to return. A source blocked
    /// for good (the case the watchdog exists for) is left behind rather than waited on forever.
    func shutdown(timeout: Double = 3) {
        stop.stop()
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int64(saturating: timeout * 1000)))
        while !done.isStopped && ContinuousClock.now < deadline { usleep(10_000) }
    }
}
