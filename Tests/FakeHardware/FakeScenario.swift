// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import TiltCore

/// Where the fake-hardware harness (`scripts/fakehw-ns`) put things, from its environment.
public enum FakeHarness {
    /// The directory `/sys/bus/iio/devices` points at, or nil when not running under the harness.
    public static var sysRoot: String? { ProcessInfo.processInfo.environment["FAKEHW_SYS"] }
    /// The writable /dev in which data nodes (FIFOs) are made.
    public static var devRoot: String { ProcessInfo.processInfo.environment["FAKEHW_DEV"] ?? "/dev" }
    /// True when CI=true: harness tests must fail, never skip, when the harness is missing.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }
    /// Why harness tests cannot run here, or nil when they can.
    public static var unavailableReason: String? {
        guard let root = sysRoot else {
            return "FAKEHW_SYS is not set: run the tests under the fake-hardware harness, "
                + "e.g. `scripts/fakehw-ns swift test` (needs root)"
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDir), isDir.boolValue else {
            return "FAKEHW_SYS=\(root) is not a directory"
        }
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/sys/bus/iio/devices")) ?? ""
        guard link == root else {
            return "/sys/bus/iio/devices does not point at FAKEHW_SYS (\(root)); not inside the harness namespace"
        }
        return nil
    }
}

/// Errors from building or driving a scenario.
public struct FakeHardwareError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A set of fake IIO devices installed in the harness's tree: directories and attribute files
/// under `$FAKEHW_SYS`, trigger directories, and one FIFO per buffered device as its data node.
/// The harness has one tree, so one scenario at a time (tests run serially); call `remove()` when
/// done (tests do it in tearDown), a new scenario also clears leftovers of a crashed one.
public final class FakeScenario: Sendable {
    public let devices: [FakeIIODevice]
    public let sysRoot: String
    public let devRoot: String
    /// Attribute files made read-only by a bind mount (`makeReadOnly`), unmounted on `vanish`.
    private let readOnlyMounts = Mutex<[String]>([])

