// SPDX-License-Identifier: Apache-2.0
import CLibIIO
import FoundationEssentials
import Glibc
import Logging
import TiltCore
import TiltPlatform

/// The accel or gyro half of an IMU on one device: its x, y, z channels and how to turn their
/// integers into SI units in the mounted frame.
struct IIOAxes {
    /// "accel" or "anglvel".
    let type: String
    /// x, y, z channels.
    let channels: [OpaquePointer]
    private(set) var scales: [IIOChannelScale]
    /// Sensor frame → the frame tiltd reports (the device's mount matrix or the config's override).
    let mount: Matrix3

    /// SI vector (m/s² or rad/s) in the mounted frame from the three raw values.
    @inline(__always)
    func vector(_ x: Int64, _ y: Int64, _ z: Int64) -> Vector3 {
        mount * Vector3(scales[0].si(x), scales[1].si(y), scales[2].si(z))
    }

    /// The same axes with every scale multiplied by `factor` (a driver's unit put right).
    func scaled(by factor: Double) -> IIOAxes {
        var a = self
        a.scales = scales.map { IIOChannelScale(scale: $0.scale * factor, offset: $0.offset) }
        return a
    }

    /// Significant bits of the values (the scan type's; 16, the common width, for a channel
    /// that is no scan element).
    var bits: Int {
        iio_channel_is_scan_element(channels[0]) ? IIOChannel.format(channels[0]).bits : 16
    }
}

/// One IIO device as the source uses it: which halves it provides, its timestamp channel and the
/// rate it was set to.
final class IIOConfiguredDevice {
    let ref: IIODeviceRef
    /// Variable: a unit mistake found at rest is corrected in place (`IIOUnits`).
    var accel: IIOAxes?
    let gyro: IIOAxes?
    let timestamp: OpaquePointer?
    /// The sampling rate now configured on the device (read back after writing), Hz.
    let rateHz: Double
    /// Unit mistakes of the driver that were corrected, for the status message.
    var unitNotes: [String]

    init(
        ref: IIODeviceRef, accel: IIOAxes?, gyro: IIOAxes?, timestamp: OpaquePointer?, rateHz: Double,
        unitNotes: [String] = []
    ) {
        self.ref = ref; self.accel = accel; self.gyro = gyro; self.timestamp = timestamp; self.rateHz = rateHz
        self.unitNotes = unitNotes
    }

    /// "mpu6050 (iio:device0)".
    var summary: String { "\(ref.name) (\(ref.id))" }

    /// True when every channel the source reads can go through a buffer and the kernel exposes
    /// one (a `buffer/` directory); false means the device must be polled.
    var isBufferCapable: Bool {
        let used = (accel?.channels ?? []) + (gyro?.channels ?? [])
        return ref.hasBufferDirectory && used.allSatisfy { iio_channel_is_scan_element($0) }
    }
}

/// Finding and configuring the IMU device(s) in a context.
enum IIODeviceSetup {
    /// A device chosen for the IMU and the halves it must provide.
    struct Choice {
        let ref: IIODeviceRef
        let accel: Bool
        let gyro: Bool
    }

