// SPDX-License-Identifier: Apache-2.0
import CLibIIO
import FoundationEssentials
import Glibc
import Logging
import TiltCore
import TiltPlatform

/// One attempt at reading the magnetometer: a libiio context of its own (the IMU's session has
/// another, on another thread), the device `MagnetometerSelection` chose, its x, y, z channels with
/// their scales and its own mount matrix, and the rate it is polled at.
///
/// Magnetometers are polled (`in_magn_*_raw`): they run at 10–100 Hz, most have no buffer
/// (ak8975's raw read starts a one-shot measurement), and a poll every 10–100 ms costs little.
final class IIOMagnetometer {
    private let context: IIOContext
    let ref: IIODeviceRef
    let choice: MagnetometerSelection.Choice
    private let axes: IIOAxes
    /// The rate it is polled at, Hz.
    let rateHz: Double
    /// How the rate came about, for the status message.
    let rateNote: String
    /// The rate the chip was set to, Hz, when tiltd sets it (nil: the IMU's shared rate, or none).
    private(set) var chipRateHz: Double?

    /// Highest polling rate: more adds nothing to a heading that a gyroscope carries between samples.
    static let maximumRateHz = 100.0
    /// The rate for a device that says nothing about its own (ak8975 measures on each read).
    static let defaultRateHz = 50.0
    /// IIO reports magnetic fields in gauss; tiltd works in µT.
    static let microteslaPerGauss = 100.0

    /// Finds and configures the magnetometer; throws `MagnetometerSelection.Refusal` when there is
    /// none to use, `IIOError` when the device cannot be set up.
    init(spec: String, imuSpec: String, imuRateHz: Double, logger: Logger?) throws {
        do { context = try IIOContext(timeoutMs: 1000) } catch {
            // No IIO at all (no kernel support, no devices directory): for "auto" that is no
            // magnetometer, which is silent (the IMU's own status says what is wrong).
            if spec == "auto" { throw MagnetometerSelection.Refusal.noneFound }
            throw error
        }
        let refs = context.devices
        // The IMU's devices as its own session chooses them (the same rules, on this context).
        let imu = (try? IIODeviceSetup.choose(imuSpec, in: context).map(\.ref.id)) ?? []
        let described = refs.map(Self.describe)
        switch MagnetometerSelection.choose(spec, imu: imu, devices: described) {
        case .failure(let refusal): throw refusal
        case .success(let c):
            choice = c
            ref = refs.first { $0.id == c.device.id }!
        }
        // Its own matrix always: it turns the magnetometer's axes into the IMU's (the AK8963 inside
        // an MPU-9250 is mounted differently from the accelerometer). `[imu] mount_matrix` is
        // applied after, in the sampler's front end, exactly as for the accelerometer.
        axes = try IIODeviceSetup.axes("magn", of: ref, mountOverride: nil)
        (rateHz, rateNote, chipRateHz) = Self.chooseRate(
            ref, axes: axes, onIMU: choice.onIMU, imuRateHz: imuRateHz, logger: logger)
    }

    /// Sets the chip to the highest rate it offers, when tiltd sets its rate and that is higher
    /// than now; returns the rate it then runs at, or nil when nothing changed. For one-shot raw
    /// reads that wait for fresh data (st_magn sleeps two output periods per axis), a higher
    /// output rate is a shorter wait; the polling rate stays `rateHz`.
    func raiseChipRate(logger: Logger?) -> Double? {
        guard let now = chipRateHz, let top = IIODeviceSetup.offeredRates(ref, types: [axes]).max(), top > now
        else { return nil }
        let raised = Self.setChipRate(top, ref: ref, axes: axes, logger: logger)
        guard raised > now else { return nil }
        chipRateHz = raised
        return raised
    }

    /// "ak8975 (iio:device1)".
    var summary: String { choice.device.summary }

    /// One reading, µT in the IMU's sensor axes. A device busy with the IMU's buffer (inv_mpu6050
    /// refuses raw reads while buffered) says so, with what to do.
    func read() throws -> Vector3 {
        var raw: [Int64] = [0, 0, 0]
        for i in 0..<3 {
            let r = iio_channel_attr_read_longlong(axes.channels[i], "raw", &raw[i])
            if r == -EBUSY && choice.onIMU {
                throw IIOError(
                    "\(summary): its in_magn_*_raw cannot be read while the IMU's buffer runs (EBUSY); "
                        + "set [imu] mode = \"polled\" to read both by polling")
            }
            if r < 0 { throw IIOError.call("\(IIOChannel.id(axes.channels[i])) raw", Int(r)) }
        }
        return axes.vector(raw[0], raw[1], raw[2]) * Self.microteslaPerGauss
    }

