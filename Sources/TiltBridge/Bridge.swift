// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix
import ResidentMemory
import TiltClient
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol

/// `tiltd mqtt`: a client of the daemon's socket that publishes its lines to an MQTT broker,
/// takes allowed commands from `<prefix>/cmd`, announces Home Assistant entities, and plays
/// shared rounds (`RoomLink`). Every input — broker events from libmosquitto's thread, daemon
/// lines from NIO, timer ticks, signals — is an `Event` on one stream, handled in order by
/// `run()`, so the bridge's state needs no locks.
public final class Bridge {
    enum Event: Sendable {
        case mqtt(MQTTEvent)
        case daemon(DaemonClient.Event)
        /// A command forwarded from `<prefix>/cmd` got its reply (or none): for the MQTT sender `id`.
        case daemonReply(id: JSONValue, cmd: String, Result<ReplyBody, any Error>)
        case tick
        case stop
    }

    let config: Configuration
    let m: Configuration.MQTT
    let topics: Topics
    let version: String
    let logger: Logger
    private let events: AsyncStream<Event>
    private let sink: AsyncStream<Event>.Continuation
    private var client: MosquittoClient!
    var link: DaemonClient!
    var queue: PublishQueue
    private var gate: CommandGate
    var room: RoomLink?

    /// Broker and daemon connection state.
    private(set) var brokerUp = false
    private(set) var daemonUp = false
    /// The latest retained message per topic, republished after a reconnect: a broker restarted
    /// without persistence has forgotten them.
    var retained: [String: OutgoingMessage] = [:]
    var lastAttitudeAt: Int64 = -(1 << 62)  // long ago, without overflowing a subtraction
    /// When `fix_age` is due.
    var fixAge = FixAgeClock()
    /// Drops counted at the last log line and at the last status line; that line's state.
    private var loggedOverflow = 0
    private var statusOverflow = 0
    private var lastBridgeStatus = ("starting", "")
    private var lastStatusAt: Int64 = -(1 << 62)
    private var stopping = false
    /// Startup pages go back (`StartupPages`) once broker and daemon are first both up, and again
    /// 30 s later, when the first lines have run their one-time code.
    private var pageReleasesLeft = 2
    private var releasePagesAt: Int64?

    /// A bridge for `config` (whose `[mqtt]` must be enabled). Call `run()`.
    public init(config: Configuration, version: String, logger: Logger) throws {
        self.config = config
        m = config.mqtt
        topics = Topics(m)
        self.version = version
        self.logger = logger
        (events, sink) = AsyncStream.makeStream(of: Event.self)
        queue = PublishQueue(capacity: m.bufferMessages)
        gate = CommandGate(
            allowed: Set(m.allowedCommands), maxPayloadBytes: m.maxPayloadBytes,
            bridgeCommands: Set(Configuration.MQTT.bridgeCommands), maxLineBytes: config.socket.maxLineBytes)
    }

    static func now() -> Int64 { Int64(NIODeadline.now().uptimeNanoseconds) }