    /// Finds the device(s) named by the config: "auto", a name or id ("mpu6050", "iio:device0"),
    /// or "accelName+gyroName" for split devices.
    static func choose(_ spec: String, in ctx: IIOContext) throws -> [Choice] {
        let devices = ctx.devices.sorted { ($0.number ?? .max) < ($1.number ?? .max) }
        let inventory =
            devices.isEmpty
            ? "no IIO devices present"
            : "present: " + devices.map { "\($0.name) (\($0.id))" }.joined(separator: ", ")
        func named(_ n: String) -> IIODeviceRef? {
            devices.first { $0.name == n } ?? devices.first { $0.id == n }
        }

        if spec == "auto" {
            if let both = devices.first(where: { $0.hasAxes("accel") && $0.hasAxes("anglvel") }) {
                return [Choice(ref: both, accel: true, gyro: true)]
            }
            let accels = devices.filter { $0.hasAxes("accel") }
            let gyros = devices.filter { $0.hasAxes("anglvel") }
            // Split chips name their halves alike ("lsm6dsm_accel" + "lsm6dsm_gyro"): prefer the
            // pair sharing the longest name prefix, then the lowest device numbers.
            var best: (IIODeviceRef, IIODeviceRef, Int)?
            for a in accels {
                for g in gyros where g.id != a.id {
                    let common = zip(a.name, g.name).prefix { $0 == $1 }.count
                    if best == nil || common > best!.2 { best = (a, g, common) }
                }
            }
            if let (a, g, _) = best {
                return [Choice(ref: a, accel: true, gyro: false), Choice(ref: g, accel: false, gyro: true)]
            }
            // No gyroscope anywhere (an ADXL345, an accel-only HID sensor): tilt from the
            // accelerometer alone is still enough for attitude's roll/pitch and the tilt game.
            guard let a = accels.first else {
                throw IIOError("no IIO device with accel channels (\(inventory))")
            }
            return [Choice(ref: a, accel: true, gyro: false)]
        }

        let names = spec.split(separator: "+", omittingEmptySubsequences: false)
            .map { $0.trimmingWhitespace(newlines: false) }
        if names.count == 2 {
            guard let a = named(names[0]) else { throw IIOError("no IIO device named \"\(names[0])\" (\(inventory))") }
            guard let g = named(names[1]) else { throw IIOError("no IIO device named \"\(names[1])\" (\(inventory))") }
            guard a.hasAxes("accel") else { throw IIOError("\(a.name) (\(a.id)) has no accel x/y/z channels") }
            guard g.hasAxes("anglvel") else { throw IIOError("\(g.name) (\(g.id)) has no anglvel x/y/z channels") }
            return [Choice(ref: a, accel: true, gyro: false), Choice(ref: g, accel: false, gyro: true)]
        }
        guard names.count == 1, let d = named(names[0]) else {
            throw IIOError("no IIO device named \"\(spec)\" (\(inventory))")
        }
        guard d.hasAxes("accel") else {
            throw IIOError(
                "\(d.name) (\(d.id)) has no accel x/y/z channels; "
                    + "for split devices name both as \"accel+gyro\"")
        }
        // A device with no gyroscope is used for tilt alone (its status says so).
        return [Choice(ref: d, accel: true, gyro: d.hasAxes("anglvel"))]
    }

    /// Reads scales, offsets and the mount matrix, sets the sampling rate, and returns the device
    /// ready for a buffer or for polling.
    static func configure(
        _ choice: Choice, rateHz: Double, mountOverride: Matrix3?,
        logger: Logger?
    ) throws -> IIOConfiguredDevice {
        let ref = choice.ref
        let accel = choice.accel ? try axes("accel", of: ref, mountOverride: mountOverride) : nil
        var gyro = choice.gyro ? try axes("anglvel", of: ref, mountOverride: mountOverride) : nil
        var notes: [String] = []
        if let g = gyro {
            switch IIOUnits.judgeGyro(scale: g.scales[0].scale, bits: g.bits, driver: ref.name) {
            case .plausible: break
            case .corrected(let c):
                gyro = g.scaled(by: c.factor)
                notes.append(c.note)
                if IIOUnits.firstTime(c.note) { logger?.warning("\(c.note)", metadata: ["device": "\(ref.id)"]) }
            case .refused(let why): throw IIOError(why)
            }
        }
        let actual = setRate(rateHz, on: ref, types: [accel, gyro].compactMap { $0 }, logger: logger)
        return IIOConfiguredDevice(
            ref: ref, accel: accel, gyro: gyro, timestamp: ref.channel("timestamp"),
            rateHz: actual, unitNotes: notes)
    }

