// SPDX-License-Identifier: Apache-2.0
/// A strict JSON parser (RFC 8259) for client command lines.
///
/// Written here rather than using Foundation's so that what a client may send is bounded and
/// precise: nesting depth is limited, duplicate keys keep the last value, numbers keep
/// integer-ness, and every failure says where. It is fuzzed (scripts/fuzz).
public struct JSONParser {
    /// Why and where parsing failed (byte offset into the input).
    public struct Error: Swift.Error, Equatable, CustomStringConvertible {
        /// What is wrong.
        public var message: String
        /// The byte offset where it was found.
        public var offset: Int
        /// "message at byte N", as error replies say.
        public var description: String { "\(message) at byte \(offset)" }
    }

    /// The deepest nesting accepted (a request needs 2).
    public static let maxDepth = 32

    /// Parses one complete JSON text; trailing non-space bytes are an error.
    public static func parse<C: Collection>(_ input: C) throws(Error) -> JSONValue where C.Element == UInt8 {
        let bytes = Array(input)
        var p = JSONParser(bytes: bytes)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == bytes.count else { throw p.fail("unexpected data after the JSON value") }
        return v
    }

    /// Parses a string.
    public static func parse(_ text: String) throws(Error) -> JSONValue { try parse(Array(text.utf8)) }

    private let bytes: [UInt8]
    private var i = 0

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func fail(_ m: String) -> Error { Error(message: m, offset: i) }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
    }

    private mutating func value(depth: Int) throws(Error) -> JSONValue {
        guard depth < Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: String) throws(Error) {
        for c in word.utf8 {
            guard i < bytes.count, bytes[i] == c else { throw fail("invalid literal") }
            i += 1
        }
    }

    private mutating func object(depth: Int) throws(Error) -> JSONValue {
        i += 1
        var o = JSONObject()
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let k = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            o[k] = try value(depth: depth + 1)
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(o) }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func array(depth: Int) throws(Error) -> JSONValue {
        i += 1
        var a: [JSONValue] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
        while true {
            skipSpace()
            a.append(try value(depth: depth + 1))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(a) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func hex4() throws(Error) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - 55)
            default: throw fail("bad hex digit in \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    private mutating func string() throws(Error) -> String {
        i += 1  // opening quote
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c < 0x20 { throw fail("control character in string") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw fail("unterminated escape") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw fail("lone surrogate")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("bad surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw fail("lone surrogate")
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("invalid code point") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: throw fail("invalid escape")
            }
        }
        // Reject invalid UTF-8 rather than silently replacing it.
        guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
        return s
    }

    private mutating func number() throws(Error) -> JSONValue {
        let start = i
        var isInt = true
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count else { throw fail("truncated number") }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[i]) {
            while i < bytes.count, (48...57).contains(bytes[i]) { i += 1 }
        } else {
            throw fail("invalid number")
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInt = false
            i += 1
            guard i < bytes.count, (48...57).contains(bytes[i]) else { throw fail("digits expected after '.'") }
            while i < bytes.count, (48...57).contains(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInt = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, (48...57).contains(bytes[i]) else { throw fail("digits expected in exponent") }
            while i < bytes.count, (48...57).contains(bytes[i]) { i += 1 }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInt, let v = Int64(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else { throw Error(message: "number out of range", offset: start) }
        return .double(d)
    }
}
