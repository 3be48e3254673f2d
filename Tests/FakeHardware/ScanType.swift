// SPDX-License-Identifier: Apache-2.0
/// The storage format of one IIO scan element, as the kernel writes it in
/// `scan_elements/*_type`: `[be|le]:[s|u]BITS/STORAGE>>SHIFT`.
public struct ScanType: Sendable, Equatable {
    public var bigEndian: Bool
    public var signed: Bool
    /// Significant bits of the value.
    public var realBits: Int
    /// Bits the element occupies in the scan (8, 16, 32 or 64).
    public var storageBits: Int
    /// Left shift of the value inside its storage.
    public var shift: Int

    public init(bigEndian: Bool, signed: Bool, realBits: Int, storageBits: Int, shift: Int = 0) {
        precondition([8, 16, 32, 64].contains(storageBits), "storage must be 8, 16, 32 or 64 bits")
        precondition(realBits + shift <= storageBits, "value does not fit its storage")
        self.bigEndian = bigEndian; self.signed = signed
        self.realBits = realBits; self.storageBits = storageBits; self.shift = shift
    }

    /// `le:s16/16>>0`, the common 16-bit little-endian IMU channel.
    public static let le16 = ScanType(bigEndian: false, signed: true, realBits: 16, storageBits: 16)
    /// `be:s16/16>>0`, as inv_mpu6050 delivers.
    public static let be16 = ScanType(bigEndian: true, signed: true, realBits: 16, storageBits: 16)
    /// `le:s64/64>>0`, the kernel's timestamp element.
    public static let timestamp = ScanType(bigEndian: false, signed: true, realBits: 64, storageBits: 64)

    /// The text of the sysfs `*_type` file.
    public var sysfs: String {
        "\(bigEndian ? "be" : "le"):\(signed ? "s" : "u")\(realBits)/\(storageBits)>>\(shift)"
    }

    /// Bytes the element occupies (and aligns to) in a scan.
    public var storageBytes: Int { storageBits / 8 }

    /// The range of raw values this element can carry.
    public var rawRange: ClosedRange<Int64> {
        if realBits == 64 { return signed ? Int64.min...Int64.max : 0...Int64.max }
        return signed
            ? -(Int64(1) << (realBits - 1))...((Int64(1) << (realBits - 1)) - 1)
            : 0...((Int64(1) << realBits) - 1)
    }

    /// Encodes `raw` exactly as the kernel stores it: masked to `realBits`, shifted, in the
    /// element's byte order. Values outside `rawRange` are clamped (a saturated sensor).
    public func encode(_ raw: Int64) -> [UInt8] {
        let clamped = min(max(raw, rawRange.lowerBound), rawRange.upperBound)
        let mask: UInt64 = realBits == 64 ? ~0 : (UInt64(1) << realBits) - 1
        let word = (UInt64(bitPattern: clamped) & mask) << UInt64(shift)
        var bytes = (0..<storageBytes).map { UInt8(truncatingIfNeeded: word >> UInt64(8 * $0)) }
        if bigEndian { bytes.reverse() }
        return bytes
    }
}
