import TiltCore

/// Renders the effective configuration as TOML (for `tiltd check-config`).
public enum EffectiveConfig {
    public static func render(_ c: Configuration) -> String {
        func v(_ x: Vector3) -> String { "[\(x.x), \(x.y), \(x.z)]" }
        func q(_ s: String) -> String { JSONValue.string(s).jsonText }
        var out = "# effective configuration" + (c.sourceFile.map { " of \($0)" } ?? "") + "\n"
        out += "[imu]\ndevice = \(q(c.imu.device))\nrate_hz = \(c.imu.rateHz)\n"
        if let m = c.imu.mountMatrix { out += "mount_matrix = \(m.rowMajor)\n" }
        if let b = c.imu.bufferSamples { out += "buffer_samples = \(b)\n" }
        out += "\n[calibration]\n"
        if let f = c.calibrationFile { out += "file = \(q(f))\n" }
        out += "accel_offset = \(v(c.calibration.accelOffset))\naccel_scale = \(v(c.calibration.accelScale))\n"
        if let m = c.calibration.accelMatrix { out += "accel_matrix = \(m.rowMajor)\n" }
        out += "gyro_bias = \(v(c.calibration.gyroBias))\n"
        out += "\n[socket]\npath = \(q(c.socket.path))\nmode = \(q("0" + String(c.socket.mode, radix: 8)))\n"
        if let g = c.socket.group { out += "group = \(q(g))\n" }
        out += "trusted_uids = \(c.socket.trustedUIDs)\ntrusted_gids = \(c.socket.trustedGIDs)\n"
        out += "attitude_hz = \(c.socket.attitudeHz)\nqueue_lines = \(c.socket.queueLines)\n"
        out += "max_line_bytes = \(c.socket.maxLineBytes)\nmax_bad_lines = \(c.socket.maxBadLines)\n"
        out += "\n[store]\npath = \(q(c.store.path))\n"
        out += "\n[gps]\nenabled = \(c.gps.enabled)\nserver = \(q("\(c.gps.host):\(c.gps.port)"))\n"
        out += "\n[log]\nlevel = \(q(c.logLevel))\n"
        return out
    }
}
