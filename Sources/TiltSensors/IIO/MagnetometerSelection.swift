// SPDX-License-Identifier: Apache-2.0
/// Which IIO device is the magnetometer for an IMU (`[imu] magnetometer`). Pure logic over what
/// sysfs says about each device, so the rules are tested without devices.
///
/// A magnetometer is found on the IMU device itself (an MPU-9250: inv_mpu6050 shows the AK8963
/// behind it as `in_magn_*` channels) or as a device of its own (an LSM9DS1's `lsm9ds1_magn`, an
/// AK8975 or LIS3MDL breakout). A device of its own is matched to the IMU by what ties them
/// together, best first: the same chip (the same physical device in sysfs), the same `label`
/// (device tree), the same bus (an I²C adapter: a 9-axis board carries both chips on one bus),
/// a shared name prefix (`lsm9ds1_` of `lsm9ds1_accel` and `lsm9ds1_magn`), ties going to the
/// lowest device number; with nothing tying any magnetometer to the IMU, the only one present
/// is taken, and several are refused as ambiguous (the config must name one).
public enum MagnetometerSelection {
    /// What sysfs says about one IIO device.
    public struct Device: Sendable, Equatable {
        /// "iio:device2".
        public var id: String
        /// The driver's `name` ("ak8975").
        public var name: String
        /// N of `iio:deviceN` (ties go to the lowest).
        public var number: Int
        /// The `label` attribute (device tree), when there is one.
        public var label: String?
        /// The physical device the IIO device belongs to (the sysfs path its `iio:deviceN` link's
        /// parent resolves to, e.g. `/sys/devices/…/i2c-1/1-006b`), nil when unknown (not a link).
        public var physical: String?
        /// True when it has `in_magn_x/y/z` channels.
        public var hasMagnetometer: Bool
        /// When the device sits on an I²C mux adapter: the device that owns the mux (the target of
        /// the adapter's `mux_device` link, e.g. the MPU-6050 whose auxiliary bus `inv_mpu6050`
        /// offers as "i2c-1-mux (chan_id 0)"). The adapter itself hangs off the parent adapter in
        /// sysfs, not off the IMU, so the physical path alone does not tie the two.
        public var muxOwner: String?

        /// A device description.
        public init(
            id: String, name: String, number: Int, label: String? = nil, physical: String? = nil,
            hasMagnetometer: Bool, muxOwner: String? = nil
        ) {
            self.id = id; self.name = name; self.number = number; self.label = label
            self.physical = physical; self.hasMagnetometer = hasMagnetometer; self.muxOwner = muxOwner
        }

        /// "ak8975 (iio:device2)".
        public var summary: String { "\(name) (\(id))" }
    }

    /// The device chosen and why.
    public struct Choice: Sendable, Equatable {
        /// The magnetometer device.
        public var device: Device
        /// True when it is one of the IMU's own devices.
        public var onIMU: Bool
        /// Why it was chosen, for the status message ("on the IMU device", "on the same I²C bus as …").
        public var reason: String
    }

    /// Why no magnetometer is used.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        /// "auto" found none: quiet, the IMU works without one.
        case noneFound
        /// "auto" found several and nothing ties one to the IMU.
        case ambiguous([String])
        /// A name that no device has.
        case notFound(String, inventory: String)
        /// A named device without `in_magn_*` channels.
        case notAMagnetometer(String)

        /// For status lines.
        public var description: String {
            switch self {
            case .noneFound: "no IIO device with in_magn_x/y/z channels"
            case .ambiguous(let names):
                "several magnetometers and none matched to the IMU (\(names.joined(separator: ", "))): "
                    + "name one with [imu] magnetometer"
            case .notFound(let name, let inventory): "no IIO device named \"\(name)\" (\(inventory))"
            case .notAMagnetometer(let d): "\(d) has no in_magn_x/y/z channels"
            }
        }
    }

    /// Chooses the magnetometer for `spec` ("auto" or a device name or id; the caller handles
    /// "none") among `devices`, given the IMU's devices `imu` (ids).
    public static func choose(_ spec: String, imu: [String], devices: [Device]) -> Result<Choice, Refusal> {
        let imuDevices = devices.filter { imu.contains($0.id) }
        if spec != "auto" {
            guard let d = devices.first(where: { $0.name == spec }) ?? devices.first(where: { $0.id == spec }) else {
                let inventory =
                    devices.isEmpty
                    ? "no IIO devices present" : "present: " + devices.map(\.summary).joined(separator: ", ")
                return .failure(.notFound(spec, inventory: inventory))
            }
            guard d.hasMagnetometer else { return .failure(.notAMagnetometer(d.summary)) }
            let onIMU = imu.contains(d.id)
            return .success(
                Choice(device: d, onIMU: onIMU, reason: onIMU ? "on the IMU device" : "named in the config"))
        }
        if let d = imuDevices.first(where: \.hasMagnetometer) {
            return .success(Choice(device: d, onIMU: true, reason: "on the IMU device"))
        }
        let candidates = devices.filter { $0.hasMagnetometer && !imu.contains($0.id) }
        guard !candidates.isEmpty else { return .failure(.noneFound) }
        var best: (device: Device, score: Int, reason: String)?
        for c in candidates {
            for i in imuDevices {
                guard let (score, reason) = tie(c, i) else { continue }
                if best == nil || score > best!.score || (score == best!.score && c.number < best!.device.number) {
                    best = (c, score, reason)
                }
            }
        }
        if let best { return .success(Choice(device: best.device, onIMU: false, reason: best.reason)) }
        guard candidates.count == 1 else { return .failure(.ambiguous(candidates.map(\.summary))) }
        return .success(Choice(device: candidates[0], onIMU: false, reason: "the only magnetometer"))
    }

    /// How strongly `m` belongs with the IMU device `i` (higher is closer), or nil for no tie.
    static func tie(_ m: Device, _ i: Device) -> (Int, String)? {
        if let pm = m.physical, let pi = i.physical {
            if pm == pi { return (4, "on the same chip as \(i.summary)") }
            // A chip behind the IMU's own auxiliary bus (an i2c-gate) lies below the IMU's device.
            if pm.hasPrefix(pi + "/") { return (4, "behind \(i.summary)'s auxiliary bus") }
        }
        // A chip on the I²C mux adapter the IMU's driver offers for its auxiliary bus (a GY-87's
        // HMC5883L behind the MPU-6050).
        if let owner = m.muxOwner, let pi = i.physical, owner == pi {
            return (4, "behind \(i.summary)'s auxiliary bus (its I²C mux)")
        }
        if let lm = m.label, let li = i.label, !lm.isEmpty, lm == li {
            return (3, "same label \"\(lm)\" as \(i.summary)")
        }
        if let pm = m.physical, let pi = i.physical, parent(pm) == parent(pi), !parent(pm).isEmpty {
            return (2, "on the same bus as \(i.summary)")
        }
        // "lsm9ds1_" of lsm9ds1_magn / lsm9ds1_accel: a common prefix up to a separator.
        let common = String(zip(m.name, i.name).prefix { $0 == $1 }.map(\.0))
        if let cut = common.lastIndex(where: { $0 == "_" || $0 == "-" }),
            common.distance(from: common.startIndex, to: cut) >= 3
        {
            return (1, "named like \(i.summary)")
        }
        return nil
    }

    private static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }
}
