// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// How one scan element is stored in a buffered scan, from the channel's `scan_elements/*_type`
/// (`le:s16/16>>0`): byte order, signedness, significant bits, storage size and shift.
public struct IIOElementFormat: Sendable, Equatable {
    /// Stored big-endian (`be:`).
    public var bigEndian: Bool
    /// Two's complement (`s`) rather than unsigned (`u`).
    public var signed: Bool
    /// Significant bits.
    public var bits: Int
    /// Storage bytes (1, 2, 4 or 8).
    public var storageBytes: Int
    /// Right shift that brings the value to bit 0.
    public var shift: Int

    /// A format from its parts.
    public init(bigEndian: Bool, signed: Bool, bits: Int, storageBytes: Int, shift: Int) {
        self.bigEndian = bigEndian; self.signed = signed; self.bits = bits
        self.storageBytes = storageBytes; self.shift = shift
    }

    /// Parses the sysfs text form, e.g. `be:s20/32>>4`; nil when malformed.
    public init?(sysfs text: String) {
        // [bl]e:[su]BITS/STORAGE>>SHIFT (the X<repeat> form is not used by IMU channels).
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts[0] == "le" || parts[0] == "be" else { return nil }
        var rest = Substring(parts[1])
        guard let sign = rest.first, "suSU".contains(sign) else { return nil }
        rest = rest.dropFirst()
        let slash = rest.split(separator: "/")
        guard slash.count == 2, let bits = Int(slash[0]) else { return nil }
        let storageAndShift = slash[1].components(separatedBy: ">>")
        guard storageAndShift.count == 2, let storage = Int(storageAndShift[0]),
            let shift = Int(storageAndShift[1]), [8, 16, 32, 64].contains(storage),
            bits > 0, bits + shift <= storage
        else { return nil }
        self.init(
            bigEndian: parts[0] == "be", signed: sign == "s" || sign == "S", bits: bits,
            storageBytes: storage / 8, shift: shift)
    }

    /// Decodes the element at `pointer` into its integer value (sign-extended when signed).
    @inlinable
    public func decode(_ pointer: UnsafeRawPointer) -> Int64 {
        var word: UInt64
        switch storageBytes {
        case 1: word = UInt64(pointer.load(as: UInt8.self))
        case 2:
            let v = pointer.loadUnaligned(as: UInt16.self)
            word = UInt64(bigEndian ? UInt16(bigEndian: v) : UInt16(littleEndian: v))
        case 4:
            let v = pointer.loadUnaligned(as: UInt32.self)
            word = UInt64(bigEndian ? UInt32(bigEndian: v) : UInt32(littleEndian: v))
        default:
            let v = pointer.loadUnaligned(as: UInt64.self)
            word = bigEndian ? UInt64(bigEndian: v) : UInt64(littleEndian: v)
        }
        word >>= UInt64(shift)
        if bits < 64 {
            let mask = (UInt64(1) << UInt64(bits)) - 1
            word &= mask
            if signed && word & (UInt64(1) << UInt64(bits - 1)) != 0 { word |= ~mask }
        }
        return Int64(bitPattern: word)
    }
}

/// Turns a channel's integer value into SI units the way the IIO ABI defines:
/// value = (raw + offset) × scale.
public struct IIOChannelScale: Sendable, Equatable {
    /// `in_*_scale`: SI units per count.
    public var scale: Double
    /// `in_*_offset`: counts added before scaling.
    public var offset: Double

    /// A conversion from its sysfs values.
    public init(scale: Double, offset: Double) { self.scale = scale; self.offset = offset }

    /// A raw value in SI units.
    @inlinable public func si(_ raw: Int64) -> Double { (Double(raw) + offset) * scale }
}

/// Parsing helpers for IIO attribute text.
public enum IIOText {
    /// Parses a mount matrix, "x1, y1, z1; x2, y2, z2; x3, y3, z3" (rows), as the kernel prints it.
    public static func mountMatrix(_ text: String) -> Matrix3? {
        let rows = text.split(separator: ";")
        guard rows.count == 3 else { return nil }
        var values: [Double] = []
        for row in rows {
            let cells = row.split(separator: ",")
            guard cells.count == 3 else { return nil }
            for cell in cells {
                guard let v = Double(cell.trimmingWhitespace()), v.isFinite else {
                    return nil
                }
                values.append(v)
            }
        }
        return Matrix3(rowMajor: values)
    }

    /// Chooses the offered rate nearest to `requested` from a `*_available` list ("12.5 26 52");
    /// on a tie the higher rate wins (more samples rather than fewer). Returns the entry's text
    /// (written back verbatim, so the driver sees a value it printed) and its value.
    public static func nearestRate(to requested: Double, available text: String) -> (text: String, value: Double)? {
        let offers = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
            .compactMap { token -> (String, Double)? in
                guard let v = Double(token), v > 0 else { return nil }
                return (String(token), v)
            }
        return offers.min { a, b in
            let da = abs(a.1 - requested), db = abs(b.1 - requested)
            return da != db ? da < db : a.1 > b.1
        }.map { (text: $0.0, value: $0.1) }
    }

    /// A rate as text for sysfs: integral rates without a fraction ("60"), others with three
    /// decimals ("12.500") as drivers print them.
    public static func rateText(_ hz: Double) -> String {
        hz == hz.rounded() && abs(hz) < 1e15 ? String(Int64(saturating: hz)) : cFormat("%.3f", hz)
    }

    /// The name of device `number`'s own trigger among `triggers`: "<name>-dev<N>" (the kernel's
    /// data-ready triggers), else the first starting with "<name>-" ("lis3dh-trigger", as
    /// st_sensors names them) that is not another device's "-dev<M>", else the first
    /// "<anything>-dev<N>" (iio-sensor-proxy's rule, for HID-style triggers named after the sensor
    /// type). Nil when none is.
    public static func ownTrigger(deviceName: String, number: Int?, among triggers: [String]) -> String? {
        let suffix = number.map { "-dev\($0)" }
        if let suffix, let exact = triggers.first(where: { $0 == deviceName + suffix }) { return exact }
        func isOtherDevices(_ t: String) -> Bool {
            let digits = t.reversed().prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, t.dropLast(digits.count).hasSuffix("-dev") else { return false }
            return Int(String(digits.reversed())) != number
        }
        if let prefixed = triggers.first(where: { $0.hasPrefix("\(deviceName)-") && !isOtherDevices($0) }) {
            return prefixed
        }
        guard let suffix else { return nil }
        return triggers.first { $0.hasSuffix(suffix) && $0.count > suffix.count }
    }
}