    /// Runs until SIGTERM/SIGINT (or `stop()`); returns after a clean goodbye to the broker.
    public func run(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws {
        let sink = self.sink
        client = try MosquittoClient(clientID: m.effectiveClientID, cleanSession: true) { sink.yield(.mqtt($0)) }
        if let user = m.username { try client.setCredentials(username: user, password: try readPassword()) }
        if m.usesTLS {
            try client.setTLS(
                caFile: m.tlsCAFile, caPath: m.tlsCAFile == nil ? Configuration.MQTT.systemCAPath : nil,
                certFile: m.tlsCertFile, keyFile: m.tlsKeyFile)
        }
        if let warning = Self.clearPasswordWarning(m) { logger.warning("\(warning)") }
        try client.setWill(topic: topics.availability, payload: Array("offline".utf8), qos: 1, retain: true)
        try client.setReconnectDelay(initial: 1, maximum: 30)
        if m.room != nil {
            room = try RoomLink(
                config: config, topics: topics, session: String(Int64(saturating: Date().timeIntervalSince1970 * 1000)),
                publish: { [unowned self] in self.send($0) },
                subscribe: { [unowned self] in self.subscribe($0) },
                unsubscribe: { [unowned self] in self.unsubscribe($0) }, logger: logger)
            room?.onView = { [unowned self] in self.showRoom($0) }
        }
        // Every sample when a room needs the head's answers; else the published rate. The client
        // sends this watch on every connection and retries with backoff (0.5 s doubling to 10 s).
        var options = DaemonClient.Options(
            socketPath: config.socket.path, idPrefix: "mqtt-",
            watch: Command.Watch(
                classes: [.status, .game, .fix, .place, .quest, .credit], attitudeHz: room != nil ? 1000 : m.attitudeHz
            ).fields)
        // A forwarded command may be a reload, which `tiltd reload` waits 30 s for.
        options.requestTimeout = 30
        link = DaemonClient(options: options, group: group) { sink.yield(.daemon($0)) }
        let signals = Self.installSignals { sink.yield(.stop) }
        defer { for signal in signals { signal.cancel() } }
        let ticker = Task {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(100)); sink.yield(.tick) }
        }
        defer { ticker.cancel() }

