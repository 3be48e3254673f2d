import Foundation
import Logging
import NIOCore
import TiltCore
import TiltSensors

/// The daemon's state and the only place it changes: sensor outputs and client requests
/// arrive here on the hub's event loop, one at a time, and every change is published to all
/// clients (host-authoritative). Store writes run on `StoreWorker`'s queue and report back here.
public final class Engine: RequestHandler, @unchecked Sendable {
    public let hub: Hub
    let logger: Logger
    public private(set) var config: Configuration
    let store: StoreWorker

    /// Latest status per source ("imu", "gps", "store").
    private(set) var statuses: [String: SourceStatus] = [:]
    private(set) var samplesSeen = 0
    private var rateMeter = RateMeter()
    public private(set) var lastAttitude: Attitude?
    /// Samples the sampler skipped because the loop was too far behind (see `SensorPipeline`).
    private(set) var samplesSkipped = 0
    /// Called on every sample (on the loop).
    public var onSample: (@Sendable () -> Void)?
    /// Called (on the loop) when `game.start` starts a round; a held replay goes on from there.
    public var onRoundStarted: (@Sendable () -> Void)?

    // Game.
    var game: TiltGame
    // Places.
    var course: CourseFilter
    var snooze: SnoozeGate
    var monitor: GeofenceMonitor
    var quests: QuestGrid
    var nearby: NearbyPlaces
    var creditPolicy: CreditPolicy
    public private(set) var lastFix: Fix?
    private(set) var placesCount = 0

    public init(hub: Hub, config: Configuration, logger: Logger, store: StoreWorker? = nil) {
        self.hub = hub; self.config = config; self.logger = logger
        self.store = store ?? StoreWorker(path: nil, logger: logger)
        // Unseeded, each run shuffles differently; `[game] seed` makes the order repeatable.
        let seed = config.game.seed ?? UInt64.random(in: 0...UInt64.max)
        game = (try? TiltGame(configuration: config.game.rules, seed: seed)) ?? (try! TiltGame(seed: seed))
        course = CourseFilter(onSpeed: config.courseOnSpeed, offSpeed: config.courseOffSpeed)
        snooze = SnoozeGate(distance: config.snoozeDistance)
        monitor = GeofenceMonitor(fences: [])
        quests = QuestGrid(options: config.quests.options)
        nearby = NearbyPlaces(places: [], options: config.places.nearby)
        creditPolicy = CreditPolicy()
        hub.handler = self
    }

    /// Loads what the engine starts from: places (file I/O) and the store's history (ids,
    /// credit cooldowns, quest cells). Call once before serving, off the loop.
    public func prepare() throws {
        let places = try Self.loadPlaces(config)
        let fences = config.geofences.map(Fence.init) + (config.places.asFences ? places.map { Fence($0, defaults: config.places.fenceDefaults) } : [])
        let seeds = store.seeds(cellSize: config.quests.options.cellSize)
        try hub.loop.submit { [self] in
            placesCount = places.count
            monitor = GeofenceMonitor(fences: fences)
            nearby = NearbyPlaces(places: places, options: config.places.nearby)
            creditPolicy = CreditPolicy(lastCredits: seeds.lastCredits)
            quests = QuestGrid(options: config.quests.options, cells: seeds.questCells)
            if let last = seeds.lastRound { game.nextRoundID = last + 1 }
            // The pose `tiltd calibrate neutral` measured: relative mode starts from it.
            game.setHeadFrame(config.calibration.headFrame)
            if let n = config.calibration.neutral {
                _ = game.captureNeutral(Attitude(t: 0, q: n, atRest: true, gyroBias: .zero))
            }
        }.wait()
    }

