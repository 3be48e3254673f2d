/// Appends JSON text to a byte buffer. Hand-written because it runs once per event on the
/// per-sample path, where Foundation's encoders cost tens of microseconds.
public struct JSONWriter: Sendable {
    /// The UTF-8 written so far.
    public var bytes: [UInt8]
    /// One bit per open container: set once it holds a value (so the next one needs a comma).
    /// A bit set instead of a stack keeps the writer allocation-free; nesting is capped at 64.
    private var commaBits: UInt64 = 0
    private var depth = 0

    /// An empty writer reserving `capacity` bytes.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: structure

    /// Opens an object `{`.
    public mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); push() }
    /// Closes the innermost object `}`.
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")); depth -= 1 }
    /// Opens an array `[`.
    public mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); push() }
    /// Closes the innermost array `]`.
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")); depth -= 1 }

    private mutating func push() {
        precondition(depth < 64, "JSON nesting deeper than 64")
        depth += 1
        commaBits &= ~(1 << UInt64(depth - 1))
    }

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
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << UInt64(depth - 1)
        if commaBits & bit != 0 { bytes.append(UInt8(ascii: ",")) }
        commaBits |= bit
    }

    // MARK: values

    /// Writes `null`.
    public mutating func null() { separate(); appendASCII("null") }
    /// Writes `true` or `false`.
    public mutating func bool(_ b: Bool) {
        separate()
        appendASCII(b ? "true" : "false")
    }

    /// Appends a literal without building an intermediate array.
    private mutating func appendASCII(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
    /// Writes an integer.
    public mutating func int(_ i: Int64) { separate(); appendInt(i) }
    /// Writes an integer.
    public mutating func int(_ i: Int) { int(Int64(i)) }
    /// Non-finite numbers are written as null (JSON has no NaN).
    public mutating func double(_ d: Double) {
        separate()
        guard d.isFinite else { appendASCII("null"); return }
        if d == d.rounded(), abs(d) < 1e15 {
            appendInt(Int64(d))
        } else {
            bytes.append(contentsOf: d.description.utf8)
        }
    }
    /// A number rounded to `digits` decimals (trailing zeros dropped): keeps high-rate lines
    /// short, and is formatted with integer arithmetic, several times faster than `description`.
    public mutating func double(_ d: Double, digits: Int) {
        let digits = min(max(digits, 0), 9)
        let p = Self.power(digits)
        let scaled = (d * p).rounded()
        guard d.isFinite, abs(scaled) < 9e15 else { double(d); return }
        separate()
        let negative = scaled < 0
        let n = UInt64(abs(scaled))
        let unit = UInt64(p)
        var frac = n % unit
        var width = digits
        while frac != 0 && frac % 10 == 0 { frac /= 10; width -= 1 }
        // Digits are written right to left into a stack buffer, then appended at once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buf in
            var i = 32
            if frac != 0 {
                for _ in 0..<width { i -= 1; buf[i] = UInt8(48 + frac % 10); frac /= 10 }
                i -= 1; buf[i] = UInt8(ascii: ".")
            }
            var whole = n / unit
            repeat { i -= 1; buf[i] = UInt8(48 + whole % 10); whole /= 10 } while whole > 0
            if negative && (n != 0) { i -= 1; buf[i] = UInt8(ascii: "-") }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buf[i...]))
        }
    }

    private static func power(_ n: Int) -> Double {
        var p = 1.0
        for _ in 0..<n { p *= 10 }
        return p
    }

    /// Writes a string, escaped.
    public mutating func string(_ s: String) { separate(); appendString(s) }

    /// Writes any JSON value.
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

    /// Writes `"k":"v"`.
    public mutating func field(_ k: String, _ v: String) { key(k); string(v) }
    /// Writes `"k":v`.
    public mutating func field(_ k: String, _ v: Int64) { key(k); int(v) }
    /// Writes `"k":v`.
    public mutating func field(_ k: String, _ v: Int) { key(k); int(Int64(v)) }
    /// Writes `"k":true|false`.
    public mutating func field(_ k: String, _ v: Bool) { key(k); bool(v) }
    /// Writes `"k":v` with at most `digits` decimals.
    public mutating func field(_ k: String, _ v: Double, digits: Int) { key(k); double(v, digits: digits) }
    /// Writes `"k":` and any value.
    public mutating func field(_ k: String, _ v: JSONValue) { key(k); value(v) }
    /// Writes `"k":[x,y,z]` with at most `digits` decimals.
    public mutating func field(_ k: String, _ v: Vector3, digits: Int) {
        key(k); beginArray(); double(v.x, digits: digits); double(v.y, digits: digits); double(v.z, digits: digits); endArray()
    }

    // MARK: primitives

    private mutating func appendInt(_ i: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buf in
            var v = i.magnitude
            var n = 24
            repeat { n -= 1; buf[n] = UInt8(48 + v % 10); v /= 10 } while v > 0
            if i < 0 { n -= 1; buf[n] = UInt8(ascii: "-") }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buf[n...]))
        }
    }

    private mutating func appendString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings (keys, class names) need no escaping: copy them whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            bytes.append(contentsOf: s.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
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