        logger.info(
            "tiltd mqtt: \(m.name) → \(m.host):\(m.port) as \(m.effectiveClientID), prefix \(topics.prefix)\(m.room.map { ", room \($0)\(m.roomHost ? " (host)" : "")" } ?? "")"
        )
        try client.start(host: m.host, port: Int(m.port), keepalive: m.keepaliveSeconds)
        link.start()
        var deadline = Int64.max
        for await e in events {
            handle(e)
            guard stopping else { continue }
            if deadline == .max { deadline = Self.now() + 3_000_000_000; sayGoodbye() }
            // Done once the broker has acknowledged everything (or is gone, or 3 s passed).
            if !brokerUp || (queue.inflight.isEmpty && queue.waiting.isEmpty) || Self.now() >= deadline { break }
        }
        link.close()
        client.stop()
        logger.info("tiltd mqtt stopped")
    }

    /// Asks `run()` to finish.
    public func stop() { sink.yield(.stop) }

    private func handle(_ e: Event) {
        let now = Self.now()
        switch e {
        case .mqtt(let ev): mqtt(ev, now: now)
        case .daemon(let ev): daemon(ev, now: now)
        case .daemonReply(let id, let cmd, let result): daemonReply(id: id, cmd: cmd, result)
        case .tick: tick(now: now)
        case .stop: stopping = true
        }
    }

    // MARK: broker

    private func mqtt(_ e: MQTTEvent, now: Int64) {
        switch e {
        case .connected(let code):
            guard code == 0 else {
                logger.error("broker \(m.host):\(m.port) refused the connection: \(MosquittoClient.connackText(code))")
                return
            }
            brokerUp = true
            queue.setConnected(true)
            logger.info("connected to broker \(m.host):\(m.port)")
            subscribe(topics.command)
            for s in room?.subscriptions ?? [] { subscribe(s) }
            // Announcements straight to libmosquitto, not through the bounded buffer: they are
            // few (one per retained topic) and must not push out what waited for the broker.
            publishNow(
                OutgoingMessage(topic: topics.availability, payload: Array("online".utf8), qos: 1, retain: true),
                counted: false)
            for d in Discovery.messages(m, topics: topics, version: version, qos: 1) { publishNow(d, counted: false) }
            // Retained topics a broker restarted without persistence has forgotten. The room
            // republishes its own (presence, state) in `connected`.
            for (_, msg) in retained.sorted(by: { $0.key < $1.key }) { publishNow(msg, counted: false) }
            room?.connected(now: now)
            bridgeStatus("streaming", "connected to \(m.host):\(m.port)")
            flush()
        case .disconnected(let code):
            let wasUp = brokerUp
            // Down first: the status below must wait in the cache for the reconnect, not be
            // queued inside libmosquitto and arrive after newer ones.
            brokerUp = false
            queue.setConnected(false)
            if wasUp {
                let why = code == 0 ? "closed" : MQTTError(code: code, operation: "connection").description
                logger.warning("lost the broker \(m.host):\(m.port) (\(why)); reconnecting with backoff")
                bridgeStatus("retrying", "broker \(m.host):\(m.port): \(why)")
            }
        case .message(let topic, let payload, _):
            if topic == topics.command { command(payload, now: now); return }
            _ = room?.message(topic: topic, payload: payload, now: now)
        case .published(let mid):
            queue.acknowledged(mid: mid)
            flush()
        }
    }

    /// Publishes `m` now or holds it in the bounded buffer; retained messages are remembered.
    func send(_ msg: OutgoingMessage, remember: Bool = true) {
        if remember && msg.retain && msg.topic.hasPrefix(topics.prefix + "/") { retained[msg.topic] = msg }
        guard queue.offer(msg) == .send else { reportOverflow(); return }
        publishNow(msg)
    }

    /// Hands `msg` to libmosquitto. `counted`: whether it takes a place in the bounded buffer's
    /// in-flight window (announcements do not: they are few, and must not crowd out data).
    private func publishNow(_ msg: OutgoingMessage, counted: Bool = true) {
        do {
            let mid = try client.publish(msg.topic, msg.payload, qos: msg.qos, retain: msg.retain)
            if msg.qos > 0 && counted { queue.handedOver(mid: mid) }
        } catch {
            logger.warning("\(error)")
        }
    }

    private func flush() {
        for msg in queue.drain() { publishNow(msg) }
    }

    private func subscribe(_ pattern: String) {
        do { try client.subscribe(pattern, qos: 1) } catch { logger.warning("\(error)") }
    }

    /// A player's device status the host no longer watches (the player left the room).
    private func unsubscribe(_ pattern: String) {
        do { try client.unsubscribe(pattern) } catch { logger.warning("\(error)") }
    }

    /// The buffer dropped messages: log the first drop and every 100 more; the count goes out
    /// on `<prefix>/status/mqtt` (now if the broker is up, else after the reconnect, then at
    /// most once a second while it changes: see `tick`).
    private func reportOverflow() {
        guard queue.overflowed > loggedOverflow else { return }
        if loggedOverflow == 0 || queue.overflowed - loggedOverflow >= 100 {
            loggedOverflow = queue.overflowed
            logger.warning(
                "the broker is away and the buffer ([mqtt] buffer_messages = \(m.bufferMessages)) is full: \(queue.overflowed) messages dropped so far"
            )
            bridgeStatus("retrying", "buffer full while the broker is away")
        }
    }

    /// A `status` line for source `mqtt` (the bridge itself) with the drop count, retained on
    /// `<prefix>/status/mqtt`.
    private func bridgeStatus(_ state: String, _ message: String, _ extra: JSONObject = [:]) {
        var o: JSONObject = ["class": "status", "source": "mqtt", "state": .string(state), "message": .string(message)]
        o["dropped"] = .int(Int64(queue.overflowed))
        if queue.overflowed > 0 {
            o["dropped_by_topic"] = .object(
                JSONObject(queue.overflowedPerTopic.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) }))
        }
        for (k, v) in extra.entries { o[k] = v }
        lastBridgeStatus = (state, message)
        statusOverflow = queue.overflowed
        let msg = OutgoingMessage(topic: topics.status(source: "mqtt"), payload: bytes(o), qos: 1, retain: true)
        // Straight to libmosquitto (never through the buffer it reports on); kept for the
        // reconnect when the broker is away.
        retained[msg.topic] = msg
        if brokerUp { publishNow(msg, counted: false) }
    }

    // MARK: commands

    private func command(_ payload: [UInt8], now: Int64) {
        switch gate.check(payload) {
        case .refuse(let reply):
            logger.notice("refused a command on \(topics.command): \(ReplyBody(reply)?.error?.message ?? "")")
            publishReply(reply)
        case .bridge(let cmd, let id, let fields):
            let reply =
                room?.command(cmd, id: id, fields: fields, now: now)
                ?? CommandGate.reply(id: id, cmd: cmd, code: .unavailable, "this device is in no room ([mqtt] room)")
            publishReply(reply)
        case .daemon(let cmd, let id, var fields):
            guard daemonUp else {
                publishReply(CommandGate.reply(id: id, cmd: cmd, code: .unavailable, "the daemon is not connected"))
                return
            }
            fields["id"] = nil
            let sink = self.sink
            link.request(fields).whenComplete { sink.yield(.daemonReply(id: id, cmd: cmd, $0)) }
        }
    }

    func publishReply(_ reply: JSONObject) {
        send(OutgoingMessage(topic: topics.reply, payload: bytes(reply), qos: 1, retain: false))
    }

    // MARK: daemon

    private func daemon(_ e: DaemonClient.Event, now: Int64) {
        switch e {
        case .connected:
            daemonUp = true
            logger.info("connected to the daemon at \(config.socket.path)")
            bridgeStatus("streaming", "connected to the daemon at \(config.socket.path)")
        case .disconnected(let reason, let retryIn):
            if daemonUp { logger.warning("lost the daemon: \(reason)") }
            let wasUp = daemonUp
            daemonUp = false
            if let retryIn, !stopping {
                bridgeStatus("retrying", "daemon: \(reason)", ["retry_in_s": .number(retryIn)])
            }
            if wasUp { room?.daemon(up: false, now: now) }
        case .line(let line):
            self.line(line, now: now)
        case .unparsable:
            logger.warning("the daemon sent a line that is not a JSON object; ignored")
        }
    }

    /// The daemon's answer to a forwarded command, published with the sender's id (the client
    /// fails what was pending when the connection ends: "went away before replying").
    private func daemonReply(id: JSONValue, cmd: String, _ result: Result<ReplyBody, any Error>) {
        switch result {
        case .success(let reply):
            var r = reply.fields
            r["id"] = id
            r["seq"] = nil
            publishReply(r)
        case .failure(let error):
            let why =
                (error as? DaemonClient.Failure).map {
                    $0 == .connectionLost || $0 == .closed ? "the daemon went away before replying" : $0.description
                } ?? "\(error)"
            publishReply(CommandGate.reply(id: id, cmd: cmd, code: .unavailable, why))
        }
    }

    private func tick(now: Int64) {
        if brokerUp, queue.overflowed != statusOverflow, now - lastStatusAt >= 1_000_000_000 {
            lastStatusAt = now
            bridgeStatus(lastBridgeStatus.0, lastBridgeStatus.1)
        }
        room?.tick(now: now, brokerUp: brokerUp)
        if pageReleasesLeft > 0, brokerUp, daemonUp, now >= (releasePagesAt ?? now) {
            pageReleasesLeft -= 1
            releasePagesAt = now + 30_000_000_000
            if let failure = StartupPages.release().failure {
                logger.warning("could not release startup pages: \(failure)")
            }
        }
        if let age = fixAge.due(at: now) {
            // QoS 0: a periodic value, the next one replaces a lost one (and it never fills the buffer).
            send(
                OutgoingMessage(topic: topics.fixAge, payload: Array(#"{"age_s":\#(age)}"#.utf8), qos: 0, retain: true))
        }
    }

    func qos(_ cls: String) -> Int32 { Int32(m.qos[cls] ?? 1) }

    /// The latest view of the shared round, shown again to a restarted daemon.
    var roomView: JSONObject?

    // MARK: shutdown

    /// Ends a hosted round, says the bridge stopped on `status/mqtt` (its retained line must not
    /// go on saying "connected") and `offline` (a clean disconnect sends no will); `run` then
    /// waits up to 3 s for the broker to acknowledge before disconnecting.
    private func sayGoodbye() {
        room?.shutdown(now: Self.now())
        bridgeStatus("stopped", "tiltd mqtt stopped")
        send(
            OutgoingMessage(topic: topics.availability, payload: Array("offline".utf8), qos: 1, retain: true),
            remember: false)
    }
}
