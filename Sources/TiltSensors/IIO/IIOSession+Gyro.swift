// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Logging
import TiltCore

/// Degrade, don't stop: a gyroscope that cannot be read while its accelerometer can (a split
/// gyro device unbound or unplugged, a combined chip whose gyro registers fail) leaves tilt from
/// the accelerometer, as an accelerometer-only board has, instead of retrying the whole IMU; the
/// status says so, and 6-axis attitude comes back with the gyroscope's first good read.
extension IIOSession {
    /// The status message's note while the gyroscope is out.
    static func gyroFaultNote(_ why: String) -> String {
        "gyroscope unreadable (\(why)): tilt from the accelerometer only until it reads again"
    }

    /// Records one read's gyroscope outcome (`error` nil: it was read); says so on each change.
    func noteGyro(_ error: String?, emit: @Sendable (SourceOutput) -> Void, logger: Logger?) {
        switch (gyroFault, error) {
        case (nil, let why?):
            gyroFault = why
            logger?.warning(
                "gyroscope unreadable: tilt from the accelerometer only",
                metadata: ["device": "\(deviceSummary)", "error": "\(why)"])
            emit(.status(status(.streaming)))
        case (_?, nil):
            gyroFault = nil
            logger?.notice("gyroscope back: 6-axis attitude", metadata: ["device": "\(deviceSummary)"])
            emit(.status(status(.streaming)))
        default: break
        }
    }

    /// An `auto` session that found no gyroscope (a split gyro device gone when it started) starts
    /// again, at once and without a retry's backoff, when one appears: 6-axis attitude is back.
    /// Called about once a second; looks at sysfs, not at the session's libiio snapshot.
    /// Likewise a split gyro device that went and is back: buffered, its buffer must be opened
    /// again; polled, it may have come back as another device (its reads would fail for good).
    func watchForGyro() throws {
        let missing = !hasGyro && configuration.device == "auto"
        let splitGyroGone = polled.contains { $0.device.accel == nil && $0.device.gyro != nil && !$0.isPresent() }
        let gone = gyroFault != nil && (polled.isEmpty || splitGyroGone)
        guard missing || gone, IIOPresence.anyGyroscope() else { return }
        throw IIOSessionRestart(reason: "a gyroscope appeared beside \(deviceSummary): 6-axis attitude again")
    }
}

/// The session should be made again at once (not an error: no backoff, no `retrying` status).
struct IIOSessionRestart: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

extension IIOPresence {
    /// True when some IIO device has a gyroscope's x channel (polled or in its scan elements).
    static func anyGyroscope() -> Bool {
        let fm = FileManager.default
        let entries = (try? fm.contentsOfDirectory(atPath: IIOPaths.sysfs)) ?? []
        return entries.contains { e in
            e.hasPrefix("iio:device")
                && (fm.fileExists(atPath: "\(IIOPaths.sysfs)/\(e)/in_anglvel_x_raw")
                    || fm.fileExists(atPath: "\(IIOPaths.sysfs)/\(e)/scan_elements/in_anglvel_x_en"))
        }
    }
}
