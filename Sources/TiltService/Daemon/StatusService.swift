// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import NIOCore
import ResidentMemory
import ServiceLifecycle
import Synchronization
import TiltCore
import TiltLogging
import TiltPlatform
import TiltSystemd

/// Tells systemd how the daemon is: READY=1 once serving, STATUS= when the status line
/// changes, WATCHDOG=1 only while the sampler makes progress, STOPPING=1 at shutdown; reloads
/// on SIGHUP; flushes the log's repeat summaries. Shut down first, so systemd hears
/// STOPPING=1 before anything else stops.
public final class StatusService: Service {
    let engine: EngineHandle
    let sampler: SamplerService
    let socket: SocketService
    let reloader: Reloader
    let notifier: SystemdNotifier
    let logOutput: LogOutput?
    /// SIGHUP → reload. Made with the service, before any client can connect: a SIGHUP that
    /// came before it would end the process (the signal's default action).
    /// (In a `Mutex` because a dispatch source is not `Sendable`; only `init` and the end of
    /// `run` touch it.)
    private let hup: Mutex<(any DispatchSourceSignal)?>

    /// - Parameter logOutput: flushed on every tick so rate-limited repeats get their summary line.
    public init(
        engine: EngineHandle, sampler: SamplerService, socket: SocketService, reloader: Reloader,
        notifier: SystemdNotifier, logOutput: LogOutput?
    ) {
        self.engine = engine; self.sampler = sampler; self.socket = socket; self.reloader = reloader
        self.notifier = notifier; self.logOutput = logOutput
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "tiltd.sighup"))
        source.setEventHandler { [reloader] in reloader.reload() }
        source.resume()
        hup = Mutex(source)
    }

    /// Sends READY=1, then ticks until graceful shutdown; ends with STOPPING=1.
    public func run() async throws {
        // READY=1 only once clients can connect and the sampler runs.
        for await _ in socket.listening {}
        for await _ in sampler.started {}
        let firstStatus = (try? await engine.submit { $0.statusLine() }.get()) ?? "starting"
        reloader.sentStatus.withLock { $0 = firstStatus }
        try? notifier.ready(status: firstStatus)
        // Startup is over: give back the code pages only it ran (see `StartupPages`); and once
        // more when the first samples, fixes and status ticks have run their one-time code.
        releaseStartupPages()
        let settled = ContinuousClock.now + .seconds(30)

        // The tick: STATUS= for systemctl, and the watchdog, fed only while the sampler beats.
        let watchdog = SystemdWatchdog.interval()
        let period: Duration = watchdog.map { max(.milliseconds(100), $0 / 4) } ?? .seconds(1)
        let aliveWindow = Nanoseconds(saturating: watchdog.map { Double($0.components.seconds) * 0.5e9 } ?? 5e9)
        let (engine, sampler, notifier, logOutput, reloader) = (
            self.engine, self.sampler, self.notifier, self.logOutput, self.reloader
        )
        try? await cancelWhenGracefulShutdown {
            var releasedSettled = false
            while !Task.isCancelled {
                try await Task.sleep(for: period)
                if let line = try? await engine.submit({ $0.statusLine() }).get(),
                    reloader.sentStatus.withLock({
                        let changed = $0 != line; $0 = line; return changed
                    })
                {
                    try? notifier.status(line)
                }
                if watchdog != nil, sampler.isAlive(within: aliveWindow) { try? notifier.watchdog() }
                logOutput?.flushRepeats()
                if !releasedSettled, ContinuousClock.now >= settled {
                    releasedSettled = true
                    self.releaseStartupPages()
                }
            }
        }
        hup.withLock {
            $0?.cancel(); $0 = nil
        }
        reloader.logger.info("stopping")
        try? notifier.stopping()
    }

    private func releaseStartupPages() {
        let pages = StartupPages.release()
        if let failure = pages.failure {
            reloader.logger.warning("could not release startup pages: \(failure)")
        } else {
            reloader.logger.debug(
                "released startup pages: \(pages.mappings) mappings, \(pages.releasedBytes / 1024) KiB; RSS \(pages.residentBefore / 1024) → \(pages.residentAfter / 1024) KiB"
            )
        }
    }
}
