// SPDX-License-Identifier: Apache-2.0
import CLibIIO
import FoundationEssentials
import Glibc

/// Trouble with an IIO device. Every case is retried by `IIOSource`; the message is for people.
struct IIOError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }

    /// An error from a libiio call that returns a negative errno.
    static func call(_ what: String, _ code: Int) -> IIOError {
        IIOError("\(what): \(IIOContext.errorText(Int32(-code)))")
    }
}

/// Where the kernel (and libiio's local backend) keeps IIO devices and their data nodes.
enum IIOPaths {
    static let sysfs = "/sys/bus/iio/devices"
    static let dev = "/dev"
}

/// A libiio local context: a snapshot of the IIO devices present when it was made. Rebuilt after
/// a device vanishes, so a returning device is seen with its new layout.
final class IIOContext {
    let handle: OpaquePointer

    /// Scans the local IIO devices; fails when libiio cannot (no /sys/bus/iio, no permission).
    init(timeoutMs: UInt32) throws {
        guard let ctx = iio_create_local_context() else {
            let code = errno
            throw IIOError(
                "cannot open the local IIO context: \(IIOContext.errorText(code))"
                    + (code == ENOENT ? " (no \(IIOPaths.sysfs): no IIO driver loaded?)" : ""))
        }
        handle = ctx
        // Reads are non-blocking and waited on with poll(), so this bounds only libiio's own waits.
        _ = iio_context_set_timeout(ctx, timeoutMs)
    }

    deinit { iio_context_destroy(handle) }

    /// Every device (not trigger) in the context.
    var devices: [IIODeviceRef] {
        (0..<iio_context_get_devices_count(handle)).compactMap { i in
            guard let dev = iio_context_get_device(handle, i), !iio_device_is_trigger(dev) else { return nil }
            return IIODeviceRef(dev)
        }
    }

    /// Every trigger in the context.
    var triggers: [IIODeviceRef] {
        (0..<iio_context_get_devices_count(handle)).compactMap { i in
            guard let dev = iio_context_get_device(handle, i), iio_device_is_trigger(dev) else { return nil }
            return IIODeviceRef(dev)
        }
    }

    /// The text of a NUL-terminated C buffer.
    static func string(_ buf: [CChar]) -> String {
        let bytes = buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func errorText(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 256)
        iio_strerror(code, &buf, buf.count)
        return IIOContext.string(buf)
    }
}

/// A device handle inside an `IIOContext` (valid while the context lives).
struct IIODeviceRef {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    /// "iio:device0".
    var id: String { iio_device_get_id(handle).map { String(cString: $0) } ?? "?" }
    /// The `name` attribute ("mpu6050"), or the id when the driver gives none.
    var name: String { iio_device_get_name(handle).map { String(cString: $0) } ?? id }

    /// N of "iio:deviceN".
    var number: Int? { Int(id.replacing("iio:device", with: "")) }

    func channel(_ id: String) -> OpaquePointer? {
        iio_device_find_channel(handle, id, false)
    }

    /// True when the device has x, y and z input channels of `type` ("accel", "anglvel").
    func hasAxes(_ type: String) -> Bool {
        ["x", "y", "z"].allSatisfy { channel("\(type)_\($0)") != nil }
    }

    func hasAttribute(_ name: String) -> Bool { iio_device_find_attr(handle, name) != nil }

    func attribute(_ name: String) -> String? {
        guard hasAttribute(name) else { return nil }
        var buf = [CChar](repeating: 0, count: 1024)
        let n = iio_device_attr_read(handle, name, &buf, buf.count)
        return n > 0 ? IIOContext.string(buf) : nil
    }

    func writeAttribute(_ name: String, _ value: String) throws {
        let n = iio_device_attr_write(handle, name, value)
        if n < 0 { throw IIOError.call("\(id): writing \(name)=\(value)", n) }
    }

    /// Whether the kernel exposes a buffer for this device: a `buffer/enable` file and a data node.
    var hasBufferDirectory: Bool {
        access("\(IIOPaths.sysfs)/\(id)/buffer/enable", F_OK) == 0
    }

    var dataNodePath: String { "\(IIOPaths.dev)/\(id)" }
}

/// Channel attribute helpers (a channel handle is valid while its context lives).
enum IIOChannel {
    static func id(_ chn: OpaquePointer) -> String {
        iio_channel_get_id(chn).map { String(cString: $0) } ?? "?"
    }

    static func hasAttribute(_ chn: OpaquePointer, _ name: String) -> Bool {
        iio_channel_find_attr(chn, name) != nil
    }

    static func attribute(_ chn: OpaquePointer, _ name: String) -> String? {
        guard hasAttribute(chn, name) else { return nil }
        var buf = [CChar](repeating: 0, count: 1024)
        let n = iio_channel_attr_read(chn, name, &buf, buf.count)
        return n > 0 ? IIOContext.string(buf) : nil
    }

    /// The attribute's text; nil when the channel has no such attribute; throws when it has one
    /// that cannot be read (a bmi160 whose range register holds no valid value answers EINVAL for
    /// its scale): such a value must not be taken for "absent".
    static func readAttribute(_ chn: OpaquePointer, _ name: String) throws -> String? {
        guard hasAttribute(chn, name) else { return nil }
        var buf = [CChar](repeating: 0, count: 1024)
        let n = iio_channel_attr_read(chn, name, &buf, buf.count)
        if n < 0 { throw IIOError.call("\(id(chn)) \(name)", n) }
        return IIOContext.string(buf)
    }

    static func writeAttribute(_ chn: OpaquePointer, _ name: String, _ value: String) throws {
        let n = iio_channel_attr_write(chn, name, value)
        if n < 0 { throw IIOError.call("\(id(chn)): writing \(name)=\(value)", n) }
    }

    /// Reads an integer attribute (`raw`), throwing with the errno when the file is gone.
    static func readInteger(_ chn: OpaquePointer, _ name: String) throws -> Int64 {
        var value: Int64 = 0
        let r = iio_channel_attr_read_longlong(chn, name, &value)
        if r < 0 { throw IIOError.call("\(id(chn)) \(name)", Int(r)) }
        return value
    }

    static func format(_ chn: OpaquePointer) -> IIOElementFormat {
        let f = iio_channel_get_data_format(chn).pointee
        return IIOElementFormat(
            bigEndian: f.is_be, signed: f.is_signed, bits: Int(f.bits),
            storageBytes: Int(f.length) / 8, shift: Int(f.shift))
    }
}
