// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import NIOCore
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol

/// The tilt game: `game.*` and `history`, the `[game]` section, committing finished rounds to
/// the store before their end is published. Loop-confined (see `Component`).
final class GameComponent: Component {
    let context: EngineContext
    private(set) var game: TiltGame
    /// Rules from a reload during a round: they take effect once it ends.
    private var pendingRules: TiltGame.Rules?
    /// Prompts for the "nearby" deck, or why there are none (from the places component).
    var nearbyPrompts: () -> Result<[String], NearbyUnavailable> = { .failure(NearbyUnavailable(reason: "no places")) }
    /// Game events waiting for a round to be committed (see `publish(_:)`).
    private var heldEvents: [GameEvent] = []
    private var roundsInFlight = 0
    /// Called when `game.start` starts a round (a held replay goes on).
    var onRoundStarted: (() -> Void)?
    /// Where the frame learned from wear is kept across restarts.
    private let keptFrame: KeptHeadFrame?

    init(context: EngineContext) {
        self.context = context
        let config = context.config.game
        // Unseeded, each run shuffles differently; `[game] seed` makes the order repeatable.
        let seed = config.seed ?? UInt64.random(in: 0...UInt64.max)
        do {
            game = try TiltGame(configuration: config.rules, seed: seed)
        } catch {
            // `Configuration` validates `[game]` with these rules' own `validate()` (GameSection), so
            // rules that reach the engine are valid: a refusal here is a bug, not a config to replace
            // silently with the defaults.
            preconditionFailure("[game] rules passed the config's validation but not the game's: \(error)")
        }
        // Without a calibrated frame the game learns one from wear (`[game] head_frame`).
        game.learnsHeadFrame = config.learnsHeadFrame
        keptFrame = KeptHeadFrame(store: context.store, logger: context.logger)
    }

    /// Seeds from the store, the calibration file and the head frame kept from the last run, at start.
    func prepare(lastRound: Int?, neutral: Quaternion?, kept: (frame: HeadFrame?, problem: String?) = (nil, nil)) {
        if let lastRound { game.nextRoundID = lastRound + 1 }
        // The head frame `tiltd calibrate neutral` learnt from the nod; without it the
        // convention is assumed (and the game state says so).
        game.setHeadFrame(context.config.calibration.headFrame)
        // The pose `tiltd calibrate neutral` measured: relative mode starts from it.
        if let n = neutral { _ = game.captureNeutral(Attitude(t: 0, q: n, atRest: true, gyroBias: .zero)) }
        // Without a calibration, the frame learned from wear in the last run, until this run's
        // learner confirms or replaces it.
        if let problem = kept.problem { context.logger.warning("\(problem)") }
        if let f = kept.frame, !game.restoreLearnedFrame(f).isEmpty {
            context.logger.info("game: the head frame learned from wear in an earlier run is in use")
        }
    }

    var snapshot: JSONObject { game.snapshot }

    let commands = ["game.start", "game.stop", "game.reset", "game.neutral", "history"]

    func handle(_ command: Command, from client: ClientSession, reply: Reply) {
        let now = context.now
        switch command.name {
        case "game.start": start(command, reply: reply)
        case "game.stop":
            do {
                let events = try game.stop(at: now)
                reply.ok(["round": events.first?.round.map { .int(Int64($0)) } ?? .null])
                emit(events)
            } catch { reply.fail(error.code, error.message) }
        case "game.reset":
            let events = game.reset(at: now)
            reply.ok()
            emit(events)
        case "game.neutral":
            guard let a = context.lastAttitude else {
                return reply.fail(.unavailable, "no attitude yet: the IMU has not delivered a sample")
            }
            let events = game.captureNeutral(a)
            reply.ok(["captured": .bool(events.first?.kind == .neutralCaptured)])
            emit(events)
        case "history":
            let limit = command.int("n") ?? 10
            context.store.read(
                { try $0.recentRounds(limit: limit) },
                then: { result in
                    switch result {
                    case .success(let rounds):
                        reply.ok([
                            "rounds": .array(
                                rounds.map { r in
                                    if let text = r.resultJSON, let v = try? JSONParser.parse(text) { return v }
                                    return .object([
                                        "started_t_ns": .int(r.startedAt), "ended_t_ns": .int(r.endedAt),
                                        "score": .int(Int64(r.score)),
                                    ])
                                })
                        ])
                    case .failure(let e): reply.fail(.unavailable, "history: \(e)")
                    }
                }, on: context.loop)
        default: reply.fail(.internalError, "\(command.name) is not a game command")
        }
    }

    func addStatus(to o: inout JSONObject) { o["game"] = .object(game.snapshot) }

