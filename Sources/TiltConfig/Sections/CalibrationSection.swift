// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import TiltCore
import TiltPlatform

extension IMUCalibration: ConfigDefaults {
    /// No calibration (`.none`).
    public init() { self.init(accelOffset: .zero) }
}

extension Configuration {
    /// `[calibration]` `persist_*`: saving the gyro bias the daemon learns while at rest.
    public struct BiasPersistence: Sendable, Equatable, ConfigDefaults {
        /// `persist_gyro_bias`: off by default, so the calibration file changes only when asked.
        public var enabled = false
        /// `persist_after_s`: seconds at rest before the learnt bias is trusted enough to save.
        public var afterSeconds: Double = 60
        /// `persist_interval_min`: at most one save per this many minutes (sample time).
        public var intervalMinutes: Double = 30
        /// The defaults.
        public init() {}

        /// Settings, not measurements: only the main file may hold them.
        static var keys: [ConfigKey<BiasPersistence>] {
            [
                .flag(
                    "persist_gyro_bias", \.enabled,
                    "save the gyro bias the daemon learns at rest to the calibration file, so the next start begins from it (docs/calibration.md)"
                ),
                .number(
                    "persist_after_s", \.afterSeconds, in: 5...86_400, "only after this long at rest without a break"),
                .number(
                    "persist_interval_min", \.intervalMinutes, in: 1...10_080, "and at most once per this many minutes"),
            ]
        }
    }

