// SPDX-License-Identifier: Apache-2.0
import CLibIIO
import FoundationEssentials
import Glibc
import TiltPlatform

/// How an IIO device is read (`[imu] mode`).
public enum IIOReadMode: String, Sendable, CaseIterable {
    /// Buffered when the device has a buffer; polled when it has none, when its buffer needs a
    /// trigger it does not have, or when the buffer delivers nothing within a second.
    case auto
    /// Buffered only: a device without a buffer is an error, a silent buffer is reported (`no_data`).
    case buffered
    /// Polled only: `*_raw` attributes read at the rate, timestamped on CLOCK_MONOTONIC.
    case polled
}

/// The device needs a trigger to fill its buffer (it has `trigger/current_trigger`, empty) and
/// none of its own exists: the driver creates its data-ready trigger only when it has an
/// interrupt line.
struct IIOMissingTrigger: Error, CustomStringConvertible {
    let device: String
    var description: String {
        "\(device) has an empty current_trigger and no trigger of its own (is its interrupt line wired "
            + "and named in the overlay?), so its buffer cannot fill"
    }
}

/// The clock the kernel stamps a device's buffered scans with. It is `CLOCK_REALTIME` unless
/// `current_timestamp_clock` (Linux ≥ 4.10) says otherwise, and the wall clock steps (NTP at boot
/// on a Pi without an RTC): tiltd asks for `monotonic`, the clock polled samples use too.
enum IIOTimestampClock {
    /// The outcome for one device, in words for the status line.
    struct Outcome {
        /// True when scans are stamped on CLOCK_MONOTONIC.
        var monotonic: Bool
        var note: String
    }

    static let file = "current_timestamp_clock"

    /// Sets the device's timestamp clock to `monotonic` (before its buffer is enabled: the kernel
    /// refuses the change while it is). Never fails: what could not be done is in the note, and
    /// `SampleTimeline` smooths the steps of whatever clock remains.
    static func useMonotonic(_ ref: IIODeviceRef) -> Outcome {
        guard ref.hasAttribute(file) else {
            return Outcome(
                monotonic: false,
                note: "timestamps on the device's own clock (no \(file); "
                    + "CLOCK_REALTIME before Linux 4.10): steps are smoothed")
        }
        let before = ref.attribute(file).map(trim)
        if before == "monotonic" { return Outcome(monotonic: true, note: "timestamps CLOCK_MONOTONIC") }
        do {
            try ref.writeAttribute(file, "monotonic")
        } catch {
            return Outcome(
                monotonic: false,
                note: "timestamps CLOCK_\((before ?? "realtime").uppercased()): cannot set "
                    + "\(file) (\(error)); steps are smoothed")
        }
        let after = ref.attribute(file).map(trim)
        guard after == "monotonic" else {
            return Outcome(
                monotonic: false,
                note: "timestamps CLOCK_\((after ?? "realtime").uppercased()): "
                    + "\(file) did not take \"monotonic\"; steps are smoothed")
        }
        return Outcome(monotonic: true, note: "timestamps CLOCK_MONOTONIC (\(file) was \(before ?? "unset"))")
    }

    private static func trim(_ s: String) -> String { s.trimmingWhitespace() }
}

extension IIOConfiguredDevice {
    /// True when every channel the source reads has a `*_raw` attribute to poll.
    var isPollable: Bool {
        ((accel?.channels ?? []) + (gyro?.channels ?? [])).allSatisfy { IIOChannel.hasAttribute($0, "raw") }
    }
}
