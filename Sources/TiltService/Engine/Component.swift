// SPDX-License-Identifier: Apache-2.0
import Logging
import NIOCore
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltSensors

/// One concern of the daemon — attitude, game, places, quests, credits, GPS, clients — with
/// its config section, its commands, its events and how it applies a new configuration.
///
/// Components are confined to the hub's event loop: the engine calls them there only, and
/// anything that leaves the loop (store queries, file reads) comes back through a
/// `NIOLoopBound` before it touches them. They are deliberately not `Sendable`.
protocol Component: AnyObject {
    /// The commands it answers, each declared in `CommandCatalogue`.
    var commands: [String] { get }
    /// Answers one of `commands`; must call `reply.ok` or `reply.fail` exactly once (now or
    /// later, on the loop).
    func handle(_ command: Command, from client: ClientSession, reply: Reply)
    /// Adds its fields to the `status` reply.
    func addStatus(to o: inout JSONObject)
}

extension Component {
    var commands: [String] { [] }
    func handle(_ command: Command, from client: ClientSession, reply: Reply) {
        reply.fail(.internalError, "\(command.name) has no handler")
    }
    func addStatus(to o: inout JSONObject) {}
}

/// The one reply to one request (`ClientSession.answer`: a half-closed client's session waits
/// for it). On the loop.
struct Reply {
    let client: ClientSession
    let id: JSONValue?
    let cmd: String

    /// `ok: true` with `fields`.
    func ok(_ fields: JSONObject = JSONObject()) { client.answer(.reply(id: id, cmd: cmd, result: fields)) }

    /// `ok: false` with a code from `ProtocolError.Code` and a message for people.
    func fail(_ code: ProtocolError.Code, _ message: String) {
        client.answer(.reply(id: id, cmd: cmd, error: ProtocolError(code, message)))
    }
}

/// What components share: the hub they publish on, the store, the logger, the latest status of
/// every source, and the daemon's clock (the latest sample time). Loop-confined.
final class EngineContext {
    let hub: Hub
    let store: StoreWorker
    let logger: Logger
    /// The configuration in force (replaced whole by a reload).
    var config: Configuration
    /// Latest status per source ("imu", "magnetometer", "gps", "store").
    private(set) var statuses: [String: SourceStatus] = [:]
    /// Counters for `stats`.
    var stats = DaemonStats()
    /// The latest attitude (set by the attitude component).
    var lastAttitude: Attitude?
    /// GPS time of the latest fix that had one (set by the places component): the clock of
    /// `credit` lines a command causes, since `credit` lines never carry IMU time.
    var lastFixTime: Nanoseconds?

    init(hub: Hub, store: StoreWorker, logger: Logger, config: Configuration) {
        self.hub = hub; self.store = store; self.logger = logger; self.config = config
    }

    var loop: any EventLoop { hub.loop }

    /// The time commands act at: the latest sample's, so replays stay exact.
    var now: Nanoseconds { lastAttitude?.t ?? hub.lastSampleTime ?? 0 }

    /// Sends `event` to every client that watches its class.
    func publish(_ event: Event) { hub.publish(event) }

    /// Records a source's status, logs a change of state and tells every client.
    func ingest(status: SourceStatus) {
        let previous = statuses[status.source]?.state
        statuses[status.source] = status
        // Sources log their own details (rate-limited); here only the changes of state.
        if previous != status.state {
            switch status.state {
            case .retrying: logger.warning("\(status.source): \(status.message)")
            default: logger.info("\(status.source): \(status.message)")
            }
        }
        publish(status.event)
    }

    /// Every source's latest status, by name (for `hello` and `status`).
    var sourcesJSON: JSONValue { .array(statuses.keys.sorted().map { .object(statuses[$0]!.fields) }) }

    /// A store write failed: the store's health, reported to every client.
    func storeFailed(_ what: String, _ error: Error) {
        logger.error("store: \(what) failed: \(error)")
        ingest(status: SourceStatus(source: "store", state: .retrying, message: "\(what) failed: \(error)"))
    }

    /// After failed writes (a full disk), the first write that succeeds says the store is back,
    /// so clients and `status` do not keep showing a failure that has passed.
    func storeSucceeded() {
        guard statuses["store"]?.state == .retrying else { return }
        ingest(status: SourceStatus(source: "store", state: .streaming, message: "writes succeed again"))
    }

    /// Runs a store write and reports its health; `then` gets the value on the loop.
    func storeWrite<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable (Store) throws -> T,
        then: @escaping (T) -> Void = { _ in }
    ) {
        store.write(
            body,
            then: { [self] result in
                switch result {
                case .success(let v): storeSucceeded(); then(v)
                case .failure(let e): storeFailed(what, e)
                }
            }, on: loop)
    }
}