    static func loadPlaces(_ config: Configuration) throws -> [Place] {
        guard let path = config.places.file else { return [] }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(file: path, line: nil, key: "", message: "cannot read the places file")
        }
        do {
            return try PlacesFile.parse(Array(data)).places
        } catch {
            throw ConfigError(file: path, line: nil, key: "", message: "\(error)")
        }
    }

    /// Applies a reloaded configuration (on the loop). New connections get the new socket
    /// settings; connected clients keep theirs. Game rules apply from the next round.
    public func apply(_ new: Configuration, places: [Place]? = nil) {
        config = new
        hub.socketConfig = new.socket
        try? game.setConfiguration(new.game.rules)
        game.setHeadFrame(new.calibration.headFrame)
        course = CourseFilter(onSpeed: new.courseOnSpeed, offSpeed: new.courseOffSpeed)
        if let places {
            let fences = new.geofences.map(Fence.init) + (new.places.asFences ? places.map { Fence($0, defaults: new.places.fenceDefaults) } : [])
            monitor = GeofenceMonitor(fences: fences)
            nearby = NearbyPlaces(places: places, options: new.places.nearby)
            placesCount = places.count
        }
    }

    // MARK: sensor input (on the loop)

    /// A calibrated sample and the attitude computed from it.
    public func ingest(sample: IMUSample, attitude: Attitude) {
        samplesSeen += 1
        rateMeter.add(sample.t)
        lastAttitude = attitude
        hub.publish(Event(.sample, t: sample.t, .sample(sample)))
        hub.publish(Event(.attitude, t: attitude.t, .attitude(attitude)))
        // The bias-corrected rate: the game judges stillness and nods from it.
        let events = game.update(attitude, rate: game.gyroAvailable ? sample.gyro - attitude.gyroBias : nil)
        if !events.isEmpty { publish(events) }
        onSample?()
    }

    /// The sampler skipped `n` samples because this loop was behind.
    public func ingest(skipped n: Int) {
        samplesSkipped += n
        logger.warning("event loop behind: skipped \(n) samples (\(samplesSkipped) in all)")
    }

    public func ingest(status: SourceStatus) {
        let previous = statuses[status.source]?.state
        statuses[status.source] = status
        // Sources log their own details (rate-limited); here only the changes of state.
        if previous != status.state {
            switch status.state {
            case .retrying: logger.warning("\(status.source): \(status.message)")
            default: logger.info("\(status.source): \(status.message)")
            }
        }
        hub.publish(Event(.status, t: nil, fields: Self.json(status)))
    }

    /// A GPS fix: course filter → snooze gate → fix event → geofences, credits, quests, nearby.
    public func ingest(fix raw: Fix) {
        let fix = course.filter(raw)
        lastFix = fix
        switch snooze.check(fix) {
        case .suppress: return
        case .woke(let w): hub.publish(w.event)
        case .pass: break
        }
        hub.publish(Event(.fix, t: fix.time, fields: Self.json(fix)))
        guard fix.hasPosition else { return }
        nearby.update(fix)
        for e in monitor.update(fix) {
            hub.publish(e.event)
            let grant = creditPolicy.consider(e)
            store.write({ s in
                try s.recordVisit(e)
                return try grant.map { try s.addCredit($0) }
            }, then: { [self] result in
                switch result {
                case .success(.some(.added(let balance))): storeSucceeded(); hub.publish(grant!.event(balance: balance))
                case .success: storeSucceeded()
                case .failure(let error): storeFailed("recording a visit to \(e.fence.name)", error)
                }
            }, on: hub.loop)
        }
        if config.quests.enabled, let available = quests.update(fix) { hub.publish(available.event) }
    }

    /// Game events waiting for a round to be committed (see `publish(_:)`).
    private var heldGameEvents: [GameEvent] = []
    private var roundsInFlight = 0

    /// Publishes game events. A finished round's `round_ended`/`stopped` event is sent only
    /// once the round is committed to the store — so a round a client saw end is never lost,
    /// even to `kill -9` — and game events after it wait behind it to keep their order.
    func publish(_ events: [GameEvent]) {
        for e in events {
            if roundsInFlight > 0 {
                heldGameEvents.append(e)
            } else if let r = e.result, e.kind == .roundEnded || e.kind == .stopped {
                heldGameEvents.append(e)
                roundsInFlight += 1
                saveRound(r)
            } else {
                hub.publish(e.event)
            }
        }
    }

    func saveRound(_ r: RoundResult) {
        let record = Store.RoundRecord(
            startedAt: r.startedAt, endedAt: r.endedAt, score: r.score, deck: r.deckName,
            prompts: r.prompts.map { Store.PromptRecord(text: $0.prompt, decision: $0.decision.rawValue, decidedAt: $0.decidedAt) },
            gameRound: r.round, resultJSON: JSONValue.object(r.json).jsonText)
        store.write({ try $0.saveRound(record) }, then: { [self] result in
            if case .failure(let error) = result { storeFailed("saving round \(r.round)", error) } else { storeSucceeded() }
            roundsInFlight -= 1
            // The committed round's end goes out first; what waited behind it is published in
            // order (a further round end in it waits for its own commit).
            var held = heldGameEvents
            heldGameEvents = []
            if !held.isEmpty { hub.publish(held.removeFirst().event) }
            publish(held)
        }, on: hub.loop)
    }

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

    static func json(_ s: SourceStatus) -> JSONObject {
        var o = JSONObject()
        o["source"] = .string(s.source)
        o["state"] = .string(s.state.rawValue)
        o["message"] = .string(s.message)
        if let d = s.device { o["device"] = .string(d) }
        if let r = s.rateHz { o["rate_hz"] = .number(r) }
        if let r = s.retryIn { o["retry_in_s"] = .number(r) }
        return o
    }

    /// A `fix` event's fields: only what gpsd knew.
    static func json(_ f: Fix) -> JSONObject {
        // Rounded to what a GPS resolves (~1 cm, 1 cm/s, 0.1°): short lines, no float noise.
        func r(_ v: Double, _ digits: Double) -> JSONValue { .number((v * digits).rounded() / digits) }
        var o: JSONObject = ["mode": .int(Int64(f.mode))]
        if let v = f.time { o["time_ns"] = .int(v) }
        if let v = f.lat { o["lat"] = r(v, 1e7) }
        if let v = f.lon { o["lon"] = r(v, 1e7) }
        if let v = f.alt { o["alt_m"] = r(v, 100) }
        if let v = f.speed { o["speed_mps"] = r(v, 100) }
        if let v = f.track { o["track_deg"] = r(v, 10) }
        if let v = f.eph { o["eph_m"] = r(v, 100) }
        if let v = f.epv { o["epv_m"] = r(v, 100) }
        return o
    }

    // MARK: requests

    public func helloFields(for client: ClientSession) -> JSONObject {
        var o = JSONObject()
        o["sources"] = .array(statuses.keys.sorted().map { .object(Self.json(statuses[$0]!)) })
        o["game"] = .object(game.snapshot)
        if let f = lastFix { o["fix"] = .object(Self.json(f)) }
        o["watch"] = .object(client.watchState)
        return o
    }

    /// The time commands act at: the latest sample's, so replays stay exact.
    var now: Nanoseconds { lastAttitude?.t ?? hub.lastSampleTime ?? 0 }

    public func handle(_ request: Request, from client: ClientSession) {
        let cmd = request.command
        @Sendable func ok(_ result: JSONObject = JSONObject()) { client.reply(.reply(id: request.id, cmd: cmd.name, result: result)) }
        @Sendable func fail(_ code: ProtocolError.Code, _ message: String) {
            client.reply(.reply(id: request.id, cmd: cmd.name, error: ProtocolError(code, message)))
        }
        switch cmd {
        case .watch(let w):
            client.apply(w)
            ok(["watch": .object(client.watchState)])
        case .ping:
            ok(["pong": true])
        case .status:
            ok(statusFields())
        case .gameStart(let seconds, let deckName, let gestures):
            // The round's clock is sample time: without samples flowing it would start at a
            // stale time and the next sample would end it at once.
            guard lastAttitude != nil, statuses["imu"]?.state == .streaming else {
                let why = statuses["imu"].map { "the IMU is \($0.state.rawValue): \($0.message)" } ?? "no IMU samples yet"
                return fail(.unavailable, "cannot start a round: \(why)")
            }
            do {
                let (deck, note) = try resolveDeck(deckName)
                let events = try game.start(at: now, roundSeconds: seconds, gestures: gestures, deck: deck)
                var result: JSONObject = ["round": .int(Int64(game.roundID ?? 0)), "deck": .string(deck.deckName)]
                if let note {
                    result["deck_note"] = .string(note)
                    hub.publish(Event(.status, t: nil, fields: ["source": "game", "state": "fallback", "message": .string(note)]))
                }
                ok(result)
                publish(events)
                onRoundStarted?()
            } catch let e as GameError {
                fail(ProtocolError.Code(rawValue: e.code), e.message)
            } catch let e as ProtocolError {
                fail(e.code, e.message)
            } catch {
                fail(.internalError, "\(error)")
            }
        case .gameStop:
            do {
                let events = try game.stop(at: now)
                ok(["round": events.first?.round.map { .int(Int64($0)) } ?? .null])
                publish(events)
            } catch { fail(ProtocolError.Code(rawValue: error.code), error.message) }
        case .gameReset:
            let events = game.reset(at: now)
            ok()
            publish(events)
        case .gameNeutral:
            guard let a = lastAttitude else { return fail(.unavailable, "no attitude yet: the IMU has not delivered a sample") }
            let events = game.captureNeutral(a)
            ok(["captured": .bool(events.first?.kind == .neutralCaptured)])
            publish(events)
        case .history(let limit):
            store.read({ try $0.recentRounds(limit: limit) }, then: { result in
                switch result {
                case .success(let rounds):
                    ok(["rounds": .array(rounds.map { r in
                        if let text = r.resultJSON, let v = try? JSONParser.parse(text) { return v }
                        return .object(["started_t_ns": .int(r.startedAt), "ended_t_ns": .int(r.endedAt), "score": .int(Int64(r.score))])
                    })])
                case .failure(let e): fail(.unavailable, "history: \(e)")
                }
            }, on: hub.loop)
        case .snooze(let distance):
            if let distance { snooze = SnoozeGate(distance: distance) }
            let event = snooze.snooze(at: lastFix?.hasPosition == true ? lastFix : nil)
            ok(["until_moved_m": .number(distance ?? snooze.distance)])
            hub.publish(event)
        case .credits:
            store.read({ s in (try s.creditBalance(), try s.creditsByPlace()) }, then: { result in
                switch result {
                case .success(let (balance, places)):
                    ok(["balance": .int(Int64(balance)),
                        "places": .array(places.map { .object(["fence": .string($0.fenceKey), "name": .string($0.name), "count": .int(Int64($0.count))]) })])
                case .failure(let e): fail(.unavailable, "credits: \(e)")
                }
            }, on: hub.loop)
        case .creditsRedeem(let amount, let requestID):
            let amount = amount ?? config.redeemAmount
            // Without a client request id, the reply's id stands in (unique per connection at best).
            let rid = requestID ?? "redeem:\(client.id):\(UUID().uuidString)"
            let t = now
            store.write({ try $0.redeem(requestId: rid, amount: amount, t: t) }, then: { [self] result in
                switch result {
                case .success(.redeemed(let balance)):
                    storeSucceeded()
                    ok(["redeemed": .int(Int64(amount)), "balance": .int(Int64(balance)), "request_id": .string(rid)])
                    hub.publish(Event(.credit, t: t, fields: ["event": "redeemed", "amount": .int(Int64(amount)),
                                                             "balance": .int(Int64(balance)), "request_id": .string(rid)]))
                case .success(.alreadyApplied(let balance)):
                    ok(["redeemed": 0, "balance": .int(Int64(balance)), "request_id": .string(rid), "already_applied": true])
                case .success(.insufficient(let balance, let needed)):
                    fail("insufficient_credits", "balance \(balance) is below \(needed)")
                case .failure(let e):
                    fail(.unavailable, "redeem: \(e)")
                    // A ledger write that fails (disk full) is the store's health, not only this client's.
                    storeFailed("redeeming \(amount) credits", e)
                }
            }, on: hub.loop)
        case .questComplete(let cellName):
            guard config.quests.enabled else { return fail(.unavailable, "quests are disabled ([quests] enabled = false)") }
            var requested: GeoGrid.Cell?
            if let cellName {
                guard let c = Self.parseCell(cellName) else {
                    return fail(.badArgument, "cell must be a cell id or a name like \"r79237c65431\" (from quest.available)")
                }
                requested = c
            }
            switch quests.complete(cell: requested) {
            case .failure(let refusal):
                fail(ProtocolError.Code(rawValue: refusal.code), refusal.description)
            case .success(let completion):
                ok(["cell": .int(completion.cell.id), "xp": .int(Int64(completion.xp)), "visits": .int(Int64(completion.visits))])
                hub.publish(completion.event)
                store.write({ try $0.recordQuest(completion) }, then: { [self] result in
                    if case .failure(let e) = result { storeFailed("recording a quest", e) } else { storeSucceeded() }
                }, on: hub.loop)
            }
        }
    }

    /// A quest cell from its id ("340320323698583") or name ("r79237c65431").
    static func parseCell(_ s: String) -> GeoGrid.Cell? {
        if let id = Int64(s) { return GeoGrid.Cell(id: id) }
        guard s.hasPrefix("r"), let c = s.firstIndex(of: "c"),
              let row = Int32(s[s.index(after: s.startIndex)..<c]), let col = Int32(s[s.index(after: c)...]) else { return nil }
        return GeoGrid.Cell(row: row, column: col)
    }

    /// The deck for `game.start`: a file in the deck directory, "nearby", or the configured one.
    /// Returns a note when "nearby" had to fall back.
    func resolveDeck(_ requested: String?) throws -> (any PromptProvider, String?) {
        let name = requested ?? config.game.deck
        if name == "nearby" {
            if let prompts = nearby.prompts(), !prompts.isEmpty {
                return (try PromptDeck(name: "places near you", prompts: prompts), nil)
            }
            let why = lastFix?.hasPosition == true ? "no places within \(Int(config.places.nearby.radius)) m" : "no GPS fix yet"
            let fallback = try fileDeck(config.game.fallbackDeck)
            return (fallback, "\(why): using the fallback deck \"\(fallback.deckName)\"")
        }
        return (try fileDeck(name), nil)
    }

    func fileDeck(_ path: String?) throws -> PromptDeck {
        guard var path else { return BuiltInDeck.deck }
        if !path.hasPrefix("/") {
            // A client names decks by file name, inside the config's directory: no paths.
            guard !path.contains("/"), !path.hasPrefix(".") else {
                throw ProtocolError(.badArgument, "deck must be a file name in the deck directory or \"nearby\"")
            }
            let dir = ((config.sourceFile ?? Configuration.defaultPath) as NSString).deletingLastPathComponent
            path = (dir as NSString).appendingPathComponent(path)
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 1_000_000 else {
            throw ProtocolError("deck_unavailable", "cannot read deck \(path)")
        }
        do {
            return try PromptDeck(name: (path as NSString).lastPathComponent, text: String(decoding: data, as: UTF8.self))
        } catch {
            throw ProtocolError("deck_unavailable", "\((path as NSString).lastPathComponent): \(error)")
        }
    }

    /// The body of a `status` reply.
    public func statusFields() -> JSONObject {
        var o = JSONObject()
        o["version"] = .string(TiltdVersion.string)
        o["sources"] = .array(statuses.keys.sorted().map { .object(Self.json(statuses[$0]!)) })
        o["samples"] = .int(Int64(samplesSeen))
        if let r = rateMeter.rateHz { o["sample_rate_hz"] = .number((r * 10).rounded() / 10) }
        o["clients"] = .int(Int64(hub.clientCount))
        o["dropped_lines"] = .int(Int64(hub.sessions.reduce(0) { $0 + $1.droppedTotal }))
        o["samples_skipped"] = .int(Int64(samplesSkipped))
        o["game"] = .object(game.snapshot)
        if let f = lastFix { o["fix"] = .object(Self.json(f)) }
        o["places"] = .int(Int64(placesCount))
        o["inside"] = .array(monitor.insideKeys.map { .string($0) })
        o["snoozing"] = .bool(snooze.snoozing)
        return o
    }

    /// One line for systemd's STATUS= and logs: "60 Hz from mpu6050, 3 clients, gpsd ok".
    public func statusLine() -> String {
        var parts: [String] = []
        if let imu = statuses["imu"] {
            if imu.state == .streaming, let r = rateMeter.rateHz {
                parts.append("\(Int(r.rounded())) Hz from \(imu.device ?? "imu")")
            } else {
                parts.append("imu \(imu.state.rawValue): \(imu.message)")
            }
        }
        parts.append("\(hub.clientCount) client\(hub.clientCount == 1 ? "" : "s")")
        if let gps = statuses["gps"] { parts.append("gpsd \(gps.state == .streaming ? "ok" : gps.state.rawValue)") }
        return parts.joined(separator: ", ")
    }
}

extension ProtocolError {
    init(_ code: String, _ message: String) { self.init(Code(rawValue: code), message) }
}

/// The deck used when none is configured.
enum BuiltInDeck {
    static let deck = try! PromptDeck(name: "built-in", prompts: [
        "pizza", "sushi", "croissant", "ramen", "falafel", "pretzel", "dumplings", "tacos", "curry", "bagel",
        "paella", "waffles", "lasagne", "pho", "kebab", "pancakes", "risotto", "burrito", "strudel", "noodles",
    ])
}

/// Measures the sample rate from sample times over the last ~second.
struct RateMeter {
    private var times: [Nanoseconds] = []
    private var head = 0

    mutating func add(_ t: Nanoseconds) {
        times.append(t)
        // Keep about one second; compact occasionally instead of shifting every sample.
        while head < times.count, t - times[head] > 1_000_000_000 { head += 1 }
        if head > 4096 { times.removeFirst(head); head = 0 }
    }

    var rateHz: Double? {
        let n = times.count - head
        guard n >= 2 else { return nil }
        let span = Double(times[times.count - 1] - times[head]) * 1e-9
        return span > 0 ? Double(n - 1) / span : nil
    }
}
