// SPDX-License-Identifier: Apache-2.0
import Logging
import TiltConfig
import TiltCore
import TiltProtocol

/// A reload in two steps, so it applies all or nothing: `stage` (off the loop) validates the
/// whole new configuration and prepares every component's part — files read, indexes built,
/// sources made but not started — and throws, naming file, line and key, if any part cannot
/// apply; `apply` (on the loop) then swaps every part in and cannot fail.
extension Engine {
    /// Every component's prepared part of a new configuration.
    public struct StagedReload: Sendable {
        let config: Configuration
        let attitude: AttitudeComponent.Staged
        let places: PlacesComponent.Staged
        let quests: QuestsComponent.Staged
        let gps: GPSComponent.Staged
    }

    /// Off the loop: checks `new` against `current` and prepares each component's part.
    public static func stage(
        _ new: Configuration, current: Configuration, store: StoreWorker,
        services: EngineServices
    ) throws(ConfigError) -> StagedReload {
        // The keys declared `needsRestart` (`[socket] path`, `[store] path`); under socket
        // activation the socket's path is not used, so a new one is only noted (`ClientsComponent`).
        for key in Configuration.changedKeysNeedingRestart(current, new)
        where !(key == "socket.path" && services.socketActivated) {
            throw new.error(key, "a new value needs a restart (systemctl restart tiltd); nothing was changed")
        }
        let places = try PlacesComponent.stage(new)
        let quests = QuestsComponent.stage(new, current: current, store: store)
        let gps = GPSComponent.stage(new, current: current, control: services.fixes)
        // Last: the sampler is built only once everything else has been accepted.
        let attitude = try AttitudeComponent.stage(new, current: current, sampler: services.sampler)
        return StagedReload(config: new, attitude: attitude, places: places, quests: quests, gps: gps)
    }

    /// On the loop: every component takes its part; clients get a `config` status line, after
    /// `answer` (the `reload` command's reply, when a client asked) has the reply's fields.
    /// Returns the `reload` reply's fields.
    @discardableResult
    public func apply(_ staged: StagedReload, answer: Reloader.Answer? = nil) -> JSONObject {
        let old = context.config
        let new = staged.config
        var notes: [String] = []
        context.config = new
        context.store.maxQueuedReads = new.store.maxQueuedReads
        clients.apply(new, notes: &notes)
        places.apply(staged.places, config: new)
        quests.apply(staged.quests, config: new)
        game.apply(new, notes: &notes)
        gps.apply(staged.gps, config: new, notes: &notes)
        attitude.apply(staged.attitude, notes: &notes)
        if new.log != old.log { services.applyLog?(new.log) }
        let changed = Configuration.changedSections(old, new)
        let file = new.sourceFile ?? "the config"
        let message =
            "reloaded \(file)" + (changed.isEmpty ? ": nothing changed" : ": \(changed.joined(separator: ", "))")
            + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))")
        context.logger.notice("\(message)")
        context.stats.countReload(applied: true, message: message)
        let fields: JSONObject = [
            "file": .string(file), "changed": .array(changed.map { .string($0) }),
            "notes": .array(notes.map { .string($0) }),
        ]
        // What the command caused follows its reply (docs/protocol.md, "Commands").
        answer?(.success(fields))
        context.publish(.status(source: "config", state: "loaded", message: message))
        return fields
    }

    /// On the loop: a reload was refused; the running configuration stays. `answer` (the
    /// `reload` command's reply, when a client asked) has the refusal before the status line.
    public func refuse(_ error: ConfigError, answer: Reloader.Answer? = nil) {
        let message = "reload refused: \(error.description)"
        context.logger.error("reload refused, keeping the running config: \(error)")
        context.stats.countReload(applied: false, message: message)
        answer?(.failure(error))
        context.publish(.status(source: "config", state: "error", message: message))
    }
}
