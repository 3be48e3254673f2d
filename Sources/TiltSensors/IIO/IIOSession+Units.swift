import Logging
import TiltCore

/// Every sample leaves the session through `deliver`, which judges the accelerometer's unit at
/// its first rest (`IIOUnits`): a driver in g is corrected from then on and says so once, a unit
/// nothing explains ends the session with the reason.
///
/// The first window's samples (half a second) are held back until it is judged, so that the
/// estimator never starts from gravity in the wrong unit; a start in motion releases them as
/// they are once the window is full, and the watch goes on until a rest.
extension IIOSession {
    func deliver(_ sample: IMUSample, emit: @Sendable (SourceOutput) -> Void, logger: Logger?) {
        delivered += 1
        guard accelUnitWatch != nil, let device = devices.first(where: { $0.accel != nil }) else {
            emit(.sample(sample))
            return
        }
        let verdict = accelUnitWatch!.add(
            accel: sample.accel, gyro: sample.hasGyro ? sample.gyro : nil, driver: device.ref.name)
        let holding = delivered <= accelUnitWatch!.windowSize
        guard let verdict else {
            if holding { heldSamples.append(sample) } else { release(emit: emit) }
            if !holding { emit(.sample(sample)) }
            return
        }
        accelUnitWatch = nil
        heldSamples.append(sample)
        switch verdict {
        case .plausible: break
        case .corrected(let c):
            // The device object is shared with its reader: later reads use the corrected scale.
            device.accel = device.accel?.scaled(by: c.factor)
            device.unitNotes.append(c.note)
            for i in heldSamples.indices { heldSamples[i].accel = heldSamples[i].accel * c.factor }
            if IIOUnits.firstTime(c.note) { logger?.warning("\(c.note)", metadata: ["device": "\(device.ref.id)"]) }
            emit(.status(status(.streaming)))
        case .refused(let why):
            unitRefusal = why
            heldSamples.removeAll()  // never streamed in a unit nothing explains
        }
        release(emit: emit)
    }

    /// Emits the samples held back, oldest first.
    private func release(emit: @Sendable (SourceOutput) -> Void) {
        for s in heldSamples { emit(.sample(s)) }
        heldSamples.removeAll()
    }
}
