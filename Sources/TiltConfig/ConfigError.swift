// SPDX-License-Identifier: Apache-2.0
/// A configuration problem, located so a person can fix it: `file:line: key: message`.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    /// The file the problem is in.
    public var file: String
    /// 1-based line, when known.
    public var line: Int?
    /// Dotted key path, e.g. `imu.rate_hz` or `geofence[2].radius_m`; empty for file-level errors.
    public var key: String
    /// What is wrong and what is expected, for people.
    public var message: String

    /// An error at `file:line` about `key`.
    public init(file: String, line: Int?, key: String, message: String) {
        self.file = file; self.line = line; self.key = key; self.message = message
    }

    /// `file:line: key: message`, the form editors and `grep -n` understand.
    public var description: String {
        var s = file
        if let line { s += ":\(line)" }
        s += ": "
        if !key.isEmpty { s += "\(key): " }
        return s + message
    }
}
