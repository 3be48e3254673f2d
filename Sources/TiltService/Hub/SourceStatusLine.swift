// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol
import TiltSensors

extension SourceStatus {
    /// This status as a `status` line's fields (see `Event.statusFields`).
    public var fields: JSONObject {
        var o = Event.statusFields(
            source: source, state: state.rawValue, message: message, device: device,
            rateHz: rateHz, retryIn: retryIn)
        // An IMU says whether it has a gyroscope (false: tilt from the accelerometer only).
        if let g = hasGyroscope { o["gyroscope"] = .bool(g) }
        return o
    }

    /// This status as a `status` line.
    public var event: Event { Event(.status, t: nil, fields: fields) }
}