    /// True while the device is still the one opened (its sysfs directory with the same name).
    func isPresent() -> Bool { IIOPresence.nameMatches(ref) }

    /// What the selection needs to know of a device: name, label, the physical device behind it.
    static func describe(_ ref: IIODeviceRef) -> MagnetometerSelection.Device {
        let label = ref.attribute("label")?.trimmingWhitespace()
        let physical = physicalDevice(of: ref.id)
        return MagnetometerSelection.Device(
            id: ref.id, name: ref.name, number: ref.number ?? .max, label: label,
            physical: physical, hasMagnetometer: ref.hasAxes("magn"), muxOwner: physical.flatMap(muxOwner(of:)))
    }

    /// The device owning the I²C mux adapter that `physical` (".../i2c-1/1-001e") sits on: the
    /// resolved `mux_device` link of the adapter's directory (i2c-mux makes it), nil when the bus
    /// is no mux adapter.
    static func muxOwner(of physical: String) -> String? {
        guard let slash = physical.lastIndex(of: "/") else { return nil }
        let link = "\(physical[..<slash])/mux_device"
        guard let real = realpath(link, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// The sysfs path of the device an IIO device hangs off (its link's target's parent), or nil
    /// when `/sys/bus/iio/devices/<id>` is not a link (a test tree): no bus to compare.
    static func physicalDevice(of id: String) -> String? {
        let path = "\(IIOPaths.sysfs)/\(id)"
        var buf = [CChar](repeating: 0, count: 4096)
        guard readlink(path, &buf, buf.count - 1) > 0, let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        let target = String(cString: real)
        guard let slash = target.lastIndex(of: "/") else { return nil }
        return String(target[..<slash])
    }

    /// The rate to poll at, how it was found, and the chip's rate when tiltd set it. A device of
    /// its own is set to the lowest rate it offers at or above the cap (min of 100 Hz and the IMU's
    /// rate), else its highest, and polled at the cap or the chip's rate when lower: a poll then
    /// finds fresh data, and a one-shot read that waits for a new sample (st_magn's, two output
    /// periods) waits as little as the cap allows. On the IMU's device, the shared
    /// `sampling_frequency` is the IMU's and is left alone (only an `in_magn_sampling_frequency`
    /// is set). Without any rate attribute: `defaultRateHz`.
    private static func chooseRate(
        _ ref: IIODeviceRef, axes: IIOAxes, onIMU: Bool, imuRateHz: Double, logger: Logger?
    ) -> (Double, String, Double?) {
        let cap = min(maximumRateHz, imuRateHz)
        let perType = IIOChannel.hasAttribute(axes.channels[0], "sampling_frequency")
        let writable = perType || (!onIMU && ref.hasAttribute("sampling_frequency"))
        let offered = IIODeviceSetup.offeredRates(ref, types: [axes])
        if writable {
            let target = offered.filter { $0 >= cap }.min() ?? offered.max() ?? cap
            let actual = setChipRate(target, ref: ref, axes: axes, logger: logger)
            let rate = min(actual > 0 ? actual : cap, cap)
            return (
                rate, "polled at \(IIOText.rateText(rate)) Hz (device set to \(IIOText.rateText(actual)) Hz)",
                actual > 0 ? actual : nil
            )
        }
        let own = ref.attribute("sampling_frequency").flatMap { Double($0.trimmingWhitespace()) }
        if let own, own > 0 {
            let rate = min(own, cap)
            return (
                rate, "polled at \(IIOText.rateText(rate)) Hz (the device runs at \(IIOText.rateText(own)) Hz)", nil
            )
        }
        let rate = min(defaultRateHz, cap)
        return (rate, "polled at \(IIOText.rateText(rate)) Hz (the device has no sampling_frequency)", nil)
    }

    /// Writes the magnetometer's own rate (`in_magn_sampling_frequency`, else the device's
    /// `sampling_frequency`) and returns what it reads back.
    private static func setChipRate(_ hz: Double, ref: IIODeviceRef, axes: IIOAxes, logger: Logger?) -> Double {
        let x = axes.channels[0]
        guard IIOChannel.hasAttribute(x, "sampling_frequency") else {
            return IIODeviceSetup.setRate(hz, on: ref, types: [], logger: logger)
        }
        do { try IIOChannel.writeAttribute(x, "sampling_frequency", IIOText.rateText(hz)) } catch {
            logger?.warning("cannot set the magnetometer's rate", metadata: ["error": "\(error)"])
        }
        return IIOChannel.attribute(x, "sampling_frequency").flatMap { Double($0.trimmingWhitespace()) } ?? hz
    }
}
