import TiltCore
import TiltSensors

extension SourceStatus {
    /// This status as a `status` line's fields (see `Event.statusFields`).
    public var fields: JSONObject {
        Event.statusFields(source: source, state: state.rawValue, message: message, device: device, rateHz: rateHz, retryIn: retryIn)
    }

    /// This status as a `status` line.
    public var event: Event { Event(.status, t: nil, fields: fields) }
}
