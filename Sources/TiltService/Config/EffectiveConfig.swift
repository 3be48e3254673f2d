import TiltCore

/// Renders the effective configuration as TOML (for `tiltd check-config`). Each section is
/// rendered by the file that owns it (the components, and `Configuration` for the rest).
public enum EffectiveConfig {
    /// The whole configuration, every key with its value in force.
    public static func render(_ c: Configuration) -> String {
        var out = "# effective configuration" + (c.sourceFile.map { " of \($0)" } ?? "") + "\n"
        out += c.imuTOML
        out += "\n[calibration]\n"
        if let f = c.calibrationFile { out += "file = \(TOMLText.quote(f))\n" }
        out +=
            "accel_offset = \(TOMLText.vector(c.calibration.accelOffset))\naccel_scale = \(TOMLText.vector(c.calibration.accelScale))\n"
        if let m = c.calibration.accelMatrix { out += "accel_matrix = \(m.rowMajor)\n" }
        out += "gyro_bias = \(TOMLText.vector(c.calibration.gyroBias))\n"
        if let n = c.calibration.neutral { out += "neutral = [\(n.w), \(n.x), \(n.y), \(n.z)]\n" }
        out += "persist_gyro_bias = \(c.biasPersistence.enabled)\npersist_after_s = \(c.biasPersistence.afterSeconds)\n"
        out += "persist_interval_min = \(c.biasPersistence.intervalMinutes)\n"
        out += "\n" + c.socketTOML
        out += "\n" + c.gameTOML
        out += "\n" + c.placesTOML
        out += "\n" + c.questsTOML
        out += "\n" + c.creditsTOML
        out += "\n[store]\npath = \(TOMLText.quote(c.store.path))\n"
        out += "\n" + c.gpsTOML
        out += "\n" + c.webTOML
        if !c.mqttTOML.isEmpty { out += "\n" + c.mqttTOML }
        out += "\n[log]\nlevel = \(TOMLText.quote(c.logLevel))\n"
        return out
    }
}

/// TOML value spellings for the renderers.
enum TOMLText {
    /// A TOML basic string (JSON's escaping is a subset TOML accepts).
    static func quote(_ s: String) -> String { JSONValue.string(s).jsonText }
    /// A 3-vector as an array of numbers.
    static func vector(_ v: Vector3) -> String { "[\(v.x), \(v.y), \(v.z)]" }
}
