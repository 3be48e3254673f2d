// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// Reads TOML's pieces — spaces, comments, keys and values — from the UTF-8 bytes of a document,
/// keeping the line number for errors. `TOMLParser` drives it one statement at a time.
///
/// Every read checks its index against `bytes.count`, so no input can make it crash, every loop
/// consumes at least one byte, so none can make it hang, and nesting is capped at `maxDepth`, so
/// none can exhaust the stack.
struct TOMLValueReader {
    /// The document: UTF-8, without a byte order mark, with each CRLF turned into LF.
    let bytes: [UInt8]
    /// The index of the next byte to read.
    var pos = 0
    /// The 1-based line that `pos` is on.
    var line = 1
    /// Arrays, inline tables and inline-table key parts around the value being read.
    private var depth = 0
    /// The deepest nesting accepted (arrays, inline tables, parts of one key): deeper input is an
    /// error rather than a deeper recursion.
    static let maxDepth = 100

    /// A reader at the start of `text`.
    init(_ text: String) {
        var b = Array(text.utf8)
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { b.removeFirst(3) }
        // TOML's newline is LF or CRLF. Dropping the CR of each CRLF up front (as tomllib does) spares
        // every other rule from knowing; a lone CR stays, and is refused wherever it appears.
        if b.contains(0x0D) {
            var out: [UInt8] = []
            out.reserveCapacity(b.count)
            for (k, c) in b.enumerated() where !(c == 0x0D && k + 1 < b.count && b[k + 1] == 0x0A) { out.append(c) }
            b = out
        }
        bytes = b
    }

    // MARK: Positions and errors

    /// The byte `k` places after the current one, or nil past the end.
    func peek(_ k: Int = 0) -> UInt8? { pos + k < bytes.count ? bytes[pos + k] : nil }

    /// An error on the current line; `message` is what follows `syntax error: `.
    func error(_ message: String) -> TOMLSyntaxError {
        TOMLSyntaxError(line: line, message: "syntax error: " + message)
    }

    /// The current character in words, for messages: `'x'`, `the end of the line`, `U+0007`, ….
    func found() -> String {
        guard let c = peek() else { return "the end of the file" }
        if c == 0x0A { return "the end of the line" }
        if c == 0x20 { return "a space" }
        if c < 0x20 || c == 0x7F {
            return "control character U+00" + (c < 0x10 ? "0" : "") + String(c, radix: 16, uppercase: true)
        }
        // A non-ASCII character is 2 to 4 bytes; decoding up to 4 yields it whole as the first scalar.
        let scalar = String(decoding: bytes[pos..<min(pos + 4, bytes.count)], as: UTF8.self).unicodeScalars.first
        return "'\(scalar.map { String($0) } ?? "?")'"
    }

    /// True for ASCII control characters other than tab, which TOML allows in no string or comment.
    static func isControl(_ c: UInt8) -> Bool { (c < 0x20 && c != 0x09) || c == 0x7F }
    /// True for the characters of a bare key: `A-Z a-z 0-9 _ -`.
    static func isBareKeyByte(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == 0x5F || c == 0x2D
    }
    /// True for a byte that can start a key: a bare-key character or a quote.
    static func startsKey(_ c: UInt8) -> Bool { isBareKeyByte(c) || c == 0x22 || c == 0x27 }
    static func isDigit(_ c: UInt8) -> Bool { (0x30...0x39).contains(c) }

    // MARK: Spaces, comments, line ends

    /// Skips spaces and tabs (TOML's only whitespace within a line).
    mutating func skipSpaces() { while let c = peek(), c == 0x20 || c == 0x09 { pos += 1 } }

    /// Skips a `#` comment if one starts here, up to (not including) the end of its line.
    mutating func skipComment() throws(TOMLSyntaxError) {
        guard peek() == UInt8(ascii: "#") else { return }
        while let c = peek(), c != 0x0A {
            if Self.isControl(c) { throw error("\(found()) in a comment") }
            pos += 1
        }
    }

    /// Ends a statement: spaces and a comment may follow `what`, then a newline (consumed) or the end.
    mutating func finishLine(after what: String) throws(TOMLSyntaxError) {
        skipSpaces()
        try skipComment()
        guard let c = peek() else { return }
        guard c == 0x0A else { throw error("expected the end of the line after \(what), found \(found())") }
        pos += 1
        line += 1
    }

    /// Skips what may stand between the values of an array: spaces, newlines and comments.
    private mutating func skipArrayFiller() throws(TOMLSyntaxError) {
        while true {
            skipSpaces()
            try skipComment()
            guard peek() == 0x0A else { return }
            pos += 1
            line += 1
        }
    }

