/// tiltd's recording format: CSV, one IMU sample per row, SI units, as the source delivered
/// them (before the user's calibration, so a recording can be calibrated later).
///
/// ```
/// # tiltd recording v1: t_ns = sensor clock (ns), accel m/s², gyro rad/s, sensor frame
/// t_ns,ax,ay,az,gx,gy,gz
/// 1000000000,0.0123,9.8061,0.0410,0.00120,-0.00090,0.00210
/// ```
/// Lines starting with `#` are comments; blank lines are ignored. A device with no gyroscope
/// leaves `gx,gy,gz` empty (`1000000000,0.0123,9.8061,0.0410,,,`).
public enum RecordingFormat {
    /// The CSV header row.
    public static let header = "t_ns,ax,ay,az,gx,gy,gz"
    /// The comment line a recording starts with.
    public static let banner = "# tiltd recording v1: t_ns = sensor clock (ns), accel m/s², gyro rad/s, sensor frame"

    /// A row that is not a sample.
    public struct LineError: Error, Equatable, CustomStringConvertible {
        /// What is wrong with the row.
        public var message: String
        /// Same as `message`.
        public var description: String { message }
    }

    /// Parses one row; nil for comments, blank lines and the header.
    public static func parse(line: Substring) throws(LineError) -> IMUSample? {
        let l = line.trimmingPrefixWhitespace
        if l.isEmpty || l.hasPrefix("#") || l.hasPrefix("t_ns") { return nil }
        let f = l.split(separator: ",", omittingEmptySubsequences: false)
        guard f.count == 7 else { throw LineError(message: "expected 7 fields (\(header)), got \(f.count)") }
        guard let t = Int64(f[0].trimmingWhitespace) else {
            throw LineError(message: "t_ns is not an integer: \(f[0].prefix(32))")
        }
        // An accelerometer-only device leaves the three gyro fields empty.
        let accelOnly = f[4...6].allSatisfy { $0.trimmingWhitespace.isEmpty }
        var v = [Double](repeating: 0, count: 6)
        for i in 0..<(accelOnly ? 3 : 6) {
            guard let d = Double(f[i + 1].trimmingWhitespace), d.isFinite else {
                throw LineError(message: "field \(i + 2) is not a number: \(f[i + 1].prefix(32))")
            }
            v[i] = d
        }
        if accelOnly { return IMUSample(t: t, accelOnly: Vector3(v[0], v[1], v[2])) }
        return IMUSample(t: t, accel: Vector3(v[0], v[1], v[2]), gyro: Vector3(v[3], v[4], v[5]))
    }

    /// Formats one row (without newline).
    public static func format(_ s: IMUSample) -> String {
        // One writer for the row: outside a JSON container it writes the numbers bare, and the
        // commas go in as raw bytes.
        var w = JSONWriter(capacity: 96)
        w.int(s.t)
        let comma = UInt8(ascii: ",")
        w.appendRaw(comma); w.double(s.accel.x, digits: 5)
        w.appendRaw(comma); w.double(s.accel.y, digits: 5)
        w.appendRaw(comma); w.double(s.accel.z, digits: 5)
        guard s.hasGyro else { return w.text + ",,," }
        w.appendRaw(comma); w.double(s.gyro.x, digits: 6)
        w.appendRaw(comma); w.double(s.gyro.y, digits: 6)
        w.appendRaw(comma); w.double(s.gyro.z, digits: 6)
        return w.text
    }
}

extension Substring {
    var trimmingPrefixWhitespace: Substring { drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }) }
    var trimmingWhitespace: Substring {
        var s = trimmingPrefixWhitespace
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return s
    }
}
