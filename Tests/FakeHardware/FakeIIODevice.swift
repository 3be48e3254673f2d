// SPDX-License-Identifier: Apache-2.0
import TiltCore

/// Three channels of one IIO type (`accel` or `anglvel`) on a fake device.
public struct FakeChannelGroup: Sendable {
    /// The IIO channel type: "accel" or "anglvel".
    public var type: String
    /// Text of `in_<type>_scale` (SI units per count), kept as text so tests see exactly what a
    /// driver prints.
    public var scale: String
    /// Text of `in_<type>_offset`, if the driver has one.
    public var offset: String?
    public var scanType: ScanType
    /// Scan index of the x channel; y and z follow.
    public var firstIndex: Int
    /// Mount matrix written to `in_<type>_mount_matrix`, if any.
    public var mountMatrix: Matrix3?
    /// Text of `in_<type>_scale_available`, if the driver has one.
    public var scaleAvailable: String?
    /// True when the driver has `in_<type>_<axis>_calibbias` (written "0").
    public var calibbias: Bool
    /// Per-axis scales (`in_<type>_x_scale` …, as ak8975 and inv_mpu6050's magnetometer print
    /// their sensitivity-adjusted values) instead of the one `in_<type>_scale`; nil = shared.
    public var axisScales: [String]?

    public init(
        type: String, scale: String, offset: String? = nil, scanType: ScanType,
        firstIndex: Int, mountMatrix: Matrix3? = nil, scaleAvailable: String? = nil, calibbias: Bool = false
    ) {
        self.type = type; self.scale = scale; self.offset = offset; self.scanType = scanType
        self.firstIndex = firstIndex; self.mountMatrix = mountMatrix
        self.scaleAvailable = scaleAvailable; self.calibbias = calibbias
    }

    public var scaleValue: Double { Double(scale)! }
    /// The scale of axis 0, 1 or 2 (its own when `axisScales` is set).
    public func scaleValue(axis: Int) -> Double { axisScales.map { Double($0[axis])! } ?? scaleValue }
    public var offsetValue: Double { offset.flatMap(Double.init) ?? 0 }
}

/// Where a fake device exposes its sampling frequency.
public enum FakeFrequencyAttribute: Sendable {
    /// `sampling_frequency` (+ `sampling_frequency_available` when the list is non-nil).
    case device(initial: String, available: [String]?)
    /// `in_<type>_sampling_frequency` per channel type (+ `_available`).
    case perType(initial: String, available: [String]?)
    /// `in_<type>_sampling_frequency` per channel type, but the list once for the device
    /// (`sampling_frequency_available`), as fxas21002c, bmc150_accel, bmg160 and mma8452 have it.
    case perTypeListedByDevice(initial: String, available: [String])
    case none
}

/// One fake IIO device: what `/sys/bus/iio/devices/iio:deviceN` holds.
public struct FakeIIODevice: Sendable {
    /// N in `iio:deviceN` (and `/dev/iio:deviceN`).
    public var number: Int
    /// The `name` attribute (the driver's device name).
    public var name: String
    public var accel: FakeChannelGroup?
    public var gyro: FakeChannelGroup?
    /// Scan channels the tests never enable (e.g. inv_mpu6050's temperature), to check that only
    /// enabled channels are packed: (IIO channel id, index, type).
    public var extraScanChannels: [(id: String, index: Int, type: ScanType)]
    /// Scan index of the timestamp element, or nil for a device without one.
    public var timestampIndex: Int?
    /// False for a device with no buffer: no `buffer/`, no `scan_elements/`, no data node.
    public var buffered: Bool
    public var frequency: FakeFrequencyAttribute
    /// When set, the device has `trigger/current_trigger` (initially empty) and a trigger of this
    /// name exists (`triggerN` with N = `triggerNumber`).
    public var ownTrigger: String?
    public var triggerNumber: Int
    /// Device-level `mount_matrix`, for drivers that have one matrix for all channels.
    public var deviceMountMatrix: Matrix3?
    /// `in_mount_matrix` (IIO_SHARED_BY_DIR: one matrix for every input channel), as inv_mpu6050
    /// and bmi160 have it.
    public var inMountMatrix: Matrix3?
    /// Initial text of `current_timestamp_clock` (Linux ≥ 4.10: "realtime"); nil = absent.
    public var timestampClock: String?
    /// True for kernels ≥ 5.11: `buffer0/` holds the buffer and scan-element attributes too (the
    /// same attributes as the legacy `buffer/` and `scan_elements/`, linked here).
    public var hasBuffer0: Bool = false
    /// A triggered buffer with no trigger: `trigger/current_trigger` (empty) but no trigger device,
    /// as when the driver probed without an interrupt line. Ignored when `ownTrigger` is set.
    public var triggeredWithoutInterrupt: Bool = false
    /// Magnetometer channels `in_magn_{x,y,z}_raw` (type "magn", gauss per count), polled only:
    /// the fakes put them in no scan element (tiltd polls magnetometers).
    public var magn: FakeChannelGroup?
    /// Where the device sits in the scenario's fake `/sys/devices` tree (`i2c-0/0-0068`): its
    /// `iio:deviceN` is then a link to `<that>/iio:deviceN`, as in sysfs, so the physical device
    /// (and a mux adapter's `mux_device`) can be read from it. Nil: a plain directory.
    public var physical: String?