    /// One attitude through the game, with the bias-corrected rate of its sample (the game
    /// judges stillness and nods from it; without a gyro it uses the change of attitude).
    func ingest(_ attitude: Attitude, sample: IMUSample) {
        let events = game.update(
            attitude, rate: sample.hasGyro ? sample.gyro - attitude.gyroBias : nil, accel: sample.accel)
        if !events.isEmpty { emit(events) }
    }

    // MARK: game.start

    private func start(_ command: Command, reply: Reply) {
        // The round's clock is sample time: without samples flowing it would start at a
        // stale time and the next sample would end it at once.
        guard context.lastAttitude != nil, context.statuses["imu"]?.state == .streaming else {
            let imu = context.statuses["imu"]
            let why =
                imu.map {
                    $0.state == .streaming
                        ? "no IMU sample yet (the IMU is starting to stream: \($0.message))"
                        : "the IMU is \($0.state.rawValue): \($0.message)"
                } ?? "no IMU samples yet"
            return reply.fail(.unavailable, "cannot start a round: \(why)")
        }
        let source: DeckSource
        do { source = try deckSource(command.string("deck")) } catch {
            return reply.fail(error.code, error.message)
        }
        switch source {
        case .ready(let deck, let note): begin(command, deck: deck, note: note, reply: reply)
        case .file(let path, let note):
            // Read on the blocking-I/O pool; the round starts when it is back on the loop.
            // Never the config (its `pairing_code`), whatever name or link leads to it.
            let config = context.config.sourceFile ?? Configuration.defaultPath
            BoundedFile.read(path, limit: BoundedFile.deckLimit, notSameFileAs: config, on: context.loop)
                .assumeIsolated().whenComplete {
                    [self] result in
                    switch result {
                    case .success(let bytes):
                        let name = PathName.lastComponent(of: path)
                        do {
                            begin(
                                command, deck: try PromptDeck(name: name, text: String(decoding: bytes, as: UTF8.self)),
                                note: note, reply: reply)
                        } catch {
                            reply.fail(.deckUnavailable, "\(name): \(error)")
                        }
                    case .failure(let e): reply.fail(.deckUnavailable, "cannot read deck: \(e)")
                    }
                }
        }
    }

    private func begin(_ command: Command, deck: any PromptProvider, note: String?, reply: Reply) {
        applyPendingRules()
        var gestures: TiltGame.Rules.Gestures?
        if let g = command.string("gestures") {
            guard let v = TiltGame.Rules.Gestures(rawValue: g) else {
                return reply.fail(.badArgument, "\"gestures\" must be \"tilt\" or \"nod\", got \"\(g)\"")
            }
            gestures = v
        }
        // An IMU without a gyroscope (known from its status) cannot play `nod`.
        let imu = context.statuses["imu"]
        game.gyroAvailable = imu?.hasGyroscope != false
        if let why = imu?.refusal(forVocabulary: (gestures ?? game.configuration.gestures).rawValue) {
            return reply.fail(.needsGyro, why)
        }
        do {
            let events = try game.start(
                at: context.now, roundSeconds: command.number("round_s"), gestures: gestures, deck: deck)
            var result: JSONObject = ["round": .int(Int64(game.roundID ?? 0)), "deck": .string(deck.deckName)]
            if let note { result["deck_note"] = .string(note) }
            reply.ok(result)
            // What the command caused follows its reply (docs/protocol.md, "Commands").
            if let note { context.publish(.status(source: "game", state: "fallback", message: note)) }
            emit(events)
            onRoundStarted?()
        } catch {
            reply.fail(error.code, error.message)
        }
    }

    /// Where the deck for `game.start` comes from.
    enum DeckSource {
        /// In memory (built-in, "nearby"); `note` says why a fallback is used.
        case ready(any PromptProvider, note: String?)
        /// A file to read off the loop.
        case file(String, note: String?)
    }

    /// The deck for `game.start`: a file in the deck directory, "nearby", or the configured one.
    func deckSource(_ requested: String?) throws(ProtocolError) -> DeckSource {
        let config = context.config
        let name = requested ?? config.game.deck
        guard name == "nearby" else { return try fileDeck(name, fromClient: requested != nil, note: nil) }
        switch nearbyPrompts() {
        case .success(let prompts) where !prompts.isEmpty:
            do { return .ready(try PromptDeck(name: "places near you", prompts: prompts), note: nil) } catch {
                throw ProtocolError(.deckUnavailable, "places near you: \(error)")
            }
        case .success: return try fallback("no places within \(Int(config.places.nearby.radius)) m")
        case .failure(let e): return try fallback(e.reason)
        }
    }

