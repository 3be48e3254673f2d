// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol

/// What `tiltd monitor` knows about the daemon: the latest of everything it has been told.
///
/// It is built only from the lines the daemon sends (`apply`) and from the monitor's own
/// connection changes, so the screen can be rendered and tested from fixed inputs. Unknown
/// classes and fields are ignored: an older monitor keeps working against a newer daemon.
public struct MonitorState: Sendable, Equatable {
    /// The latest `attitude` line.
    public struct AttitudeReading: Sendable, Equatable {
        /// Sample time, ns.
        public var t: Int64?
        /// Roll, degrees.
        public var rollDeg: Double
        /// Pitch, degrees.
        public var pitchDeg: Double
        /// Nil when the daemon has no heading (an accelerometer-only IMU).
        public var yawDeg: Double?
        /// Whether the estimator judged the sensor still.
        public var atRest: Bool?
        /// Gyro bias the fusion currently subtracts, rad/s.
        public var gyroBias: [Double]?
        /// Heading from magnetic north, degrees (`heading_deg`).
        public var headingDeg: Double?
        /// Heading from true north, degrees (`true_heading_deg`).
        public var trueHeadingDeg: Double?
        /// "mag", "course" or "none"; nil from a daemon that predates headings.
        public var headingSource: String?
        /// Whether the magnetometer's field is judged disturbed; nil without a magnetometer.
        public var magDisturbed: Bool?
        /// Creates a reading.
        public init(
            t: Int64?, rollDeg: Double, pitchDeg: Double, yawDeg: Double?, atRest: Bool?, gyroBias: [Double]?,
            headingDeg: Double? = nil, trueHeadingDeg: Double? = nil, headingSource: String? = nil,
            magDisturbed: Bool? = nil
        ) {
            self.t = t; self.rollDeg = rollDeg; self.pitchDeg = pitchDeg; self.yawDeg = yawDeg
            self.atRest = atRest; self.gyroBias = gyroBias
            self.headingDeg = headingDeg; self.trueHeadingDeg = trueHeadingDeg
            self.headingSource = headingSource; self.magDisturbed = magDisturbed
        }
    }

    /// The game as last reported (by `hello`, a `status` reply or a `game` event).
    public struct GameReading: Sendable, Equatable {
        /// "idle", "waiting_for_neutral" or "prompt".
        public var state: String = "idle"
        /// The running round, nil when idle.
        public var round: Int64?
        /// The prompt on screen.
        public var prompt: String?
        /// The round's score.
        public var score: Int64 = 0
        /// Time left when the report was made, ms.
        public var remainingMs: Int64?
        /// Sample time of the report, so the time left can be counted down by sample time.
        public var t: Int64?
        /// The kind of the latest `game` event ("correct", "skip", "round_ended", …).
        public var lastKind: String?
        /// The tilt angle the game measured at the latest event that had one, degrees.
        public var tiltDeg: Double?
        /// "absolute" or "relative".
        public var mode: String?
        /// What the low zone means: "correct" (default) or "skip".
        public var lowSide: String = "correct"
        /// Where the head frame in use comes from (`orientation.source`: "calibrated", "learned",
        /// "neutral", "assumed", …); nil until the daemon says.
        public var headFrame: String?
        /// True after `orientation_suspect` until `orientation_ok` (or a state that says otherwise).
        public var orientationSuspect = false
        /// Creates the idle state.
        public init() {}
    }

    /// The latest `fix`. Fields gpsd did not know are nil.
    public struct FixReading: Sendable, Equatable {
        /// gpsd's mode (0 unknown, 1 no fix, 2 2D, 3 3D).
        public var mode: Int64
        /// Latitude, degrees.
        public var lat: Double?
        /// Longitude, degrees.
        public var lon: Double?
        /// Speed, m/s.
        public var speedMps: Double?
        /// Course, degrees.
        public var trackDeg: Double?
        /// Altitude, metres.
        public var altM: Double?
        /// Creates a fix reading.
        public init(
            mode: Int64, lat: Double? = nil, lon: Double? = nil, speedMps: Double? = nil, trackDeg: Double? = nil,
            altM: Double? = nil
        ) {
            self.mode = mode; self.lat = lat; self.lon = lon; self.speedMps = speedMps; self.trackDeg = trackDeg;
            self.altM = altM
        }
    }

