/// Appends JSON text to a byte buffer. Hand-written because it runs once per event on the
/// per-sample path, where Foundation's encoders cost tens of microseconds.
public struct JSONWriter: Sendable {
    public var bytes: [UInt8]
    private var needsComma: [Bool] = []

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: structure

    public mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma.removeLast() }
    public mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma.removeLast() }

    /// Writes `"name":` inside an object; the next value call writes the value.
    public mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }
    private var afterKey = false

    /// Writes the comma between siblings; a value right after its key needs none.
    private mutating func separate() {
        if afterKey { afterKey = false; return }
        guard let top = needsComma.indices.last else { return }
        if needsComma[top] { bytes.append(UInt8(ascii: ",")) }
        needsComma[top] = true
    }

    // MARK: values

    public mutating func null() { separate(); bytes.append(contentsOf: [110, 117, 108, 108]) }
    public mutating func bool(_ b: Bool) {
        separate()
        if b { bytes.append(contentsOf: [116, 114, 117, 101]) } else { bytes.append(contentsOf: [102, 97, 108, 115, 101]) }
    }
    public mutating func int(_ i: Int64) { separate(); appendInt(i) }
    public mutating func int(_ i: Int) { int(Int64(i)) }
    /// Non-finite numbers are written as null (JSON has no NaN).
    public mutating func double(_ d: Double) {
        separate()
        guard d.isFinite else { bytes.append(contentsOf: [110, 117, 108, 108]); return }
        if d == d.rounded(), abs(d) < 1e15 {
            appendInt(Int64(d))
        } else {
            bytes.append(contentsOf: d.description.utf8)
        }
    }
    /// A number rounded to `digits` decimals: keeps high-rate lines short.
    public mutating func double(_ d: Double, digits: Int) {
        guard d.isFinite else { double(d); return }
        let p = Self.powers[min(max(digits, 0), 9)]
        let r = (d * p).rounded() / p
        double(r)
    }
    private static let powers: [Double] = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    public mutating func string(_ s: String) { separate(); appendString(s) }

    public mutating func value(_ v: JSONValue) {
        switch v {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let a):
            beginArray()
            for e in a { value(e) }
            endArray()
        case .object(let o):
            beginObject()
            for (k, e) in o.entries { key(k); value(e) }
            endObject()
        }
    }

    // MARK: key + value shorthands

    public mutating func field(_ k: String, _ v: String) { key(k); string(v) }
    public mutating func field(_ k: String, _ v: Int64) { key(k); int(v) }
    public mutating func field(_ k: String, _ v: Int) { key(k); int(Int64(v)) }
    public mutating func field(_ k: String, _ v: Bool) { key(k); bool(v) }
    public mutating func field(_ k: String, _ v: Double, digits: Int) { key(k); double(v, digits: digits) }
    public mutating func field(_ k: String, _ v: JSONValue) { key(k); value(v) }
    public mutating func field(_ k: String, _ v: Vector3, digits: Int) {
        key(k); beginArray(); double(v.x, digits: digits); double(v.y, digits: digits); double(v.z, digits: digits); endArray()
    }

    // MARK: primitives

    private mutating func appendInt(_ i: Int64) {
        if i == 0 { bytes.append(48); return }
        var v = i.magnitude
        if i < 0 { bytes.append(UInt8(ascii: "-")) }
        var tmp: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                  UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &tmp) { buf in
            while v > 0 { buf[n] = UInt8(48 + v % 10); v /= 10; n += 1 }
            for j in stride(from: n - 1, through: 0, by: -1) { bytes.append(buf[j]) }
        }
    }

    private mutating func appendString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): bytes.append(92); bytes.append(34)
            case UInt8(ascii: "\\"): bytes.append(92); bytes.append(92)
            case 0x0A: bytes.append(92); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(92); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(92); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// Compact JSON text of this value.
    public var jsonText: String {
        var w = JSONWriter()
        w.value(self)
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