    static func axes(_ type: String, of ref: IIODeviceRef, mountOverride: Matrix3?) throws -> IIOAxes {
        let channels = try ["x", "y", "z"].map { axis -> OpaquePointer in
            guard let c = ref.channel("\(type)_\(axis)") else {
                throw IIOError("\(ref.id): no \(type)_\(axis) channel")
            }
            return c
        }
        let scales = try channels.map { c -> IIOChannelScale in
            // No scale attribute means the raw value is already in SI units (rare, but allowed).
            let scaleText = try IIOChannel.readAttribute(c, "scale") ?? "1"
            guard let scale = Double(scaleText.trimmingWhitespace()), scale.isFinite else {
                throw IIOError("\(ref.id): \(IIOChannel.id(c)) scale \"\(scaleText)\" is not a number")
            }
            let offsetText = try IIOChannel.readAttribute(c, "offset") ?? "0"
            guard let offset = Double(offsetText.trimmingWhitespace()), offset.isFinite
            else {
                throw IIOError("\(ref.id): \(IIOChannel.id(c)) offset \"\(offsetText)\" is not a number")
            }
            return IIOChannelScale(scale: scale, offset: offset)
        }
        return IIOAxes(
            type: type, channels: channels, scales: scales,
            mount: try mountOverride ?? mountMatrix(type, of: ref, x: channels[0]))
    }

    /// The device's mount matrix for a channel type: `in_<type>_mount_matrix`, else the device's
    /// `mount_matrix`, else `in_mount_matrix`, else identity. libiio shows the first as a channel
    /// attribute, the second as a device attribute and the third as attribute "matrix" of a
    /// pseudo-channel "mount".
    private static func mountMatrix(_ type: String, of ref: IIODeviceRef, x: OpaquePointer) throws -> Matrix3 {
        let sources: [(String, String?)] = [
            ("in_\(type)_mount_matrix", IIOChannel.attribute(x, "mount_matrix")),
            ("mount_matrix", ref.attribute("mount_matrix")),
            ("in_mount_matrix", ref.channel("mount").flatMap { IIOChannel.attribute($0, "matrix") }),
        ]
        guard let (file, text) = sources.first(where: { $0.1 != nil }) else { return .identity }
        guard let m = IIOText.mountMatrix(text!) else {
            throw IIOError("\(ref.id): \(file) \"\(text!)\" is not a 3×3 matrix \"x1, y1, z1; x2, y2, z2; x3, y3, z3\"")
        }
        return m
    }

    /// Sets `sampling_frequency` (device-level, else per channel type) to the offered rate
    /// nearest the requested one (`offeredRateList`); the requested rate is written only to a
    /// driver that lists no rates at all (adxl345 before 6.1, HID sensors: they take any value and
    /// round it). Returns the rate the device reports afterwards (the request when the device has
    /// no such attribute). A refused write is logged, not fatal: the device still streams at its
    /// own rate.
    static func setRate(_ requested: Double, on ref: IIODeviceRef, types: [IIOAxes], logger: Logger?) -> Double {
        func choose(_ axes: IIOAxes?) -> String {
            offeredRateList(ref, for: axes).flatMap { IIOText.nearestRate(to: requested, available: $0)?.text }
                ?? IIOText.rateText(requested)
        }
        if ref.hasAttribute("sampling_frequency") {
            let value = choose(nil)
            do { try ref.writeAttribute("sampling_frequency", value) } catch {
                logger?.warning("cannot set the sampling rate", metadata: ["error": "\(error)", "rate": "\(value)"])
            }
            return ref.attribute("sampling_frequency").flatMap {
                Double($0.trimmingWhitespace())
            } ?? requested
        }
        var rates: [Double] = []
        for axes in types {
            let x = axes.channels[0]
            guard IIOChannel.hasAttribute(x, "sampling_frequency") else { continue }
            let value = choose(axes)
            do { try IIOChannel.writeAttribute(x, "sampling_frequency", value) } catch {
                logger?.warning("cannot set the sampling rate", metadata: ["error": "\(error)", "rate": "\(value)"])
            }
            if let r = IIOChannel.attribute(x, "sampling_frequency").flatMap({
                Double($0.trimmingWhitespace())
            }) {
                rates.append(r)
            }
        }
        return rates.min() ?? requested
    }

