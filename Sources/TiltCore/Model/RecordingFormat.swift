// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol

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
///
/// Version 2 adds a magnetometer: the header gains `mx,my,mz` (µT, the IMU's sensor axes, after
/// the magnetometer's own mount matrix, before calibration), filled on the row of the first IMU
/// sample at or after each magnetometer sample (so the field is replayed at that row's time) and
/// absent on the others, which keep their seven fields:
///
/// ```
/// # tiltd recording v2: t_ns = sensor clock (ns), accel m/s², gyro rad/s, sensor frame; mx,my,mz µT where a magnetometer sample falls
/// t_ns,ax,ay,az,gx,gy,gz,mx,my,mz
/// 1000000000,0.0123,9.8061,0.0410,0.00120,-0.00090,0.00210,21.52,3.07,-40.11
/// 1016666667,0.0121,9.8063,0.0408,0.00110,-0.00080,0.00200
/// ```
/// A v1 file reads exactly as before; a row with ten fields whose last three are empty has no field.
public enum RecordingFormat {
    /// The CSV header row of a recording without a magnetometer (v1).
    public static let header = "t_ns,ax,ay,az,gx,gy,gz"
    /// The comment line a v1 recording starts with.
    public static let banner = "# tiltd recording v1: t_ns = sensor clock (ns), accel m/s², gyro rad/s, sensor frame"
    /// The CSV header row of a recording with a magnetometer (v2).
    public static let headerV2 = "t_ns,ax,ay,az,gx,gy,gz,mx,my,mz"
    /// The comment line a v2 recording starts with.
    public static let bannerV2 =
        "# tiltd recording v2: t_ns = sensor clock (ns), accel m/s², gyro rad/s, sensor frame; "
        + "mx,my,mz µT where a magnetometer sample falls"

    /// A row that is not a sample.
    public struct LineError: Error, Equatable, CustomStringConvertible {
        /// What is wrong with the row.
        public var message: String
        /// Same as `message`.
        public var description: String { message }
    }

    /// One row: an IMU sample, and the magnetometer's field when one fell on it.
    public struct Row: Sendable, Equatable {
        /// The IMU sample.
        public var sample: IMUSample
        /// The field, µT (v2), or nil.
        public var field: Vector3?

        /// A row.
        public init(sample: IMUSample, field: Vector3? = nil) { self.sample = sample; self.field = field }
    }

    /// Parses one row; nil for comments, blank lines and the header. A field on the row is dropped
    /// (see `parseRow` to keep it).
    public static func parse(line: Substring) throws(LineError) -> IMUSample? {
        try parseRow(line: line)?.sample
    }

    /// Parses one row of either version; nil for comments, blank lines and the header.
    public static func parseRow(line: Substring) throws(LineError) -> Row? {
        let l = line.trimmingPrefixWhitespace
        if l.isEmpty || l.hasPrefix("#") || l.hasPrefix("t_ns") { return nil }
        let f = l.split(separator: ",", omittingEmptySubsequences: false)
        guard f.count == 7 || f.count == 10 else {
            throw LineError(message: "expected 7 fields (\(header)) or 10 (\(headerV2)), got \(f.count)")
        }
        guard let t = Int64(f[0].trimmingWhitespace) else {
            throw LineError(message: "t_ns is not an integer: \(f[0].prefix(32))")
        }
        // An accelerometer-only device leaves the three gyro fields empty.
        let accelOnly = f[4...6].allSatisfy { $0.trimmingWhitespace.isEmpty }
        var v = [Double](repeating: 0, count: 6)
        for i in 0..<(accelOnly ? 3 : 6) {
            v[i] = try number(f[i + 1], field: i + 2)
        }
        let sample =
            accelOnly
            ? IMUSample(t: t, accelOnly: Vector3(v[0], v[1], v[2]))
            : IMUSample(t: t, accel: Vector3(v[0], v[1], v[2]), gyro: Vector3(v[3], v[4], v[5]))
        guard f.count == 10, !f[7...9].allSatisfy({ $0.trimmingWhitespace.isEmpty }) else { return Row(sample: sample) }
        let m = Vector3(try number(f[7], field: 8), try number(f[8], field: 9), try number(f[9], field: 10))
        return Row(sample: sample, field: m)
    }

    private static func number(_ s: Substring, field: Int) throws(LineError) -> Double {
        guard let d = Double(s.trimmingWhitespace), d.isFinite else {
            throw LineError(message: "field \(field) is not a number: \(s.prefix(32))")
        }
        return d
    }

    /// Formats one row of an IMU sample alone (without newline): seven fields, as in v1.
    public static func format(_ s: IMUSample) -> String { format(s, field: nil) }

    /// Formats one row (without newline): seven fields, or ten with a field (µT, 4 decimals).
    public static func format(_ s: IMUSample, field: Vector3?) -> String {
        // One writer for the row: outside a JSON container it writes the numbers bare, and the
        // commas go in as raw bytes.
        var w = JSONWriter(capacity: 128)
        w.int(s.t)
        let comma = UInt8(ascii: ",")
        w.appendRaw(comma); w.double(s.accel.x, digits: 5)
        w.appendRaw(comma); w.double(s.accel.y, digits: 5)
        w.appendRaw(comma); w.double(s.accel.z, digits: 5)
        if s.hasGyro {
            w.appendRaw(comma); w.double(s.gyro.x, digits: 6)
            w.appendRaw(comma); w.double(s.gyro.y, digits: 6)
            w.appendRaw(comma); w.double(s.gyro.z, digits: 6)
        }
        guard let field else { return s.hasGyro ? w.text : w.text + ",,," }
        if !s.hasGyro { w.appendRaw(comma); w.appendRaw(comma); w.appendRaw(comma) }
        w.appendRaw(comma); w.double(field.x, digits: 4)
        w.appendRaw(comma); w.double(field.y, digits: 4)
        w.appendRaw(comma); w.double(field.z, digits: 4)
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
