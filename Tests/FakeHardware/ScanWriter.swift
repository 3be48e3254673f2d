// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore

/// Plays the kernel's side of an IIO buffer: once the reader (libiio) has enabled the buffer, packs
/// scans of the enabled channels into the device's FIFO exactly as the kernel lays them out.
///
/// Layout rule (the kernel's `iio_compute_scan_bytes`): only enabled elements, in scan-index order,
/// each aligned to its own storage size; the scan is padded to a multiple of its largest element.
public final class ScanWriter {
    /// One enabled element's place in a scan.
    public struct Slot: Sendable {
        public var id: String
        public var offset: Int
        public var type: ScanType
    }

    public let device: FakeIIODevice
    /// Enabled elements in scan order.
    public let slots: [Slot]
    /// Bytes per scan, padding included.
    public let scanBytes: Int
    private var fd: Int32

    /// Waits (up to `timeout` s) for the reader to enable the buffer, then opens the FIFO and reads
    /// the `*_en` files the reader wrote to learn which elements to pack.
    public init(scenario: FakeScenario, device: FakeIIODevice, timeout: Double = 5) throws {
        // A reader that goes away would otherwise kill the test process on the next write.
        signal(SIGPIPE, SIG_IGN)
        self.device = device
        let deadline = Date().addingTimeInterval(timeout)
        try Self.waitUntil(deadline, "\(device.id): buffer/enable never became 1") {
            scenario.attribute(device, "buffer/enable") == "1"
        }
        // libiio opens the node before enabling, so O_WRONLY|O_NONBLOCK finds a reader now; retry
        // briefly anyway (ENXIO = no reader yet) rather than block forever in open(2).
        var opened: Int32 = -1
        try Self.waitUntil(deadline, "\(device.id): FIFO has no reader") {
            opened = open(scenario.node(device), O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            return opened >= 0
        }
        fd = opened

        var slots: [Slot] = []
        var offset = 0, largest = 1
        for element in scenario.scanElements(device)
        where scenario.attribute(device, "scan_elements/in_\(element.id)_en") == "1" {
            let size = element.type.storageBytes
            offset = (offset + size - 1) / size * size
            slots.append(Slot(id: element.id, offset: offset, type: element.type))
            offset += size
            largest = max(largest, size)
        }
        guard !slots.isEmpty else {
            Glibc.close(fd)
            throw FakeHardwareError("\(device.id): no scan element enabled")
        }
        self.slots = slots
        self.scanBytes = (offset + largest - 1) / largest * largest
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Closes the FIFO (as a driver going away would stop writing).
    public func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    /// One scan: raw values by channel id ("accel_x", "timestamp"); missing ids are written as 0.
    public typealias Scan = [String: Int64]

    /// A scan of the device's accel and/or gyro raw counts and a timestamp.
    public static func scan(t: Int64, accel: [Int64]? = nil, gyro: [Int64]? = nil) -> Scan {
        var s: Scan = ["timestamp": t]
        for (i, axis) in ["x", "y", "z"].enumerated() {
            if let accel { s["accel_\(axis)"] = accel[i] }
            if let gyro { s["anglvel_\(axis)"] = gyro[i] }
        }
        return s
    }

    /// The bytes of one scan.
    public func pack(_ scan: Scan) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: scanBytes)
        for slot in slots {
            let encoded = slot.type.encode(scan[slot.id] ?? 0)
            bytes.replaceSubrange(slot.offset..<(slot.offset + encoded.count), with: encoded)
        }
        return bytes
    }

    /// Writes scans, each write whole scans of at most PIPE_BUF bytes so the reader never sees a
    /// partial scan; waits (up to `timeout` s) while the FIFO is full.
    public func write(_ scans: [Scan], timeout: Double = 5) throws {
        guard fd >= 0 else { throw FakeHardwareError("\(device.id): writer closed") }
        let perWrite = max(1, Int(PIPE_BUF) / scanBytes)
        let deadline = Date().addingTimeInterval(timeout)
        var index = 0
        while index < scans.count {
            let chunk = scans[index..<min(scans.count, index + perWrite)].flatMap(pack)
            let n = chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n == chunk.count {
                index += perWrite
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EINTR) {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { throw FakeHardwareError("\(device.id): FIFO full until timeout") }
                _ = poll(&p, 1, Int32(min(left, 0.1) * 1000) + 1)
                continue
            }
            throw FakeHardwareError(
                "\(device.id): write: \(n < 0 ? String(cString: strerror(errno)) : "short write \(n)")")
        }
    }

    /// Polls `condition` every 2 ms until it holds or `deadline` passes.
    public static func waitUntil(
        _ deadline: Date, _ failure: @autoclosure () -> String,
        _ condition: () -> Bool
    ) throws {
        while !condition() {
            guard Date() < deadline else { throw FakeHardwareError(failure()) }
            usleep(2000)
        }
    }
}
