// SPDX-License-Identifier: Apache-2.0
import CLibIIO
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// What one device gives for one instant: a full IMU sample from a combined device, or one half
/// from a split device.
struct IIOReading {
    var t: Nanoseconds
    var accel: Vector3?
    var gyro: Vector3?
    /// Why the gyroscope half could not be read (polled reads: its attributes failed while the
    /// accelerometer's did not), nil when it was read or there is none.
    var gyroError: String?
}

/// Reads a device's scans through a libiio buffer in non-blocking mode: the caller waits on
/// `pollFD`, then `drain` takes every whole scan available. Waiting ourselves (rather than a
/// blocking refill) means a scan is delivered as soon as it arrives whatever the buffer size,
/// a partial buffer is never lost to a refill timeout, and split devices are read from one thread.
final class IIOBufferedReader {
    let device: IIOConfiguredDevice
    private var buffer: OpaquePointer?
    /// The data node's fd (libiio's), for poll().
    let pollFD: Int32
    /// Identity of the data node opened, to notice a device replaced under the same name.
    private let node: (dev: UInt64, ino: UInt64)
    private let step: Int
    private let accelSlots: [(offset: Int, format: IIOElementFormat)]
    private let gyroSlots: [(offset: Int, format: IIOElementFormat)]
    private let timestampSlot: (offset: Int, format: IIOElementFormat)?
    /// Scans per libiio buffer.
    let samplesPerBuffer: Int

    init(device: IIOConfiguredDevice, samplesPerBuffer: Int) throws {
        self.device = device
        self.samplesPerBuffer = samplesPerBuffer
        let used = (device.accel?.channels ?? []) + (device.gyro?.channels ?? []) + [device.timestamp].compactMap { $0 }
        for c in used { iio_channel_enable(c) }
        guard let buf = iio_device_create_buffer(device.ref.handle, samplesPerBuffer, false) else {
            throw IIOError("\(device.summary): cannot create a buffer: \(IIOContext.errorText(errno))")
        }
        buffer = buf
        let nb = iio_buffer_set_blocking_mode(buf, false)
        let fd = iio_buffer_get_poll_fd(buf)
        var st = stat()
        guard nb == 0, fd >= 0, fstat(fd, &st) == 0 else {
            iio_buffer_destroy(buf)
            throw IIOError("\(device.summary): buffer has no usable data node")
        }
        pollFD = fd
        node = (UInt64(st.st_dev), UInt64(st.st_ino))
        step = iio_buffer_step(buf)
        let start = iio_buffer_start(buf)!
        func slot(_ c: OpaquePointer) -> (offset: Int, format: IIOElementFormat) {
            (iio_buffer_first(buf, c)! - start, IIOChannel.format(c))
        }
        accelSlots = device.accel?.channels.map(slot) ?? []
        gyroSlots = device.gyro?.channels.map(slot) ?? []
        timestampSlot = device.timestamp.map(slot)
    }

    deinit { close() }

    /// Disables the buffer (libiio writes buffer/enable=0 and *_en=0) and closes the node.
    func close() {
        if let buffer { iio_buffer_destroy(buffer) }
        buffer = nil
    }

    /// Reads and decodes every whole scan available now (at most `limit` refills, so a flood
    /// cannot starve the other device); returns how many scans were delivered.
    func drain(limit: Int = 64, _ deliver: (IIOReading) -> Void) throws -> Int {
        guard let buffer else { return 0 }
        var delivered = 0
        for _ in 0..<limit {
            let n = iio_buffer_refill(buffer)
            if n == -Int(EAGAIN) || n == 0 { break }
            if n < 0 { throw IIOError.call("\(device.summary): reading scans", n) }
            guard let start = iio_buffer_start(buffer) else { break }
            let scans = n / step
            let now = MonotonicClock.nanoseconds()
            let period = Int64(saturating: 1e9 / max(device.rateHz, 1))
            for i in 0..<scans {
                let scan = UnsafeRawPointer(start + i * step)
                // Without a timestamp element, the best time is "now" for the newest scan.
                let t =
                    timestampSlot.map { $0.format.decode(scan + $0.offset) }
                    ?? now - Int64(scans - 1 - i) * period
                var reading = IIOReading(t: t)
                if let a = device.accel {
                    reading.accel = a.vector(
                        accelSlots[0].format.decode(scan + accelSlots[0].offset),
                        accelSlots[1].format.decode(scan + accelSlots[1].offset),
                        accelSlots[2].format.decode(scan + accelSlots[2].offset))
                }
                if let g = device.gyro {
                    reading.gyro = g.vector(
                        gyroSlots[0].format.decode(scan + gyroSlots[0].offset),
                        gyroSlots[1].format.decode(scan + gyroSlots[1].offset),
                        gyroSlots[2].format.decode(scan + gyroSlots[2].offset))
                }
                deliver(reading)
                delivered += 1
            }
            if n < samplesPerBuffer * step { break }  // the FIFO is empty now
        }
        return delivered
    }

    /// True while the device is still the one we opened: its sysfs directory exists with the same
    /// name, and its data node is the same file. A replugged device gets a new node; we reopen.
    func isPresent() -> Bool {
        IIOPresence.nameMatches(device.ref) && IIOPresence.sameNode(device.ref.dataNodePath, node)
    }
}

/// Reads a device's `*_raw` attributes on demand (devices without a buffer).
struct IIOPolledReader {
    let device: IIOConfiguredDevice

    /// One reading of every axis; throws when an accelerometer attribute cannot be read (device
    /// gone). A gyroscope that cannot be read is no error here: `gyroError` says why, and the
    /// session carries on with the accelerometer's tilt (`IIOSession`, "degrade, don't stop").
    func read(at t: Nanoseconds) throws -> IIOReading {
        var reading = IIOReading(t: t)
        if let a = device.accel {
            reading.accel = a.vector(
                try IIOChannel.readInteger(a.channels[0], "raw"),
                try IIOChannel.readInteger(a.channels[1], "raw"),
                try IIOChannel.readInteger(a.channels[2], "raw"))
        }
        if let g = device.gyro {
            do {
                reading.gyro = g.vector(
                    try IIOChannel.readInteger(g.channels[0], "raw"),
                    try IIOChannel.readInteger(g.channels[1], "raw"),
                    try IIOChannel.readInteger(g.channels[2], "raw"))
            } catch {
                reading.gyroError = "\(error)"
            }
        }
        return reading
    }

    func isPresent() -> Bool { IIOPresence.nameMatches(device.ref) }
}

/// Checks that a device is still there, straight from sysfs and /dev (a libiio context is a
/// snapshot and does not notice).
enum IIOPresence {
    static func nameMatches(_ ref: IIODeviceRef) -> Bool {
        guard let data = FileManager.default.contents(atPath: "\(IIOPaths.sysfs)/\(ref.id)/name") else { return false }
        let name = String(decoding: data, as: UTF8.self)
            .trimming { $0.isWhitespace || $0 == "\0" }
        return name == ref.name
    }

    static func sameNode(_ path: String, _ node: (dev: UInt64, ino: UInt64)) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && UInt64(st.st_dev) == node.dev && UInt64(st.st_ino) == node.ino
    }
}
