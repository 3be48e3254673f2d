// SPDX-License-Identifier: Apache-2.0
import Logging
import TiltCore

/// Every sample leaves the session through `deliver`, which judges the accelerometer's unit at
/// its first rest (`IIOUnits`): a driver in g is corrected from then on and says so once, a unit
/// nothing explains ends the session with the reason.
///
/// The samples before the verdict (half a second at most, at rest) went out in the driver's
/// unit: the status that says so also restarts the estimator (`SourceStatus.restartsFusion`),
/// so that no state from them stays. (Holding them back instead withheld the first samples from
/// a client until a window was full.)
extension IIOSession {
    func deliver(_ sample: IMUSample, emit: @Sendable (SourceOutput) -> Void, logger: Logger?) {
        emit(.sample(sample))
        delivered += 1
        guard accelUnitWatch != nil, let device = devices.first(where: { $0.accel != nil }) else { return }
        let verdict = accelUnitWatch!.add(
            accel: sample.accel, gyro: sample.hasGyro ? sample.gyro : nil, driver: device.ref.name)
        guard let verdict else { return }
        accelUnitWatch = nil
        switch verdict {
        case .plausible: break
        case .corrected(let c):
            // The device object is shared with its reader: later reads use the corrected scale.
            device.accel = device.accel?.scaled(by: c.factor)
            device.unitNotes.append(c.note)
            if IIOUnits.firstTime(c.note) { logger?.warning("\(c.note)", metadata: ["device": "\(device.ref.id)"]) }
            var st = status(.streaming)
            st.restartsFusion = true
            emit(.status(st))
        case .refused(let why): unitRefusal = why
        }
    }
}
