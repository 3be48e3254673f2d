import Foundation
import TiltCore

/// tiltd's effective configuration: the main TOML file plus the calibration file it includes.
/// Every key is documented in docs/config.md and config/tiltd.toml.
public struct Configuration: Sendable {
    /// `[imu]`: which IIO device(s) and how fast.
    public struct IMU: Sendable, Equatable {
        /// "auto", an IIO device name, or "accel_name+gyro_name" for split devices.
        public var device = "auto"
        public var rateHz: Double = 60
        /// Overrides the mount matrix the driver reports.
        public var mountMatrix: Matrix3?
        /// Samples per kernel buffer; nil picks ~10 ms worth.
        public var bufferSamples: Int?
        public init() {}
    }

    /// `[socket]`: where clients connect and who may change state.
    public struct Socket: Sendable, Equatable {
        public var path = "/run/tiltd/tiltd.sock"
        /// File mode of the socket (octal in the file, e.g. "0660").
        public var mode: UInt32 = 0o660
        /// Group owning the socket file; nil keeps the daemon's group.
        public var group: String?
        /// Peers (by SO_PEERCRED uid) allowed to send mutating commands. root is always allowed.
        public var trustedUIDs: [UInt32] = []
        /// Peers whose primary gid is listed are trusted too.
        public var trustedGIDs: [UInt32] = []
        /// Attitude rate of the default stream, Hz (0 = off).
        public var attitudeHz: Double = 10
        /// Lines queued per client before the oldest are dropped.
        public var queueLines = 1024
        /// Longest command line accepted, bytes.
        public var maxLineBytes = 4096
        /// Bad lines a client may send before it is disconnected.
        public var maxBadLines = 100
        public init() {}
    }

    /// `[store]`: the SQLite database.
    public struct Store: Sendable, Equatable {
        public var path = "/var/lib/tiltd/tiltd.sqlite"
        public init() {}
    }

    /// `[gps]`.
    public struct GPS: Sendable, Equatable {
        public var enabled = false
        public var host = "127.0.0.1"
        public var port: UInt16 = 2947
        public init() {}
    }

    /// `[calibration]` `persist_*`: saving the gyro bias the daemon learns while at rest.
    public struct BiasPersistence: Sendable, Equatable {
        /// `persist_gyro_bias`: off by default, so the calibration file changes only when asked.
        public var enabled = false
        /// `persist_after_s`: seconds at rest before the learnt bias is trusted enough to save.
        public var afterSeconds: Double = 60
        /// `persist_interval_min`: at most one save per this many minutes (sample time).
        public var intervalMinutes: Double = 30
        public init() {}
    }

    /// `[game]`: the tilt game's rules and its deck.
    public struct Game: Sendable {
        public var rules = TiltGame.Configuration()
        /// A deck file (one prompt per line, or a JSON array), or "nearby" for places near the fix.
        public var deck: String?
        /// The deck used when "nearby" has no fix or no places (a file; nil = a built-in list).
        public var fallbackDeck: String?
        /// Seeds the prompt shuffle; nil = from the first sample time (differs per run).
        public var seed: UInt64?
        public init() {}
    }

    /// `[places]`: the places file and how places act as fences and prompts.
    public struct Places: Sendable, Equatable {
        public var file: String?
        public var asFences = true
        public var fenceDefaults = Fence.PlaceDefaults()
        public var nearby = NearbyPlaces.Options()
        public init() {}
    }

    /// `[quests]`.
    public struct Quests: Sendable, Equatable {
        public var enabled = true
        public var options = QuestGrid.Options()
        public init() {}
    }

    public var imu = IMU()
    public var game = Game()
    public var places = Places()
    public var geofences: [Geofence] = []
    public var quests = Quests()
    /// Credits spent by one `credits.redeem` unless it names an amount.
    public var redeemAmount = 10
    /// Metres to move before a snooze ends by itself.
    public var snoozeDistance = 50.0
    /// Course is reported above `on` m/s and hidden again below `off`.
    public var courseOnSpeed = 1.0
    public var courseOffSpeed = 0.5
    public var calibration = IMUCalibration.none
    public var biasPersistence = BiasPersistence()
    /// The calibration file in use (written by `tiltd calibrate`), resolved to an absolute path.
    public var calibrationFile: String?
    public var socket = Socket()
    public var store = Store()
    public var gps = GPS()
    /// `[web]`: read by `tiltd web` only.
    public var web = Web()
    /// "trace", "debug", "info", "notice", "warning", "error".
    public var logLevel = "info"
    /// The file this was loaded from.
    public var sourceFile: String?