    /// Builds the scenario's files. Fails if the tree is not empty (a previous test leaked).
    public init(
        _ devices: [FakeIIODevice], sysRoot: String? = FakeHarness.sysRoot,
        devRoot: String = FakeHarness.devRoot
    ) throws {
        guard let sysRoot else { throw FakeHardwareError("FAKEHW_SYS is not set") }
        self.devices = devices; self.sysRoot = sysRoot; self.devRoot = devRoot
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: sysRoot)) ?? []
        if !leftovers.isEmpty {
            // A crashed earlier test may leave files; start clean rather than mix scenarios.
            for entry in leftovers { try? FileManager.default.removeItem(atPath: "\(sysRoot)/\(entry)") }
            try? FileManager.default.removeItem(atPath: Self.devicesRoot(sysRoot))
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: devRoot)) ?? []
            where entry.hasPrefix("iio:device") {
                try? FileManager.default.removeItem(atPath: "\(devRoot)/\(entry)")
            }
        }
        for d in devices { try install(d) }
    }

    /// The device with IIO number `number`.
    public func device(_ number: Int) -> FakeIIODevice {
        devices.first { $0.number == number }!
    }

    /// Path of the device's sysfs directory.
    public func dir(_ d: FakeIIODevice) -> String { "\(sysRoot)/\(d.id)" }
    /// Path of the device's data node.
    public func node(_ d: FakeIIODevice) -> String { "\(devRoot)/\(d.id)" }

    /// Removes every file of the scenario.
    public func remove() {
        for d in devices { vanish(d) }
        try? FileManager.default.removeItem(atPath: devicesRoot)
    }

    /// The fake `/sys/devices` tree beside `$FAKEHW_SYS` (on the harness's tmpfs), which devices
    /// with a `physical` place live in.
    public var devicesRoot: String { Self.devicesRoot(sysRoot) }

    static func devicesRoot(_ sysRoot: String) -> String {
        "\(URL(fileURLWithPath: sysRoot).deletingLastPathComponent().path)/fakehw-devices"
    }

    /// Makes `adapter` (`i2c-0/i2c-1`) an I²C mux adapter owned by `owner` (`i2c-0/0-0068`), as
    /// i2c-mux does: a `mux_device` link in the adapter's directory to the owner's.
    public func addMux(adapter: String, owner: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: "\(devicesRoot)/\(adapter)", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(devicesRoot)/\(owner)", withIntermediateDirectories: true)
        try fm.createSymbolicLink(
            atPath: "\(devicesRoot)/\(adapter)/mux_device", withDestinationPath: "\(devicesRoot)/\(owner)")
    }

    /// Makes the device disappear as on unplug: its sysfs directory, trigger and data node go.
    public func vanish(_ d: FakeIIODevice) {
        let fm = FileManager.default
        let mounted = readOnlyMounts.withLock { m -> [String] in
            let mine = m.filter { $0.hasPrefix(dir(d) + "/") }
            m.removeAll { mine.contains($0) }
            return mine
        }
        for path in mounted { _ = try? Self.run("/bin/umount", [path]) }
        try? fm.removeItem(atPath: dir(d))
        if let p = d.physical { try? fm.removeItem(atPath: "\(devicesRoot)/\(p)/\(d.id)") }
        try? fm.removeItem(atPath: node(d))
        if d.ownTrigger != nil { try? fm.removeItem(atPath: "\(sysRoot)/trigger\(d.triggerNumber)") }
    }

    /// Brings a vanished device back with a fresh tree and a new data node (as a re-probe would).
    public func restore(_ d: FakeIIODevice) throws {
        vanish(d)
        try install(d)
    }

    /// The device's `current_timestamp_clock` now (what the reader left it at), nil when absent.
    public func timestampClock(_ d: FakeIIODevice) -> String? { attribute(d, "current_timestamp_clock") }

    /// Reads an attribute file relative to the device directory ("buffer/enable"), trimmed of the
    /// newline sysfs adds and the NUL libiio writes after values.
    public func attribute(_ d: FakeIIODevice, _ relativePath: String) -> String? {
        guard let data = FileManager.default.contents(atPath: "\(dir(d))/\(relativePath)") else { return nil }
        return String(decoding: data, as: UTF8.self)
            .trimmingCharacters(in: CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: "\0")))
    }

    /// Writes an attribute file relative to the device directory, as a driver would update it.
    public func setAttribute(_ d: FakeIIODevice, _ relativePath: String, _ value: String) throws {
        try writeFile("\(dir(d))/\(relativePath)", value)
    }

    /// Makes an attribute file refuse writes even from root (EROFS), as a kernel attribute
    /// without write permission for the daemon's user would: a read-only bind mount of the file
    /// onto itself, inside the harness's private mount namespace.
    public func makeReadOnly(_ d: FakeIIODevice, _ relativePath: String) throws {
        let path = "\(dir(d))/\(relativePath)"
        try Self.run("/bin/mount", ["--bind", path, path])
        readOnlyMounts.withLock { $0.append(path) }
        try Self.run("/bin/mount", ["-o", "remount,bind,ro", path])
    }

    private static func run(_ tool: String, _ args: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw FakeHardwareError("\(tool) \(args.joined(separator: " ")) exited with \(p.terminationStatus)")
        }
    }

    /// Sets the polled `*_raw` attributes of a group.
    public func setRaw(_ d: FakeIIODevice, _ group: FakeChannelGroup, _ raw: [Int64]) throws {
        for (axis, value) in zip(["x", "y", "z"], raw) {
            try writeFile("\(dir(d))/in_\(group.type)_\(axis)_raw", String(value))
        }
    }

    // MARK: building

    private func install(_ d: FakeIIODevice) throws {
        let base = dir(d)
        let fm = FileManager.default
        if let p = d.physical {
            let real = "\(devicesRoot)/\(p)/\(d.id)"
            try fm.createDirectory(atPath: real, withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: base, withDestinationPath: real)
        } else {
            try fm.createDirectory(atPath: base, withIntermediateDirectories: true)
        }
        try writeFile("\(base)/name", d.name)
        // Real devices have "dev" (major:minor); libiio ignores it, but it keeps the tree honest.
        try writeFile("\(base)/dev", "243:\(d.number)")

        switch d.frequency {
        case .device(let initial, let available):
            try writeFile("\(base)/sampling_frequency", initial)
            if let available { try writeFile("\(base)/sampling_frequency_available", available.joined(separator: " ")) }
        case .perType(let initial, let available):
            for g in [d.accel, d.gyro].compactMap({ $0 }) {
                try writeFile("\(base)/in_\(g.type)_sampling_frequency", initial)
                if let available {
                    try writeFile("\(base)/in_\(g.type)_sampling_frequency_available", available.joined(separator: " "))
                }
            }
        case .perTypeListedByDevice(let initial, let available):
            for g in [d.accel, d.gyro].compactMap({ $0 }) {
                try writeFile("\(base)/in_\(g.type)_sampling_frequency", initial)
            }
            try writeFile("\(base)/sampling_frequency_available", available.joined(separator: " "))
        case .none: break
        }
        if let m = d.deviceMountMatrix { try writeFile("\(base)/mount_matrix", Self.sysfsMatrix(m)) }
        if let m = d.inMountMatrix { try writeFile("\(base)/in_mount_matrix", Self.sysfsMatrix(m)) }
        if let c = d.timestampClock { try writeFile("\(base)/current_timestamp_clock", c) }

        for g in [d.accel, d.gyro, d.magn].compactMap({ $0 }) {
            if let scales = g.axisScales {
                for (axis, scale) in zip(["x", "y", "z"], scales) {
                    try writeFile("\(base)/in_\(g.type)_\(axis)_scale", scale)
                }
            } else {
                try writeFile("\(base)/in_\(g.type)_scale", g.scale)
            }
            if let a = g.scaleAvailable { try writeFile("\(base)/in_\(g.type)_scale_available", a) }
            if let offset = g.offset { try writeFile("\(base)/in_\(g.type)_offset", offset) }
            if let m = g.mountMatrix { try writeFile("\(base)/in_\(g.type)_mount_matrix", Self.sysfsMatrix(m)) }
            for axis in ["x", "y", "z"] {
                try writeFile("\(base)/in_\(g.type)_\(axis)_raw", "0")
                if g.calibbias { try writeFile("\(base)/in_\(g.type)_\(axis)_calibbias", "0") }
            }
        }

        guard d.buffered else { return }
        try fm.createDirectory(atPath: "\(base)/buffer", withIntermediateDirectories: true)
        try writeFile("\(base)/buffer/enable", "0")
        try writeFile("\(base)/buffer/length", "0")
        try writeFile("\(base)/buffer/watermark", "1")
        let scan = "\(base)/scan_elements"
        try fm.createDirectory(atPath: scan, withIntermediateDirectories: true)
        for element in scanElements(d) {
            try writeFile("\(scan)/in_\(element.id)_en", "0")
            try writeFile("\(scan)/in_\(element.id)_index", String(element.index))
            try writeFile("\(scan)/in_\(element.id)_type", element.type.sysfs)
        }
        if d.hasBuffer0 {
            // One set of attributes seen from both places, as the kernel has it.
            let b0 = "\(base)/buffer0"
            try fm.createDirectory(atPath: b0, withIntermediateDirectories: true)
            for name in ["enable", "length", "watermark"] {
                try fm.createSymbolicLink(atPath: "\(b0)/\(name)", withDestinationPath: "../buffer/\(name)")
            }
            for element in scanElements(d) {
                for suffix in ["en", "index", "type"] {
                    let file = "in_\(element.id)_\(suffix)"
                    try fm.createSymbolicLink(atPath: "\(b0)/\(file)", withDestinationPath: "../scan_elements/\(file)")
                }
            }
        }
        if d.ownTrigger == nil && d.triggeredWithoutInterrupt {
            // A triggered buffer whose driver made no data-ready trigger (no IRQ in the device tree).
            try fm.createDirectory(atPath: "\(base)/trigger", withIntermediateDirectories: true)
            try writeFile("\(base)/trigger/current_trigger", "", newline: false)
        }
        if let trigger = d.ownTrigger {
            try fm.createDirectory(atPath: "\(base)/trigger", withIntermediateDirectories: true)
            try writeFile("\(base)/trigger/current_trigger", "", newline: false)
            let tdir = "\(sysRoot)/trigger\(d.triggerNumber)"
            try fm.createDirectory(atPath: tdir, withIntermediateDirectories: true)
            try writeFile("\(tdir)/name", trigger)
        }
        let path = node(d)
        try? fm.removeItem(atPath: path)
        guard mkfifo(path, 0o660) == 0 else {
            throw FakeHardwareError("mkfifo \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Every scan element of the device (enabled or not): (channel id, index, type).
    public func scanElements(_ d: FakeIIODevice) -> [(id: String, index: Int, type: ScanType)] {
        var out: [(id: String, index: Int, type: ScanType)] = []
        for g in [d.accel, d.gyro].compactMap({ $0 }) {
            for (i, axis) in ["x", "y", "z"].enumerated() {
                out.append((id: "\(g.type)_\(axis)", index: g.firstIndex + i, type: g.scanType))
            }
        }
        out += d.extraScanChannels
        if let ts = d.timestampIndex { out.append((id: "timestamp", index: ts, type: .timestamp)) }
        return out.sorted { $0.index < $1.index }
    }

    /// The mount-matrix text format of the kernel: "x1, y1, z1; x2, y2, z2; x3, y3, z3".
    public static func sysfsMatrix(_ m: Matrix3) -> String {
        func f(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }
        return [m.r0, m.r1, m.r2].map { "\(f($0.x)), \(f($0.y)), \(f($0.z))" }.joined(separator: "; ")
    }

    /// Writes `value` plus the newline sysfs shows (libiio drops the last byte it reads).
    /// Writes an attribute as the kernel shows it: the value and a newline, except where the kernel
    /// prints nothing at all (an unset `current_trigger` is a zero-byte file, which libiio 0.24
    /// reads as an error, not as an empty name).
    private func writeFile(_ path: String, _ value: String, newline: Bool = true) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data((value + (newline ? "\n" : "")).utf8)) else {
            throw FakeHardwareError("cannot write \(path)")
        }
    }
}