    private func fallback(_ why: String) throws(ProtocolError) -> DeckSource {
        let path = context.config.game.fallbackDeck
        let name = path.map { PathName.lastComponent(of: $0) } ?? BuiltInDeck.deck.deckName
        return try fileDeck(path, fromClient: false, note: "\(why): using the fallback deck \"\(name)\"")
    }

    /// A deck file. The config's `deck`/`fallback_deck` is a name in the deck directory or a path
    /// its owner wrote; a client names a deck file in the deck directory only
    /// (`Configuration.clientDeckPath`) — a path from a client would let anyone who may start a
    /// round (a paired browser too) read any file the daemon can, line by line, to every client
    /// and into the history.
    private func fileDeck(_ deck: String?, fromClient: Bool, note: String?) throws(ProtocolError) -> DeckSource {
        guard let deck else { return .ready(BuiltInDeck.deck, note: note) }
        let config = context.config
        guard fromClient else { return .file(config.deckPath(deck), note: note) }
        switch config.clientDeckPath(deck) {
        case .success(let path): return .file(path, note: note)
        case .failure(let e):
            throw ProtocolError(
                .badArgument, "deck must be a deck file in the deck directory or \"nearby\": \(e.message)")
        }
    }

    // MARK: events and rounds

    /// The IMU's recording ran out (`--replay`): a round in progress ends (`recording_ended`).
    func recordingEnded() {
        emit(game.recordingEnded(at: context.now))
    }

    /// Counts new game events for `stats`, publishes them, and applies rules held back by a reload
    /// once a round is over.
    func emit(_ events: [GameEvent]) {
        context.stats.count(events)
        // A new learned frame (or none) is kept for the next run; a kept one restored needs no write.
        if events.contains(where: { $0.kind == .headFrame }), !game.learnedFrameRestored {
            keptFrame?.save(game.learnedFrame)
        }
        publish(events)
        applyPendingRules()
    }

    /// Publishes game events. A finished round's `round_ended`/`stopped` event is sent only
    /// once the round is committed to the store — so a round a client saw end is never lost,
    /// even to `kill -9` — and game events after it wait behind it to keep their order.
    private func publish(_ events: [GameEvent]) {
        for e in events {
            if roundsInFlight > 0 {
                heldEvents.append(e)
            } else if let r = e.result, e.kind == .roundEnded || e.kind == .stopped {
                heldEvents.append(e)
                roundsInFlight += 1
                saveRound(r)
            } else {
                context.publish(e.event)
            }
        }
    }

    private func saveRound(_ r: RoundResult) {
        let record = Store.RoundRecord(
            startedAt: r.startedAt, endedAt: r.endedAt, score: r.score, deck: r.deckName,
            prompts: r.prompts.map {
                Store.PromptRecord(text: $0.prompt, decision: $0.decision.rawValue, decidedAt: $0.decidedAt)
            },
            gameRound: r.round, resultJSON: JSONValue.object(r.json).jsonText)
        context.store.write(
            { try $0.saveRound(record) },
            then: { [self] result in
                let committed: Bool
                if case .failure(let error) = result {
                    context.storeFailed("saving round \(r.round)", error)
                    committed = false
                } else {
                    context.storeSucceeded()
                    committed = true
                }
                roundsInFlight -= 1
                // The committed round's end goes out first; what waited behind it is published in
                // order (a further round end in it waits for its own commit). A round whose commit
                // failed (a full disk) is not announced as ended and stored: clients have the
                // store's `retrying` status instead, and `history` never lacks a round they saw end.
                var held = heldEvents
                heldEvents = []
                if !held.isEmpty {
                    let end = held.removeFirst()
                    if committed { context.publish(end.event) }
                }
                publish(held)
            }, on: context.loop)
    }

    // MARK: reload

    /// On the loop: new rules apply now when no round runs, else once it ends — a round is
    /// judged by one set of rules.
    func apply(_ new: Configuration, notes: inout [String]) {
        if new.calibration.headFrame != game.calibratedFrame { publish(game.setHeadFrame(new.calibration.headFrame)) }
        if new.game.learnsHeadFrame != game.learnsHeadFrame {
            publish(game.setLearnsHeadFrame(new.game.learnsHeadFrame))
        }
        guard new.game.rules != game.configuration || pendingRules != nil else { return }
        pendingRules = new.game.rules
        if game.roundID != nil { notes.append("[game] rules take effect from the next round") }
        applyPendingRules()
    }

    private func applyPendingRules() {
        guard let rules = pendingRules, game.roundID == nil else { return }
        pendingRules = nil
        do { publish(try game.setConfiguration(rules)) } catch {
            // Validated when the file was parsed; a refusal here is a bug, said out loud.
            context.logger.error("game: new rules refused: \(error)")
        }
    }
}

/// Why the "nearby" deck has nothing.
struct NearbyUnavailable: Error {
    var reason: String
}
