// SPDX-License-Identifier: Apache-2.0
/// Appends JSON text to a byte buffer. Hand-written because it runs once per event on the
/// per-sample path, where Foundation's encoders cost tens of microseconds.
///
/// Why it is non-copyable and writes through a pointer: the per-sample lines are written into
/// stack memory (`init(over:)`, as `Event.withEncoded` does) and copied once into the line the
/// hub shares, so the hot path allocates nothing of its own. Growing a Swift Array an append at
/// a time cost a uniqueness check, a capacity check and a `memmove` call per number, and each
/// new `[UInt8]` a generic-metadata lookup in the runtime (bench/pipeline). A writer that
/// outgrows the caller's memory moves to the heap and frees it when it goes away.
public struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var used = 0
    /// Whether `base` was allocated by the writer (freed in `deinit`), not lent by the caller.
    private var owned: Bool
    /// One bit per open container: set once it holds a value (so the next one needs a comma).
    /// A bit set instead of a stack keeps the writer allocation-free; nesting is capped at 64.
    private var commaBits: UInt64 = 0
    private var depth = 0
    private var afterKey = false

    /// An empty writer with `capacity` bytes on the heap.
    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        owned = true
    }

    /// An empty writer that writes into `buffer` until it is full (then moves to the heap).
    /// The caller keeps `buffer` alive for the writer's lifetime.
    public init(over buffer: UnsafeMutableBufferPointer<UInt8>) {
        precondition(buffer.count > 0, "an empty buffer")
        base = buffer.baseAddress!
        capacity = buffer.count
        owned = false
    }

    deinit { if owned { base.deallocate() } }

    /// A copy of the UTF-8 written so far.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: used)) }
    /// The text written so far.
    public var text: String { String(decoding: UnsafeBufferPointer(start: base, count: used), as: UTF8.self) }
    /// Calls `body` with the UTF-8 written so far (valid only inside `body`).
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: used))
    }

    /// Appends a byte outside the JSON grammar (the newline that ends a line).
    public mutating func appendRaw(_ b: UInt8) { raw(b) }

    // MARK: storage

    /// Makes room for `n` more bytes and lets `body` store them from the given position on;
    /// `body` returns how many it stored.
    @inline(__always)
    private mutating func write(upTo n: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        if capacity - used < n { grow(by: n) }
        used += body(base + used)
    }

    private mutating func grow(by n: Int) {
        let newCapacity = max(capacity * 2, used + n)
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        p.update(from: base, count: used)
        if owned { base.deallocate() }
        base = p
        capacity = newCapacity
        owned = true
    }

    /// Appends one byte.
    @inline(__always)
    private mutating func raw(_ b: UInt8) {
        write(upTo: 1) { p in
            p[0] = b; return 1
        }
    }

    /// Appends bytes.
    private mutating func raw(_ b: UnsafeBufferPointer<UInt8>) {
        guard let source = b.baseAddress else { return }
        write(upTo: b.count) { p in
            p.update(from: source, count: b.count); return b.count
        }
    }

    // MARK: structure

    /// Opens an object `{`.
    public mutating func beginObject() { separate(); raw(UInt8(ascii: "{")); push() }
    /// Closes the innermost object `}`.
    public mutating func endObject() { raw(UInt8(ascii: "}")); depth -= 1 }
    /// Opens an array `[`.
    public mutating func beginArray() { separate(); raw(UInt8(ascii: "[")); push() }
    /// Closes the innermost array `]`.
    public mutating func endArray() { raw(UInt8(ascii: "]")); depth -= 1 }

    private mutating func push() {
        precondition(depth < 64, "JSON nesting deeper than 64")
        depth += 1
        commaBits &= ~(1 << UInt64(depth - 1))
    }

    /// Writes `"name":` inside an object; the next value call writes the value.
    public mutating func key(_ name: String) {
        separate()
        appendString(name)
        raw(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Writes `"name":` for a key known at compile time to need no escaping (the encoders'
    /// own field names): no scan, one copy.
    public mutating func key(literal name: StaticString) {
        separate()
        let n = name.utf8CodeUnitCount
        let source = name.utf8Start
        write(upTo: n + 3) { p in
            p[0] = UInt8(ascii: "\"")
            (p + 1).update(from: source, count: n)
            p[n + 1] = UInt8(ascii: "\"")
            p[n + 2] = UInt8(ascii: ":")
            return n + 3
        }
        afterKey = true
    }

    /// Writes the comma between siblings; a value right after its key needs none.
    @inline(__always)
    private mutating func separate() {
        if afterKey { afterKey = false; return }
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << UInt64(depth - 1)
        if commaBits & bit != 0 { raw(UInt8(ascii: ",")) }
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
        s.withUTF8Buffer { raw($0) }
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
            var text = d.description
            text.withUTF8 { raw($0) }
        }
    }

    /// A number rounded to `digits` decimals, trailing zeros dropped unless `trailingZeros`
    /// (then exactly `digits` decimals, as `%.Nf` writes them): keeps high-rate lines short, and
    /// is formatted with integer arithmetic, several times faster than `description`. A number
    /// too large for that (|d|·10^digits ≥ 9·10¹⁵) is written as `description`.
    public mutating func double(_ d: Double, digits: Int, trailingZeros: Bool = false) {
        let digits = min(max(digits, 0), 9)
        let unit = Self.powerOfTen(digits)
        let scaled = d * Double(unit)
        guard d.isFinite, abs(scaled) < 9e15 else { double(d); return }
        separate()
        // Round half away from zero, as `rounded()` does, without the libm call.
        let negative = scaled <= -0.5  // what rounds to 0 is written "0", not "-0"
        // bounded: finite and under 9e15 (the guard above).
        let n = UInt64(abs(scaled) + 0.5)
        var (whole, fraction) = Self.split(n, digits: digits)
        var fractionDigits = digits
        if !trailingZeros {
            if fraction == 0 { fractionDigits = 0 }
            while fractionDigits > 0 && fraction % 10 == 0 { fraction /= 10; fractionDigits -= 1 }
        }
        let wholeDigits = Self.digitCount(whole)
        let length = (negative ? 1 : 0) + wholeDigits + (fractionDigits > 0 ? 1 + fractionDigits : 0)
        write(upTo: length) { p in
            var p = p
            if negative { p[0] = UInt8(ascii: "-"); p += 1 }
            Self.writeDigits(whole, count: wholeDigits, at: p)
            if fractionDigits > 0 {
                p[wholeDigits] = UInt8(ascii: ".")
                Self.writeDigits(fraction, count: fractionDigits, at: p + wholeDigits + 1)
            }
            return length
        }
    }

    /// 10^`digits` for 0…9 (a switch: no array, no lazy global on the per-sample path).
    @inline(__always)
    private static func powerOfTen(_ digits: Int) -> UInt64 {
        switch digits {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1_000
        case 4: 10_000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        default: 1_000_000_000
        }
    }

    /// `n` divided by 10^`digits`, quotient and remainder: one constant divisor per case, which
    /// compiles to a multiplication (a division by a variable costs tens of cycles).
    @inline(__always)
    private static func split(_ n: UInt64, digits: Int) -> (UInt64, UInt64) {
        switch digits {
        case 0: (n, 0)
        case 1: (n / 10, n % 10)
        case 2: (n / 100, n % 100)
        case 3: (n / 1_000, n % 1_000)
        case 4: (n / 10_000, n % 10_000)
        case 5: (n / 100_000, n % 100_000)
        case 6: (n / 1_000_000, n % 1_000_000)
        case 7: (n / 10_000_000, n % 10_000_000)
        case 8: (n / 100_000_000, n % 100_000_000)
        default: (n / 1_000_000_000, n % 1_000_000_000)
        }
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
    /// Writes `[x,y,z]` with at most `digits` decimals (TiltCore adds the `Vector3` spelling).
    public mutating func vector(_ x: Double, _ y: Double, _ z: Double, digits: Int) {
        beginArray(); double(x, digits: digits); double(y, digits: digits); double(z, digits: digits); endArray()
    }

    // MARK: primitives

    private mutating func appendInt(_ i: Int64) {
        let magnitude = i.magnitude
        let count = Self.digitCount(magnitude)
        let length = count + (i < 0 ? 1 : 0)
        write(upTo: length) { p in
            if i < 0 { p[0] = UInt8(ascii: "-") }
            Self.writeDigits(magnitude, count: count, at: p + (length - count))
            return length
        }
    }

    /// How many decimal digits `v` has (1 for 0).
    @inline(__always)
    private static func digitCount(_ v: UInt64) -> Int {
        var count = 1
        var bound: UInt64 = 10
        while count < 19 && v >= bound { count += 1; bound &*= 10 }
        return v >= 10_000_000_000_000_000_000 ? 20 : count
    }

    /// "00" … "99": two digits per division by the constant 100 (a multiplication). A computed
    /// literal, so reading it needs no lazy-global check.
    @inline(__always)
    private static var digitPairs: StaticString {
        // swift-format-ignore
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }

    /// Writes the last `count` decimal digits of `v` (zero-padded) at `p`.
    @inline(__always)
    private static func writeDigits(_ v: UInt64, count: Int, at p: UnsafeMutablePointer<UInt8>) {
        let pairs = digitPairs.utf8Start
        var v = v
        var i = count
        while i >= 2 {
            let r = Int(v % 100)
            v /= 100
            i -= 2
            p[i] = pairs[2 * r]
            p[i + 1] = pairs[2 * r + 1]
        }
        if i == 1 { p[0] = UInt8(truncatingIfNeeded: 48 &+ v % 10) }
    }

    private mutating func appendString(_ s: String) {
        raw(UInt8(ascii: "\""))
        // Most strings (keys, class names) need no escaping: copy them whole, from their
        // contiguous UTF-8 (native strings, small ones included, have it).
        let copied: Bool? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            for b in utf8 where b < 0x20 || b == 0x22 || b == 0x5C { return false }
            raw(utf8)
            return true
        }
        if copied == true {
            raw(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): raw(92); raw(34)
            case UInt8(ascii: "\\"): raw(92); raw(92)
            case 0x0A: raw(92); raw(UInt8(ascii: "n"))
            case 0x0D: raw(92); raw(UInt8(ascii: "r"))
            case 0x09: raw(92); raw(UInt8(ascii: "t"))
            case 0..<0x20:
                let hex = Self.hexDigits.utf8Start
                for c in [92, UInt8(ascii: "u"), 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]] { raw(c) }
            default: raw(b)
            }
        }
        raw(UInt8(ascii: "\""))
    }

    private static var hexDigits: StaticString { "0123456789abcdef" }
}

extension JSONValue {
    /// Compact JSON text of this value.
    public var jsonText: String {
        var w = JSONWriter()
        w.value(self)
        return w.text
    }
}