    /// One source's status line ("imu", "gps", …).
    public struct SourceReading: Sendable, Equatable {
        /// "imu", "magnetometer", "gps", "store", "config" or "game".
        public var source: String
        /// Its state.
        public var state: String
        /// What it said.
        public var message: String
        /// Creates a source reading.
        public init(source: String, state: String, message: String) {
            self.source = source; self.state = state; self.message = message
        }
    }

    /// The game's default low threshold, degrees, used until the daemon says. Given by the caller
    /// (`tiltd monitor` passes `TiltGame.Rules`'s), so this client-side model needs no game module.
    public let defaultLowThresholdDeg: Double
    /// The game's default high threshold, degrees, until the daemon says otherwise.
    public let defaultHighThresholdDeg: Double

    /// Where the monitor connects (shown in the title).
    public var socketPath: String
    /// True between a successful connect and the connection's end.
    public var connected = false
    /// Why the last connection attempt failed or ended, while disconnected.
    public var disconnectReason: String?
    /// Connections made so far (more than one means the daemon restarted).
    public var connections = 0
    /// Daemon version from `hello`.
    public var daemonVersion: String?

    /// The latest attitude.
    public var attitude: AttitudeReading?
    /// The game as last seen.
    public var game = GameReading()
    /// The game's low threshold in force, degrees.
    public var lowThresholdDeg: Double
    /// The game's high threshold in force, degrees.
    public var highThresholdDeg: Double
    /// The latest fix.
    public var fix: FixReading?
    /// Sources in the order first reported.
    public var sources: [SourceReading] = []

    /// From the latest `status` reply.
    public var sampleRateHz: Double?
    /// Connected clients (from `status`).
    public var clients: Int64?
    /// Lines the daemon dropped for all its clients since it started (`status` reply).
    public var droppedLinesAllClients: Int64?
    /// Lines dropped for this monitor, summed from `gap` events (over all connections).
    public var gapDropped: Int64 = 0
    /// The number of `gap` events received.
    public var gapEvents = 0
    /// Lines received that were not valid JSON objects.
    public var badLines = 0

    /// A fresh state for the monitor of `socketPath`.
    public init(socketPath: String, defaultThresholdsDeg: (low: Double, high: Double)) {
        self.socketPath = socketPath
        defaultLowThresholdDeg = defaultThresholdsDeg.low
        defaultHighThresholdDeg = defaultThresholdsDeg.high
        lowThresholdDeg = defaultThresholdsDeg.low
        highThresholdDeg = defaultThresholdsDeg.high
    }

    /// Records a successful connect; readings from the previous connection stay on screen
    /// until the daemon's `hello` replaces them.
    public mutating func didConnect() {
        connected = true
        disconnectReason = nil
        connections += 1
    }

    /// Records the end of a connection or a failed attempt.
    public mutating func didDisconnect(reason: String) {
        connected = false
        disconnectReason = reason
    }

    /// Applies one line from the daemon (without its newline).
    public mutating func apply(line: some Collection<UInt8>) {
        guard let l = DaemonLine(bytes: line) else { badLines += 1; return }
        apply(l)
    }

    /// Applies one line from the daemon, read with the protocol's typed bodies (`DaemonLine.body`):
    /// a line whose required fields are missing or mistyped (`malformed`) changes nothing.
    public mutating func apply(_ line: DaemonLine) {
        switch line.body {
        case .hello(let h):
            forgetDaemonReadings()
            daemonVersion = h.version
            applySources(h.sources)
            if let g = h.game { applyGameSnapshot(g) }
            if let f = h.fix { applyFix(f) }
        case .attitude(let a):
            applyAttitude(a, t: line.tNs)
        case .game(let g):
            applyGame(g, t: line.tNs)
        case .fix(let f):
            applyFix(f)
        case .status(let s):
            setSource(SourceReading(source: s.source, state: s.state, message: s.message))
        case .gap(let dropped):
            gapEvents += 1
            gapDropped += Int64(dropped)
        case .reply(let r):
            if let s = StatusReplyBody(r) { applyStatusReply(s) }
        default:
            break
        }
    }

    /// A `hello` starts a connection to a daemon that may have restarted, with other sources
    /// and no fix: what the previous one said is dropped, and the hello says what is now.
    /// (What this monitor counted itself — gaps, bad lines, connections — stays.)
    mutating func forgetDaemonReadings() {
        daemonVersion = nil
        attitude = nil
        game = GameReading()
        lowThresholdDeg = defaultLowThresholdDeg
        highThresholdDeg = defaultHighThresholdDeg
        fix = nil
        sources = []
        sampleRateHz = nil
        clients = nil
        droppedLinesAllClients = nil
    }