    // MARK: Keys

    /// Reads a key — `a`, `"a b"`, `a.'b'.c` — as its parts, and the spaces after it.
    mutating func readKey() throws(TOMLSyntaxError) -> [String] {
        var parts: [String] = []
        while true {
            skipSpaces()
            guard let c = peek(), Self.startsKey(c) else {
                throw error("expected a key\(parts.isEmpty ? "" : " after '.'"), found \(found())")
            }
            if c == 0x22 || c == 0x27 {
                if peek(1) == c && peek(2) == c { throw error("a key cannot be a multi-line string") }
                parts.append(try readString())
            } else {
                let start = pos
                while let b = peek(), Self.isBareKeyByte(b) { pos += 1 }
                parts.append(String(decoding: bytes[start..<pos], as: UTF8.self))
            }
            if parts.count + depth > Self.maxDepth {
                throw error("keys and values nested more than \(Self.maxDepth) deep")
            }
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return parts }
            pos += 1
        }
    }

    // MARK: Values

    /// Reads one value: a string, number, boolean, date or time (kept as written, as a string),
    /// array or inline table.
    mutating func readValue() throws(TOMLSyntaxError) -> JSONValue {
        switch peek() ?? 0 {
        case 0x22, 0x27: return .string(try readString())
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "{"): return try readInlineTable()
        default: return try readBareValue()
        }
    }

    /// Reads a basic (`"`) or literal (`'`) string, single- or multi-line, starting at its quote.
    mutating func readString() throws(TOMLSyntaxError) -> String {
        let q = bytes[pos], startLine = line
        let multi = peek(1) == q && peek(2) == q
        pos += multi ? 3 : 1
        // A newline right after the opening quotes is not part of a multi-line string.
        if multi && peek() == 0x0A { pos += 1; line += 1 }
        var out: [UInt8] = []
        while true {
            guard let c = peek() else {
                throw TOMLSyntaxError(line: startLine, message: "syntax error: unterminated string")
            }
            if c == q {
                pos += 1
                if !multi { break }
                guard peek() == q && peek(1) == q else { out.append(q); continue }
                pos += 2
                // Quotes right before the closing three belong to the content: `"""a""""` is `a"`.
                for _ in 0..<2 where peek() == q { out.append(q); pos += 1 }
                break
            } else if c == 0x0A {
                guard multi else { throw error("unterminated string") }
                out.append(c); pos += 1; line += 1
            } else if c == 0x5C && q == 0x22 {
                try readEscape(into: &out, multiLine: multi)
            } else if Self.isControl(c) {
                throw error("\(found()) in a string (write it as an escape such as \\u0007)")
            } else {
                out.append(c); pos += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads a backslash escape of a basic string (at the `\`) into `out`.
    private mutating func readEscape(into out: inout [UInt8], multiLine: Bool) throws(TOMLSyntaxError) {
        let e = peek(1) ?? 0
        let simple: [UInt8: UInt8] = [
            0x62: 0x08, 0x74: 0x09, 0x6E: 0x0A, 0x66: 0x0C, 0x72: 0x0D, 0x22: 0x22, 0x5C: 0x5C,
        ]
        if let s = simple[e] {
            out.append(s); pos += 2
        } else if e == UInt8(ascii: "u") || e == UInt8(ascii: "U") {
            let count = e == UInt8(ascii: "u") ? 4 : 8
            var v: UInt32 = 0
            for k in 0..<count {
                guard let d = peek(2 + k), let h = UInt32(String(UnicodeScalar(d)), radix: 16) else {
                    throw error("\\\(Character(UnicodeScalar(e))) needs \(count) hex digits in a string")
                }
                v = v << 4 | h
            }
            guard let scalar = Unicode.Scalar(v) else {
                throw error(
                    "\\\(Character(UnicodeScalar(e))) escape \(String(v, radix: 16)) is not a Unicode scalar value")
            }
            UTF8.encode(scalar) { out.append($0) }
            pos += 2 + count
        } else if multiLine && (e == 0x20 || e == 0x09 || e == 0x0A) {
            // A backslash that ends a line joins it to the next: the newline and all the spaces
            // and newlines after it are dropped. Only spaces may stand between `\` and the newline.
            pos += 1
            skipSpaces()
            guard peek() == 0x0A || peek() == nil else {
                throw error("a '\\' followed by a space in a multi-line string must end its line")
            }
            while let c = peek(), c == 0x20 || c == 0x09 || c == 0x0A {
                if c == 0x0A { line += 1 }
                pos += 1
            }
        } else {
            pos += 1
            throw error("invalid escape '\\\(peek().map { String(UnicodeScalar($0)) } ?? "")' in a string")
        }
    }

    /// Nests one level deeper, or refuses to.
    private mutating func enter(_ levels: Int = 1) throws(TOMLSyntaxError) {
        depth += levels
        if depth > Self.maxDepth { throw error("values nested more than \(Self.maxDepth) deep") }
    }

    /// Reads an array (at its `[`): values of any types, over several lines if need be, with comments
    /// and a trailing comma allowed.
    private mutating func readArray() throws(TOMLSyntaxError) -> JSONValue {
        try enter()
        let startLine = line
        pos += 1
        var items: [JSONValue] = []
        while true {
            try skipArrayFiller()
            guard let c = peek() else {
                throw TOMLSyntaxError(line: startLine, message: "syntax error: unterminated array (no ']')")
            }
            if c == UInt8(ascii: "]") { break }
            // This exact message is relied on by tests (a `}` once crashed toml++ here).
            if c == UInt8(ascii: "}") { throw error("'}' inside an array (expected a value or ']')") }
            if c == UInt8(ascii: ",") { throw error("expected a value or ']' in an array, found ','") }
            items.append(try readValue())
            try skipArrayFiller()
            guard peek() == UInt8(ascii: ",") else {
                if peek() == UInt8(ascii: "]") { break }
                throw error("expected ',' or ']' after a value in an array, found \(found())")
            }
            pos += 1
        }
        pos += 1
        depth -= 1
        return .array(items)
    }

    /// Reads an inline table (at its `{`): `{ key = value, … }` on one line, no trailing comma.
    private mutating func readInlineTable() throws(TOMLSyntaxError) -> JSONValue {
        try enter()
        pos += 1
        let table = TOMLTableBuilder()
        skipSpaces()
        if peek() == UInt8(ascii: "}") {
            pos += 1
            depth -= 1
            return .object(JSONObject())
        }
        while true {
            skipSpaces()
            guard let c = peek(), Self.startsKey(c) else {
                if peek() == UInt8(ascii: "}") { throw error("an inline table cannot end with ','") }
                throw error("expected a key in an inline table, found \(found())")
            }
            let keyLine = line
            let key = try readKey()
            guard peek() == UInt8(ascii: "=") else { throw error("expected '=' after the key") }
            pos += 1
            skipSpaces()
            // Each part of a dotted key is one more level of tables around the value.
            try enter(key.count - 1)
            let value = try readValue()
            depth -= key.count - 1
            try table.insert(key, value, section: 0, line: keyLine)
            skipSpaces()
            if peek() == UInt8(ascii: "}") { break }
            guard peek() == UInt8(ascii: ",") else {
                if peek() == 0x0A || peek() == nil {
                    throw error("an inline table must be closed with '}' on its line")
                }
                throw error("expected ',' or '}' after a value in an inline table, found \(found())")
            }
            pos += 1
        }
        pos += 1
        depth -= 1
        return .object(table.json())
    }

    /// Reads an unquoted value: a boolean, number, `inf`/`nan`, date, time or date-time.
    private mutating func readBareValue() throws(TOMLSyntaxError) -> JSONValue {
        // Take the longest run of characters any such value can contain, then see what it is: this
        // gives one message for the whole of `1_000x` instead of an error about the `x`.
        func isTokenByte(_ c: UInt8) -> Bool { Self.isBareKeyByte(c) || c == 0x2B || c == 0x2E || c == 0x3A }
        let start = pos
        while let c = peek(), isTokenByte(c) { pos += 1 }
        // A date, a space, then a digit: a date-time written with a space instead of the `T`.
        if pos - start == 10, Self.isDateShaped(bytes[start..<pos]), peek() == 0x20, let d = peek(1), Self.isDigit(d) {
            pos += 1
            while let c = peek(), isTokenByte(c) { pos += 1 }
        }
        let t = bytes[start..<pos]
        let text = String(decoding: t, as: UTF8.self)
        guard !t.isEmpty else { throw error("expected a value, found \(found())") }
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf": return .double(.infinity)
        case "-inf": return .double(-.infinity)
        case "nan", "+nan": return .double(.nan)
        case "-nan": return .double(-.nan)
        default: break
        }
        if t.count >= 10 && Self.isDateShaped(t.prefix(10)) { return try dateTime(t, text) }
        if t.count >= 3 && t[start + 2] == UInt8(ascii: ":") {
            guard Self.timeLength(t) == t.count else {
                throw error("invalid time '\(Self.excerpt(text))', expected like 07:32:00")
            }
            return .string(text)
        }
        return try number(t, text)
    }
}