    /// The text of the rates a driver offers, wherever it lists them: for a channel type
    /// (`axes`), `in_<type>_sampling_frequency_available`, else the device's
    /// `sampling_frequency_available` (fxas21002c, bmc150_accel, bmg160, mma8452 and adxl345 list
    /// their rates once for the device though the rate itself is per type); for the device
    /// (`axes` nil), the other way round. Nil when it lists none.
    static func offeredRateList(_ ref: IIODeviceRef, for axes: IIOAxes?) -> String? {
        let typeList = axes.flatMap { IIOChannel.attribute($0.channels[0], "sampling_frequency_available") }
        let deviceList = ref.attribute("sampling_frequency_available")
        return axes == nil ? deviceList ?? typeList : typeList ?? deviceList
    }

    /// The sampling rates the device offers (`offeredRateList`, of the device or of the first
    /// channel type that has a list); empty when it lists none.
    static func offeredRates(_ ref: IIODeviceRef, types: [IIOAxes]) -> [Double] {
        let text = offeredRateList(ref, for: nil) ?? types.lazy.compactMap { offeredRateList(ref, for: $0) }.first
        return (text ?? "").split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
            .compactMap { Double($0) }.filter { $0 > 0 && $0.isFinite }
    }

    /// Attaches the device's own trigger when it needs one: `trigger/current_trigger` exists and
    /// is empty, and a trigger of its own exists — named "<name>-dev<N>" (the kernel's convention
    /// for data-ready triggers), else starting with "<name>-", else any "<anything>-dev<N>" for
    /// device N (iio-sensor-proxy's rule: the HID hub's "accel_3d-dev0" beside a device of another
    /// name). Devices fed by a hardware FIFO have no `trigger/` directory and need none. Throws
    /// `IIOMissingTrigger` when the device needs a trigger and has none (a BMI160 or MPU-6050 whose
    /// interrupt line is not wired): its buffer would never fill.
    ///
    /// `current_trigger` is read from sysfs, not through `iio_device_get_trigger`: the kernel shows
    /// an unset trigger as a zero-byte file, which libiio 0.24 reports as -EIO — indistinguishable
    /// from "no trigger directory" by its return code alone.
    static func attachTrigger(_ ref: IIODeviceRef, in ctx: IIOContext, logger: Logger?) throws -> String? {
        switch IIOTriggerFile.read(ref) {
        case .absent: return nil
        case .set(let name): return name
        case .unreadable(let why): throw IIOError("\(ref.id): cannot read trigger/current_trigger: \(why)")
        case .empty: break
        }
        let triggers = ctx.triggers
        guard
            let trigger = ownTrigger(of: ref, among: triggers.map(\.name)).flatMap({ n in
                triggers.first { $0.name == n }
            })
        else {
            throw IIOMissingTrigger(device: "\(ref.name) (\(ref.id))")
        }
        let w = iio_device_set_trigger(ref.handle, trigger.handle)
        if w < 0 { throw IIOError.call("\(ref.id): attaching trigger \(trigger.name)", Int(w)) }
        return trigger.name
    }

    /// Which of `triggers` (names) is the device's own, by the rules `attachTrigger` lists.
    static func ownTrigger(of ref: IIODeviceRef, among triggers: [String]) -> String? {
        IIOText.ownTrigger(deviceName: ref.name, number: ref.number, among: triggers)
    }
}

/// What a device's `trigger/current_trigger` holds.
enum IIOTriggerFile: Equatable {
    /// No such file: the device's buffer needs no trigger (or it has no buffer).
    case absent
    /// The file is empty (zero bytes, or a bare newline): a trigger is needed and none is set.
    case empty
    /// A trigger is set (a udev rule, a previous run, a driver that sets its own).
    case set(String)
    /// The file exists but cannot be read.
    case unreadable(String)

    static func read(_ ref: IIODeviceRef) -> IIOTriggerFile {
        let path = "\(IIOPaths.sysfs)/\(ref.id)/trigger/current_trigger"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            return code == ENOENT ? .absent : .unreadable(SystemError.text(code))
        }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 256)
        let n: Int
        do { n = try Syscall.readFully(fd, into: &buf) } catch { return .unreadable(SystemError.text(error.code)) }
        let name = String(decoding: buf[0..<n], as: UTF8.self).trimming { $0.isWhitespace || $0 == "\0" }
        return name.isEmpty ? .empty : .set(name)
    }
}