    mutating func applyAttitude(_ a: AttitudeBody, t: Nanoseconds?) {
        attitude = AttitudeReading(
            t: t, rollDeg: a.rollDeg, pitchDeg: a.pitchDeg, yawDeg: a.yawDeg, atRest: a.atRest,
            gyroBias: a.gyroBias.map { [$0.x, $0.y, $0.z] }, headingDeg: a.headingDeg,
            trueHeadingDeg: a.trueHeadingDeg, headingSource: a.headingSource?.rawValue, magDisturbed: a.magDisturbed)
    }

    /// A `game` line: the fields every kind carries, and the head frame's.
    mutating func applyGame(_ g: GameBody, t: Nanoseconds?) {
        applyGameCommon(
            state: g.state, round: g.round, prompt: g.prompt, score: g.score, remainingMs: g.remainingMs, t: t,
            tiltDeg: g.tiltDeg, orientation: g.orientation)
        game.lastKind = g.kind
        switch g.kind {
        case "orientation_suspect": game.orientationSuspect = true
        case "orientation_ok": game.orientationSuspect = false
        default: break
        }
    }

    /// The game state in `hello` and `status` replies: the same fields plus the rules (the
    /// last line's kind stays).
    mutating func applyGameSnapshot(_ g: GameStateBody) {
        applyGameCommon(
            state: g.state, round: g.round, prompt: g.prompt, score: g.score, remainingMs: g.remainingMs, t: g.tNs,
            tiltDeg: g.tiltDeg, orientation: g.orientation)
        if let c = g.config { applyGameConfig(c) }
    }

    private mutating func applyGameCommon(
        state: String?, round: Int64?, prompt: String?, score: Int64?, remainingMs: Int64?, t: Nanoseconds?,
        tiltDeg: Double?, orientation: HeadFrameBody?
    ) {
        if let state { game.state = state }
        game.round = round
        game.prompt = prompt
        if let score { game.score = score }
        game.remainingMs = remainingMs
        game.t = t ?? game.t
        game.tiltDeg = tiltDeg
        if let orientation {
            game.headFrame = orientation.source ?? game.headFrame
            if let suspect = orientation.suspect { game.orientationSuspect = suspect }
        }
    }

    mutating func applyGameConfig(_ c: GameRulesBody) {
        // Take the pair only when it makes sense, so a bad value cannot break the gauge.
        if let low = c.lowThresholdDeg, let high = c.highThresholdDeg, low.isFinite, high.isFinite, 0 <= low,
            low < high, high <= 180
        {
            lowThresholdDeg = low; highThresholdDeg = high
        }
        if let m = c.mode { game.mode = m }
        if let s = c.lowSide { game.lowSide = s }
    }

    mutating func applyFix(_ f: FixBody) {
        fix = FixReading(
            mode: Int64(f.mode), lat: f.lat, lon: f.lon, speedMps: f.speedMps, trackDeg: f.trackDeg, altM: f.altM)
    }

    mutating func applySources(_ sources: [StatusBody]) {
        for s in sources { setSource(SourceReading(source: s.source, state: s.state, message: s.message)) }
    }

    mutating func setSource(_ r: SourceReading) {
        if let i = sources.firstIndex(where: { $0.source == r.source }) { sources[i] = r } else { sources.append(r) }
    }

    mutating func applyStatusReply(_ s: StatusReplyBody) {
        sampleRateHz = s.sampleRateHz
        clients = s.clients ?? clients
        droppedLinesAllClients = s.droppedLines ?? droppedLinesAllClients
        daemonVersion = s.version ?? daemonVersion
        applySources(s.sources)
        if let g = s.game { applyGameSnapshot(g) }
        if let f = s.fix { applyFix(f) }
    }

    /// Time left in the round now: the last report counted down by the sample time since.
    /// Sample time, not the monitor's clock, so a replay at any speed shows the game's view.
    public var gameTimeLeftMs: Int64? {
        guard game.state != "idle", let r = game.remainingMs else { return nil }
        guard let t0 = game.t, let now = attitude?.t, now > t0 else { return r }
        return max(0, r - (now - t0) / 1_000_000)
    }
}
