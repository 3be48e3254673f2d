import FoundationEssentials
import Glibc
import TiltCore
import TiltSensors

/// tiltd's effective configuration: the main TOML file plus the calibration file it includes.
/// Every key is documented in docs/config.md and config/tiltd.toml.
public struct Configuration: Sendable {
    /// `[store]`: the SQLite database.
    public struct Store: Sendable, Equatable {
        /// The SQLite database (WAL mode; relative paths from the config's directory).
        public var path = "/var/lib/tiltd/tiltd.sqlite"
        /// The defaults.
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
        /// The defaults.
        public init() {}
    }

    /// `[imu]` (see `AttitudeComponent`).
    public var imu = IMU()
    /// `[game]` (see `GameComponent`).
    public var game = Game()
    /// `[places]` (see `PlacesComponent`).
    public var places = Places()
    /// Every `[[geofence]]`, in file order.
    public var geofences: [Geofence] = []
    /// `[quests]` (see `QuestsComponent`).
    public var quests = Quests()
    /// Credits spent by one `credits.redeem` unless it names an amount.
    public var redeemAmount = 10
    /// Metres to move before a snooze ends by itself.
    public var snoozeDistance = 50.0
    /// Course is reported above `on` m/s and hidden again below `off`.
    public var courseOnSpeed = 1.0
    /// Speed (m/s) below which course is hidden again.
    public var courseOffSpeed = 0.5
    /// The IMU calibration: the main file's `[calibration]` overlaid by the calibration file.
    public var calibration = IMUCalibration.none
    /// `[calibration] persist_*`: saving the gyro bias learnt at rest.
    public var biasPersistence = BiasPersistence()
    /// The calibration file in use (written by `tiltd calibrate`), resolved to an absolute path.
    public var calibrationFile: String?
    /// `[socket]` (see `ClientsComponent`).
    public var socket = Socket()
    /// `[store]`.
    public var store = Store()
    /// `[gps]` (see `GPSComponent`).
    public var gps = GPS()
    /// `[web]`: read by `tiltd web` only.
    public var web = Web()
    /// `[mqtt]`: read by `tiltd mqtt` (Config/MQTTSection.swift).
    public var mqtt = MQTT()
    /// "trace", "debug", "info", "notice", "warning", "error".
    public var logLevel = "info"
    /// The file this was loaded from.
    public var sourceFile: String?
    /// The parsed file, for the line of a key in later errors (`error(_:_:)`).
    public var document: TOMLDocument?

    /// The defaults.
    public init() {}

    /// The config file read when no `--config` is given.
    public static let defaultPath = "/etc/tiltd/tiltd.toml"
    /// The calibration file, next to the config, unless `[calibration] file` names another.
    public static let defaultCalibrationFileName = "calibration.toml"

    /// Loads and validates the file at `path` and the calibration file it names.
    public static func load(path: String) throws(ConfigError) -> Configuration {
        let text: String
        do {
            text = try FileIO.readText(path)
        } catch {
            throw ConfigError(
                file: path, line: nil, key: "", message: error.reason)
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
        c.document = doc
        let baseDir = PathName.directory(of: file)

        if var t = try root.table("imu") { try c.readIMU(&t); try t.finish() }

        var calFileKey: String?
        if var t = try root.table("calibration") {
            calFileKey = try t.optionalString("file")
            // Settings, not measurements: only the main file may hold them.
            c.biasPersistence.enabled = try t.bool("persist_gyro_bias", default: c.biasPersistence.enabled)
            c.biasPersistence.afterSeconds = try t.double(
                "persist_after_s", default: c.biasPersistence.afterSeconds, in: 5...86_400)
            c.biasPersistence.intervalMinutes = try t.double(
                "persist_interval_min", default: c.biasPersistence.intervalMinutes, in: 1...10_080)
            c.calibration = try readCalibration(&t, into: c.calibration)
            try t.finish()
        }
        let calPath = resolve(calFileKey ?? defaultCalibrationFileName, base: baseDir)
        // Absent is fine until `tiltd calibrate` writes it; remember where it goes either way.
        if FileManager.default.fileExists(atPath: calPath) {
            c.calibration = try loadCalibration(path: calPath, over: c.calibration)
        }
        c.calibrationFile = calPath

        if var t = try root.table("socket") { try c.readSocket(&t, base: baseDir); try t.finish() }

        if var t = try root.table("store") {
            c.store.path = resolve(try t.string("path", default: c.store.path), base: baseDir)
            try t.finish()
        }

        if var t = try root.table("gps") { try c.readGPS(&t); try t.finish() }
        if var t = try root.table("game") { try c.readGame(&t, base: baseDir); try t.finish() }
        if var t = try root.table("places") { try c.readPlaces(&t, base: baseDir); try t.finish() }
        for var t in try root.tables("geofence") { try c.readGeofence(&t); try t.finish() }
        if var t = try root.table("quests") { try c.readQuests(&t); try t.finish() }
        if var t = try root.table("credits") { try c.readCredits(&t); try t.finish() }
        if var t = try root.table("snooze") { try c.readSnooze(&t); try t.finish() }
        if var t = try root.table("course") { try c.readCourse(&t); try t.finish() }

        if var t = try root.table("web") { c.web = try readWeb(&t, base: baseDir) }
        if var t = try root.table("mqtt") { c.mqtt = try readMQTT(&t, base: baseDir) }

        if var t = try root.table("log") {
            c.logLevel = try t.string(
                "level", default: c.logLevel, allowed: ["trace", "debug", "info", "notice", "warning", "error"])
            try t.finish()
        }

        try root.finish()
        return c
    }

    /// Reads calibration keys from a `[calibration]` table, starting from `base`.
    static func readCalibration(_ t: inout TableReader, into base: IMUCalibration) throws(ConfigError) -> IMUCalibration
    {
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
            if abs(n - 1) > 1e-3 {
                throw t.error("neutral", "must be a unit quaternion [w, x, y, z], its norm is \(n)")
            }
            cal.neutral = Quaternion(w: q[0], x: q[1], y: q[2], z: q[3])
        }
        // The head frame learnt from the calibration nod: two directions in the sensor frame.
        if let v = try t.vector("head_up", in: -1.001...1.001) { cal.headUp = v }
        if let v = try t.vector("head_forward", in: -1.001...1.001) { cal.headForward = v }
        if (cal.headUp == nil) != (cal.headForward == nil) {
            throw t.error(
                cal.headUp == nil ? "head_up" : "head_forward",
                "head_up and head_forward go together (tiltd calibrate neutral writes both)")
        }
        if cal.headUp != nil, cal.headFrame == nil {
            throw t.error("head_forward", "must be at least 20° from head_up (and both non-zero)")
        }
        return cal
    }

    /// Loads a calibration file (a `[calibration]` table and nothing else) over `base`.
    public static func loadCalibration(
        path: String, over base: IMUCalibration = .none
    ) throws(ConfigError) -> IMUCalibration {
        let text: String
        do {
            text = try FileIO.readText(path)
        } catch {
            throw ConfigError(
                file: path, line: nil, key: "", message: error.reason)
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
        return PathName.appending(p, to: base)
    }
}

extension Configuration {
    /// An error about `key` of this configuration, located at the line that set it.
    public func error(_ key: String, _ message: String) -> ConfigError {
        ConfigError(
            file: sourceFile ?? document?.file ?? "-", line: document?.line(of: key), key: key, message: message)
    }
}