    public init(
        number: Int, name: String, accel: FakeChannelGroup?, gyro: FakeChannelGroup?,
        extraScanChannels: [(id: String, index: Int, type: ScanType)] = [],
        timestampIndex: Int?, buffered: Bool = true, frequency: FakeFrequencyAttribute,
        ownTrigger: String? = nil, triggerNumber: Int = 0, deviceMountMatrix: Matrix3? = nil
    ) {
        self.number = number; self.name = name; self.accel = accel; self.gyro = gyro
        self.extraScanChannels = extraScanChannels; self.timestampIndex = timestampIndex
        self.buffered = buffered; self.frequency = frequency; self.ownTrigger = ownTrigger
        self.triggerNumber = triggerNumber; self.deviceMountMatrix = deviceMountMatrix
    }

    /// `iio:deviceN`.
    public var id: String { "iio:device\(number)" }

    /// The mount matrix the device reports for a channel type (identity when none).
    public func mountMatrix(for group: FakeChannelGroup) -> Matrix3 {
        group.mountMatrix ?? deviceMountMatrix ?? inMountMatrix ?? .identity
    }
}

// MARK: - Scenarios mimicking real drivers

extension FakeIIODevice {
    /// Standard gravity, m/s².
    public static let g = 9.80665

    /// Synthetic, not a real driver's layout: a device without a buffer (only *_raw
    /// attributes), with per-type sampling frequency attributes and an accel offset, so it must
    /// be polled. It is named "bmi160" for the tests that name it, but the real bmi160 driver
    /// always has a triggered buffer: see `bmi160WithoutInterrupt` (FakeDrivers.swift).
    public static func polledOnly(number: Int = 0) -> FakeIIODevice {
        FakeIIODevice(
            number: number, name: "bmi160",
            accel: FakeChannelGroup(type: "accel", scale: "0.000598", offset: "-12", scanType: .le16, firstIndex: 0),
            gyro: FakeChannelGroup(type: "anglvel", scale: "0.001065", scanType: .le16, firstIndex: 3),
            timestampIndex: nil, buffered: false,
            frequency: .perType(initial: "100", available: ["25", "50", "100", "200"]))
    }

    /// Synthetic, not a real driver's layout (it exercises decoding corners):
    /// big-endian 32-bit storage: accel has 20 significant bits shifted left by 4 and an offset,
    /// gyro uses all 32 bits; one device-level `mount_matrix`; a frequency with no `_available`
    /// list.
    public static func bigEndian32(number: Int = 0, mountMatrix: Matrix3? = nil) -> FakeIIODevice {
        FakeIIODevice(
            number: number, name: "imu32be",
            accel: FakeChannelGroup(
                type: "accel", scale: "0.0000374", offset: "100",
                scanType: ScanType(bigEndian: true, signed: true, realBits: 20, storageBits: 32, shift: 4),
                firstIndex: 0),
            gyro: FakeChannelGroup(
                type: "anglvel", scale: "0.0000000266",
                scanType: ScanType(bigEndian: true, signed: true, realBits: 32, storageBits: 32),
                firstIndex: 3),
            timestampIndex: 6,
            frequency: .device(initial: "100", available: nil),
            deviceMountMatrix: mountMatrix)
    }
}