    public init() {}

    public static let defaultPath = "/etc/tiltd/tiltd.toml"
    public static let defaultCalibrationFileName = "calibration.toml"

    /// Loads and validates the file at `path` and the calibration file it names.
    public static func load(path: String) throws(ConfigError) -> Configuration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(file: path, line: nil, key: "", message: "cannot read: \((error as NSError).localizedDescription)")
        }
        var c = try parse(text: text, file: path)
        c.sourceFile = path
        return c
    }

    /// Parses and validates configuration text. Relative paths are taken from `file`'s directory.
    public static func parse(text: String, file: String) throws(ConfigError) -> Configuration {
        let doc = try TOMLDocument(text: text, file: file)
        var root = TableReader(doc: doc, path: "", table: doc.root)
        var c = Configuration()
        let baseDir = (file as NSString).deletingLastPathComponent

        if var t = try root.table("imu") {
            c.imu.device = try t.string("device", default: c.imu.device)
            if c.imu.device.isEmpty { throw t.error("device", "must not be empty (use \"auto\")") }
            c.imu.rateHz = try t.double("rate_hz", default: c.imu.rateHz, in: 10...1000)
            if let m = try t.doubles("mount_matrix", count: 9, in: -1...1) {
                let mm = Matrix3(rowMajor: m)!
                if abs(abs(mm.determinant) - 1) > 0.05 { throw t.error("mount_matrix", "must be a rotation (|det| = 1), det is \(mm.determinant)") }
                c.imu.mountMatrix = mm
            }
            if t.has("buffer_samples") { c.imu.bufferSamples = try t.int("buffer_samples", default: 1, in: 1...4096) }
            try t.finish()
        }

        var calFileKey: String?
        if var t = try root.table("calibration") {
            calFileKey = try t.optionalString("file")
            // Settings, not measurements: only the main file may hold them.
            c.biasPersistence.enabled = try t.bool("persist_gyro_bias", default: c.biasPersistence.enabled)
            c.biasPersistence.afterSeconds = try t.double("persist_after_s", default: c.biasPersistence.afterSeconds, in: 5...86_400)
            c.biasPersistence.intervalMinutes = try t.double("persist_interval_min", default: c.biasPersistence.intervalMinutes, in: 1...10_080)
            c.calibration = try readCalibration(&t, into: c.calibration)
            try t.finish()
        }
        let calPath = resolve(calFileKey ?? defaultCalibrationFileName, base: baseDir)
        if FileManager.default.fileExists(atPath: calPath) {
            c.calibration = try loadCalibration(path: calPath, over: c.calibration)
            c.calibrationFile = calPath
        } else if calFileKey != nil {
            // Named but absent: fine until `tiltd calibrate` writes it; remember where it goes.
            c.calibrationFile = calPath
        } else {
            c.calibrationFile = calPath
        }

        if var t = try root.table("socket") {
            c.socket.path = try t.string("path", default: c.socket.path)
            if c.socket.path.isEmpty { throw t.error("path", "must not be empty") }
            if c.socket.path.utf8.count > 107 { throw t.error("path", "longer than a Unix socket path may be (107 bytes)") }
            let mode = try t.string("mode", default: "0660")
            guard let m = UInt32(mode, radix: 8), m <= 0o777 else { throw t.error("mode", "expected an octal file mode like \"0660\", got \"\(mode)\"") }
            c.socket.mode = m
            c.socket.group = try t.optionalString("group")
            c.socket.trustedUIDs = (try t.ints("trusted_uids", in: 0...Int(UInt32.max - 1)) ?? []).map { UInt32($0) }
            c.socket.trustedGIDs = (try t.ints("trusted_gids", in: 0...Int(UInt32.max - 1)) ?? []).map { UInt32($0) }
            c.socket.attitudeHz = try t.double("attitude_hz", default: c.socket.attitudeHz, in: 0...1000)
            c.socket.queueLines = try t.int("queue_lines", default: c.socket.queueLines, in: 16...1_000_000)
            c.socket.maxLineBytes = try t.int("max_line_bytes", default: c.socket.maxLineBytes, in: 256...1_048_576)
            c.socket.maxBadLines = try t.int("max_bad_lines", default: c.socket.maxBadLines, in: 1...1_000_000)
            try t.finish()
        }

        if var t = try root.table("store") {
            c.store.path = resolve(try t.string("path", default: c.store.path), base: baseDir)
            try t.finish()
        }

        if var t = try root.table("gps") {
            c.gps.enabled = try t.bool("enabled", default: true)
            let server = try t.string("server", default: "\(c.gps.host):\(c.gps.port)")
            guard let (h, p) = splitHostPort(server) else { throw t.error("server", "expected HOST:PORT, got \"\(server)\"") }
            c.gps.host = h; c.gps.port = p
            try t.finish()
        }

        if var t = try root.table("game") {
            var g = c.game.rules
            g.mode = try t.string("mode", default: g.mode.rawValue, allowed: ["absolute", "relative"]) == "relative" ? .relative : .absolute
            g.lowThresholdDeg = try t.double("low_threshold_deg", default: g.lowThresholdDeg, in: 0...180)
            g.highThresholdDeg = try t.double("high_threshold_deg", default: g.highThresholdDeg, in: 0...180)
            g.swapSides = try t.bool("swap_sides", default: g.swapSides)
            g.hysteresisDeg = try t.double("hysteresis_deg", default: g.hysteresisDeg, in: 0...90)
            g.holdSeconds = try t.double("hold_s", default: g.holdSeconds, in: 0...10)
            g.neutralHoldSeconds = try t.double("neutral_hold_s", default: g.neutralHoldSeconds, in: 0...10)
            g.debounceSeconds = try t.double("debounce_s", default: g.debounceSeconds, in: 0...10)
            g.roundSeconds = try t.double("round_s", default: g.roundSeconds, in: 5...3600)
            if let v = try t.vector("back_axis", in: -1...1) { g.backAxis = v }
            g.captureNeutralAtRoundStart = try t.bool("capture_neutral_at_round_start", default: g.captureNeutralAtRoundStart)
            do { try g.validate() } catch {
                if case .invalidConfiguration(let field, let reason) = error { throw t.error(field, reason) }
                throw t.error("", error.message)
            }
            c.game.rules = g
            if let d = try t.optionalString("deck") { c.game.deck = d == "nearby" ? d : resolve(d, base: baseDir) }
            if let d = try t.optionalString("fallback_deck") { c.game.fallbackDeck = resolve(d, base: baseDir) }
            if t.has("seed") { c.game.seed = UInt64(try t.int("seed", default: 0, in: 0...Int.max)) }
            try t.finish()
        }

        if var t = try root.table("places") {
            if let f = try t.optionalString("file") { c.places.file = resolve(f, base: baseDir) }
            c.places.asFences = try t.bool("as_fences", default: c.places.asFences)
            c.places.fenceDefaults.radius = try t.double("fence_radius_m", default: c.places.fenceDefaults.radius, in: 1...100_000)
            c.places.fenceDefaults.dwell = try t.double("fence_dwell_s", default: c.places.fenceDefaults.dwell, in: 0...86_400)
            c.places.fenceDefaults.cooldown = try t.double("fence_cooldown_s", default: c.places.fenceDefaults.cooldown, in: 0...31_536_000)
            if let cats = try t.strings("credit_categories") { c.places.fenceDefaults.creditCategories = Set(cats.map(Place.normalizedCategory)) }
            c.places.nearby.radius = try t.double("nearby_radius_m", default: c.places.nearby.radius, in: 10...100_000)
            if let cats = try t.strings("nearby_categories") { c.places.nearby.categories = Set(cats.map(Place.normalizedCategory)) }
            c.places.nearby.limit = try t.int("nearby_limit", default: c.places.nearby.limit, in: 1...10_000)
            try t.finish()
        }

        var names = Set<String>()
        for var t in try root.tables("geofence") {
            guard let name = try t.optionalString("name") else { throw t.error("name", "every [[geofence]] needs a name") }
            guard names.insert(name).inserted else { throw t.error("name", "\"\(name)\" is used by another [[geofence]]") }
            guard let lat = try t.optionalDouble("lat", in: -90...90) else { throw t.error("lat", "missing (degrees, -90…90)") }
            guard let lon = try t.optionalDouble("lon", in: -180...180) else { throw t.error("lon", "missing (degrees, -180…180)") }
            let g = Geofence(name: name, lat: lat, lon: lon,
                             radius: try t.double("radius_m", default: 50, in: 1...100_000),
                             dwell: try t.double("dwell_s", default: Geofence.defaultDwell, in: 0...86_400),
                             cooldown: try t.double("cooldown_s", default: Geofence.defaultCooldown, in: 0...31_536_000),
                             credit: try t.bool("credit", default: false))
            try t.finish()
            c.geofences.append(g)
        }

        if var t = try root.table("quests") {
            c.quests.enabled = try t.bool("enabled", default: true)
            c.quests.options.cellSize = try t.double("cell_m", default: c.quests.options.cellSize, in: 10...100_000)
            c.quests.options.cooldown = try t.double("cooldown_s", default: c.quests.options.cooldown, in: 0...31_536_000)
            c.quests.options.baseXP = try t.int("base_xp", default: c.quests.options.baseXP, in: 1...1_000_000)
            c.quests.options.minXP = try t.int("min_xp", default: c.quests.options.minXP, in: 0...1_000_000)
            try t.finish()
        }

        if var t = try root.table("credits") {
            c.redeemAmount = try t.int("redeem_amount", default: c.redeemAmount, in: 1...1_000_000)
            try t.finish()
        }

        if var t = try root.table("snooze") {
            c.snoozeDistance = try t.double("distance_m", default: c.snoozeDistance, in: 1...100_000)
            try t.finish()
        }

        if var t = try root.table("course") {
            c.courseOnSpeed = try t.double("on_speed", default: c.courseOnSpeed, in: 0...100)
            c.courseOffSpeed = try t.double("off_speed", default: c.courseOffSpeed, in: 0...100)
            if c.courseOffSpeed > c.courseOnSpeed { throw t.error("off_speed", "must not exceed on_speed (\(c.courseOnSpeed))") }
            try t.finish()
        }

        if var t = try root.table("web") { c.web = try readWeb(&t, base: baseDir) }

        if var t = try root.table("log") {
            c.logLevel = try t.string("level", default: c.logLevel, allowed: ["trace", "debug", "info", "notice", "warning", "error"])
            try t.finish()
        }

        try root.finish()
        return c
    }

    /// Reads calibration keys from a `[calibration]` table, starting from `base`.
    static func readCalibration(_ t: inout TableReader, into base: IMUCalibration) throws(ConfigError) -> IMUCalibration {
        var cal = base
        // Bounds: an offset beyond 2 g or a bias beyond the largest common gyro range (2000 °/s)
        // is a broken measurement, not a calibration.
        if let v = try t.vector("accel_offset", in: -2 * 9.81...2 * 9.81) { cal.accelOffset = v }
        if let v = try t.vector("accel_scale", in: 0.8...1.2) { cal.accelScale = v }
        if let m = try t.doubles("accel_matrix", count: 9, in: -1.5...1.5) {
            let mm = Matrix3(rowMajor: m)!
            for (i, d) in [mm.r0.x, mm.r1.y, mm.r2.z].enumerated() where !(0.8...1.2).contains(d) {
                throw t.error("accel_matrix", "diagonal element \(i) is \(d), outside 0.8…1.2")
            }
            cal.accelMatrix = mm
        }
        if let v = try t.vector("gyro_bias", in: -35...35) { cal.gyroBias = v }
        // The neutral head pose: a unit quaternion [w, x, y, z]; off-unit means a damaged value.
        if let q = try t.doubles("neutral", count: 4, in: -1.001...1.001) {
            let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).squareRoot()
            if abs(n - 1) > 1e-3 { throw t.error("neutral", "must be a unit quaternion [w, x, y, z], its norm is \(n)") }
            cal.neutral = Quaternion(w: q[0], x: q[1], y: q[2], z: q[3])
        }
        return cal
    }

    /// Loads a calibration file (a `[calibration]` table and nothing else) over `base`.
    public static func loadCalibration(path: String, over base: IMUCalibration = .none) throws(ConfigError) -> IMUCalibration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(file: path, line: nil, key: "", message: "cannot read: \((error as NSError).localizedDescription)")
        }
        let doc = try TOMLDocument(text: text, file: path)
        var root = TableReader(doc: doc, path: "", table: doc.root)
        var cal = base
        if var t = try root.table("calibration") {
            cal = try readCalibration(&t, into: base)
            try t.finish()
        }
        try root.finish()
        return cal
    }

    static func resolve(_ p: String, base: String) -> String {
        if p.hasPrefix("/") || base.isEmpty { return p }
        return (base as NSString).appendingPathComponent(p)
    }

    static func splitHostPort(_ s: String) -> (String, UInt16)? {
        guard let colon = s.lastIndex(of: ":") else { return nil }
        let host = String(s[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard !host.isEmpty, let port = UInt16(s[s.index(after: colon)...]), port > 0 else { return nil }
        return (host, port)
    }
}
