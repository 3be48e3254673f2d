// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import TiltConfig
import TiltCore
import TiltLogging
import TiltProtocol
import TiltSystemd

/// Reloads the config file, all or nothing (SIGHUP, the `reload` command, `tiltd reload`):
/// the file is parsed and validated and every component's part prepared off the loop
/// (`Engine.stage`); only if all of it succeeds does the engine swap it in (`Engine.apply`).
/// Reloads run one at a time on their own queue.
public final class Reloader: Sendable {
    let path: String?
    let engine: EngineHandle
    let store: StoreWorker
    let services: EngineServices
    let notifier: SystemdNotifier
    let logger: Logger
    private let queue = DispatchQueue(label: "tiltd.reload")
    /// The STATUS= line systemd shows now, whoever sent it (the status tick or a reload): the
    /// tick sends only changes from this, so a line sent at a reload's READY=1 (say, "imu
    /// starting" while the sampler restarts) is replaced once the summary moves on.
    let sentStatus = Mutex("")

    /// A reloader for the file at `path` (nil: started without one; reloads are refused).
    public init(
        path: String?, engine: EngineHandle, store: StoreWorker, services: EngineServices,
        notifier: SystemdNotifier, logger: Logger
    ) {
        self.path = path; self.engine = engine; self.store = store; self.services = services
        self.notifier = notifier; self.logger = logger
    }

    /// The `reload` command's reply: the fields, or why the reload was refused. Called on the
    /// engine's loop, before the `config` status line that every client gets.
    public typealias Answer = @Sendable (Result<JSONObject, ConfigError>) -> Void

    /// Reloads on the reload queue; `answer` (on the loop) gets the `reload` reply's fields or
    /// the refusal.
    public func reload(answer: Answer? = nil) {
        queue.async { [self] in reloadNow(answer: answer) }
    }

    /// One reload, blocking (on `queue`).
    private func reloadNow(answer: Answer?) {
        guard let path else {
            let e = ConfigError(file: "-", line: nil, key: "", message: "the daemon was started without a config file")
            engine.execute { _ in answer?(.failure(e)) }
            return
        }
        try? notifier.reloading()
        do {
            let new = try Configuration.load(path: path)
            let current = try engine.submit { $0.config }.wait()
            let staged = try Engine.stage(new, current: current, store: store, services: services)
            _ = try engine.submit { $0.apply(staged, answer: answer) }.wait()
        } catch let e as ConfigError {
            engine.execute { $0.refuse(e, answer: answer) }
        } catch {
            let e = ConfigError(file: path, line: nil, key: "", message: "the daemon is stopping: \(error)")
            engine.execute { _ in answer?(.failure(e)) }
        }
        // READY=1 ends the reload for systemd either way; STATUS= says what runs now.
        let line = (try? engine.submit { $0.statusLine() }.wait()) ?? "reloaded"
        sentStatus.withLock { $0 = line }
        try? notifier.ready(status: line)
    }
}