    /// The measurements of `[calibration]`: the keys the calibration file may hold too.
    // Bounds: an offset beyond 2 g or a bias beyond the largest common gyro range (2000 °/s)
    // is a broken measurement, not a calibration.
    static var measurementKeys: [ConfigKey<IMUCalibration>] {
        [
            .vector("accel_offset", \.accelOffset, in: -2 * 9.81...2 * 9.81, "m/s², subtracted first"),
            .vector("accel_scale", \.accelScale, in: 0.8...1.2, "per-axis scale: `a = diag(scale)·(a_raw − offset)`"),
            .custom(
                "accel_matrix", \.accelMatrix, type: "9 numbers -1.5–1.5, diagonal 0.8–1.2", default: "unset",
                "a full 3×3 model replacing `accel_scale`",
                read: { (t, v, _) throws(ConfigError) in
                    guard let m = try t.doubles("accel_matrix", count: 9, in: -1.5...1.5) else { return v }
                    let mm = Matrix3(rowMajor: m)!
                    for (i, d) in [mm.r0.x, mm.r1.y, mm.r2.z].enumerated() where !(0.8...1.2).contains(d) {
                        throw t.error("accel_matrix", "diagonal element \(i) is \(d), outside 0.8…1.2")
                    }
                    return mm
                },
                render: { m in m.map { ["accel_matrix = \($0.rowMajor)"] } ?? [] }),
            .vector("gyro_bias", \.gyroBias, in: -35...35, "rad/s, subtracted from every sample"),
            // The neutral head pose: a unit quaternion [w, x, y, z]; off-unit means a damaged value.
            .custom(
                "neutral", \.neutral, type: "4 numbers, a unit quaternion", default: "unset",
                "the still look-ahead attitude `[w,x,y,z]` (`tiltd calibrate neutral`); the game's relative mode starts from it",
                read: { (t, v, _) throws(ConfigError) in
                    guard let q = try t.doubles("neutral", count: 4, in: -1.001...1.001) else { return v }
                    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).squareRoot()
                    if abs(n - 1) > 1e-3 {
                        throw t.error("neutral", "must be a unit quaternion [w, x, y, z], its norm is \(n)")
                    }
                    return Quaternion(w: q[0], x: q[1], y: q[2], z: q[3])
                },
                render: { q in q.map { ["neutral = [\($0.w), \($0.x), \($0.y), \($0.z)]"] } ?? [] }),
            // The head frame learnt from the calibration nod: two directions in the sensor frame.
            .optionalVector(
                "head_up", \.headUp, in: -1.001...1.001, default: "unset (the convention: +y up, +z back)",
                "the wearer's up while looking ahead, in the sensor frame, from the calibration nod (`tiltd calibrate neutral`); with `head_forward` (the two go together) the head frame both game vocabularies and modes use"
            ),
            .optionalVector(
                "head_forward", \.headForward, in: -1.001...1.001, default: "unset",
                "the direction the face points while looking ahead, at least 20° from `head_up`"),
            // The magnetometer's hard and soft iron (`tiltd calibrate mag`). Bounds: the largest
            // common magnetometer range (AK8963, ±4900 µT) for the offset; a soft-iron matrix of
            // determinant 1 whose elements stay within ±5 (a stronger distortion is a broken fit).
            .vector(
                "mag_offset", \.magOffset, in: -5000...5000,
                "µT, the magnetometer's hard-iron offset, subtracted from the field first (`tiltd calibrate mag`)"),
            .custom(
                "mag_matrix", \.magMatrix, type: "9 numbers -5–5, determinant > 0", default: "unset (identity)",
                "the magnetometer's soft-iron matrix (row-major), applied after `mag_offset`: `m = mag_matrix · (m_raw − mag_offset)` (`tiltd calibrate mag` writes a symmetric one of determinant 1)",
                read: { (t, v, _) throws(ConfigError) in
                    guard let m = try t.doubles("mag_matrix", count: 9, in: -5...5) else { return v }
                    let mm = Matrix3(rowMajor: m)!
                    if !(mm.determinant > 0.01) {
                        throw t.error("mag_matrix", "must have a positive determinant, it is \(mm.determinant)")
                    }
                    return mm
                },
                render: { m in m.map { ["mag_matrix = \($0.rowMajor)"] } ?? [] }),
        ]
    }

    /// The rules across the measurement keys, on the values in force.
    static func checkCalibration(_ t: inout TableReader, _ cal: IMUCalibration) throws(ConfigError) {
        if (cal.headUp == nil) != (cal.headForward == nil) {
            throw t.error(
                cal.headUp == nil ? "head_up" : "head_forward",
                "head_up and head_forward go together (tiltd calibrate neutral writes both)")
        }
        if cal.headUp != nil, cal.headFrame == nil {
            throw t.error("head_forward", "must be at least 20° from head_up (and both non-zero)")
        }
    }

    /// Reads the calibration keys of a `[calibration]` table over `base`.
    static func readCalibration(_ t: inout TableReader, into base: IMUCalibration) throws(ConfigError) -> IMUCalibration
    {
        var cal = base
        let ctx = ConfigContext(baseDir: "")
        for k in measurementKeys { try k.read(&t, &cal, ctx) }
        try checkCalibration(&t, cal)
        return cal
    }

    static var calibrationTable: ConfigTable {
        let file = ConfigKey<Configuration>.custom(
            "file", \.calibrationFile, type: "path", default: "`\"calibration.toml\"`",
            "the calibration file (written by `tiltd calibrate`). Its `[calibration]` values override the ones in the main file. Missing is fine.",
            read: { (t, v, _) throws(ConfigError) in try t.optionalString("file") ?? v },
            render: { f in f.map { ["file = \(TOMLText.quote($0))"] } ?? [] })
        return .table(
            "calibration", onReload: "the sampler restarts with the new device, rate or calibration",
            keys: [file] + measurementKeys.map { $0.lifted(\.calibration) }
                + BiasPersistence.keys.map { $0.lifted(\.biasPersistence) },
            check: { (t, c) throws(ConfigError) in try checkCalibration(&t, c.calibration) },
            after: { (c, ctx) throws(ConfigError) in
                let path = ctx.resolve(c.calibrationFile ?? defaultCalibrationFileName)
                // Absent is fine until `tiltd calibrate` writes it; remember where it goes either way.
                if FileManager.default.fileExists(atPath: path) {
                    c.calibration = try loadCalibration(path: path, over: c.calibration)
                }
                c.calibrationFile = path
            })
    }

    /// Loads a calibration file (a `[calibration]` table and nothing else) over `base`.
    public static func loadCalibration(
        path: String, over base: IMUCalibration = .none
    ) throws(ConfigError) -> IMUCalibration {
        let text: String
        do {
            text = try FileIO.readText(path)
        } catch {
            throw ConfigError(file: path, line: nil, key: "", message: error.reason)
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
}
