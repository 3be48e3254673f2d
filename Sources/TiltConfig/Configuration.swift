// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// tiltd's effective configuration: the main TOML file plus the calibration file it includes.
///
/// Every table and key is declared once, in `Configuration.tables` (Sections/*.swift): its name,
/// type, range, default, meaning and what a reload does with it. Parsing, validation,
/// `tiltd check-config` (`EffectiveConfig`), the reload's diff (`changedSections`,
/// `changedKeys`) and the key tables of docs/config.md and tiltd.toml(5) (ConfigReferenceTests)
/// are made from those declarations, so adding a key is one edit there plus its behaviour.
///
/// The declarations live here, not beside the components that act on them: `tiltd web`,
/// `tiltd mqtt` and `tiltd check-config` read the whole file without linking the daemon, and
/// the docs are made from one list. The components keep their behaviour (stage, apply).
public struct Configuration: Sendable {
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
    /// `[credits]` (see `CreditsComponent`).
    public var credits = Credits()
    /// `[snooze]` (see `PlacesComponent`).
    public var snooze = Snooze()
    /// `[course]` (see `PlacesComponent`).
    public var course = Course()
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
    /// `[mqtt]`: read by `tiltd mqtt` (Sections/MQTTSection.swift).
    public var mqtt = MQTT()
    /// `[log]`.
    public var log = Log()
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

    /// Every table of the file, in the order they are read and shown.
    public static var tables: [ConfigTable] {
        [
            imuTable, calibrationTable, socketTable, storeTable, gpsTable, gameTable, placesTable, geofenceTable,
            questsTable, creditsTable, snoozeTable, courseTable, webTable, mqttTable, logTable,
        ]
    }

    /// Loads and validates the file at `path` and the calibration file it names.
    public static func load(path: String) throws(ConfigError) -> Configuration {
        let text: String
        do {
            text = try FileIO.readText(path)
        } catch {
            throw ConfigError(file: path, line: nil, key: "", message: error.reason)
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
        let ctx = ConfigContext(baseDir: PathName.directory(of: file))
        for table in tables { try table.parse(&root, &c, ctx) }
        try root.finish()
        return c
    }

    /// The dotted keys (`store.path`) whose values differ between `a` and `b` (a changed
    /// `[[geofence]]` list is named as `geofence`), in declaration order.
    public static func changedKeys(_ a: Configuration, _ b: Configuration) -> [String] {
        tables.flatMap { $0.changedKeys(a, b) }
    }

    /// The changed keys that need a restart (`ReloadRule.needsRestart`): a reload refuses them.
    public static func changedKeysNeedingRestart(_ a: Configuration, _ b: Configuration) -> [String] {
        let rules = Dictionary(
            tables.flatMap { t in t.keys.map { ("\(t.name).\($0.name)", $0.reload) } }, uniquingKeysWith: { x, _ in x })
        return changedKeys(a, b).filter { rules[$0] == .needsRestart }
    }

    /// The tables the daemon uses that differ between `a` and `b`, by name (the `reload`
    /// reply's `changed`): keys read by another process (`[web]`, `[mqtt]`) are left out.
    public static func changedSections(_ a: Configuration, _ b: Configuration) -> [String] {
        var out: [String] = []
        for t in tables where t.keys.contains(where: { $0.reload != .otherProcess }) {
            let changed = t.changedKeys(a, b)
            let forDaemon = changed.contains { path in
                guard let key = path.split(separator: ".", maxSplits: 1).dropFirst().first else { return true }
                return t.keys.first { $0.name == key }?.reload != .otherProcess
            }
            if forDaemon { out.append(t.name) }
        }
        return out
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
