import TiltCore

/// One JSON line from the daemon: its text as sent (forwarded to browsers unchanged, so the
/// browser sees the daemon's own wire format) and its parsed value (read by the web process).
public struct DaemonLine: Sendable {
    /// The line without its newline.
    public let text: String
    /// The parsed line (always a JSON object).
    public let value: JSONValue

    /// The line parsed from `text`; nil unless it is a JSON object.
    public init?(text: String) {
        guard let v = try? JSONParser.parse(text), v.objectValue != nil else { return nil }
        self.text = text
        self.value = v
    }

    /// `class` of the line (`hello`, `attitude`, `game`, `reply`, …).
    public var cls: String { value["class"]?.stringValue ?? "" }
    /// `seq` of the line (the daemon's sequence number), when it has one.
    public var seq: Int64? { value["seq"]?.intValue }
}

/// Encodes a JSON value as compact text (the daemon's own writer, so numbers look the same).
public func jsonText(_ v: JSONValue) -> String {
    var w = JSONWriter(capacity: 128)
    w.value(v)
    return w.text
}
