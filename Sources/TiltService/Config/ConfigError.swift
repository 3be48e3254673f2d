/// A configuration problem, located so a person can fix it: `file:line: key: message`.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public var file: String
    /// 1-based line, when known.
    public var line: Int?
    /// Dotted key path, e.g. `imu.rate_hz` or `geofence[2].radius_m`; empty for file-level errors.
    public var key: String
    public var message: String

    public init(file: String, line: Int?, key: String, message: String) {
        self.file = file; self.line = line; self.key = key; self.message = message
    }

    public var description: String {
        var s = file
        if let line { s += ":\(line)" }
        s += ": "
        if !key.isEmpty { s += "\(key): " }
        return s + message
    }
}
