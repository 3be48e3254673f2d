/// Finds the TOML syntax errors that toml++ (inside TOMLKit) must not be given.
///
/// toml++ 3.x checks some syntax with assertions instead of errors: it aborts in a debug build,
/// and in a release build the broken assumption is undefined behaviour. scripts/fuzz (config
/// target) found two (inputs in Tests/TiltServiceTests/Fixtures/config-fuzz):
/// - a table header whose `[` or `[[` (and spaces) is not followed by `]`, a quote or a
///   bare-key character: `[[[imu]`, a lone `[` on a line, `[=x]`;
/// - a `}` where an array expects a value: `[1, }`, `[ }`;
/// - the first of these again behind a UTF-8 byte order mark (found in a longer run);
/// - a value `YYYY-MM-DDT` not followed by a digit (`1979-05-27Ttrue`): toml++ then reads a
///   time that is not there.
/// So the text is scanned first — strings, comments and multi-line arrays are read the way
/// TOML reads them — and such a spot is refused with its line, like any other syntax error.
/// Valid TOML never has either, so nothing valid is refused.
enum TOMLPreflight {
    /// What is wrong and where.
    struct Problem: Equatable {
        /// 1-based line.
        var line: Int
        var message: String
    }

    static let badHeader = "syntax error: a table header needs a name after '[' or '[[', like [imu] or [[geofence]]"
    static let braceInArray = "syntax error: '}' inside an array (expected a value or ']')"
    static let dateWithoutTime = "syntax error: a date-time needs a time after 'T', like 1979-05-27T07:32:00Z"

    /// The first spot toml++ cannot be given, or nil if there is none.
    static func firstProblem(_ text: String) -> Problem? {
        let b = Array(text.utf8)
        let n = b.count
        // toml++ skips a UTF-8 byte order mark, so the first line starts after it.
        var i = b.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        var open: [UInt8] = []  // the [ and { of the value being read
        var statementStart = true
        var inValue = false  // after `=` on this line, or inside a value's brackets

        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }
        func isDigit(_ j: Int) -> Bool { j < n && (0x30...0x39).contains(b[j]) }
        /// `YYYY-MM-DD` then `T` or `t` at `j`, and no digit after it.
        func isDateWithoutTime(at j: Int) -> Bool {
            guard j + 11 <= n else { return false }
            for k in [0, 1, 2, 3, 5, 6, 8, 9] where !isDigit(j + k) { return false }
            guard b[j + 4] == 0x2D, b[j + 7] == 0x2D, b[j + 10] == UInt8(ascii: "T") || b[j + 10] == UInt8(ascii: "t")
            else { return false }
            return j + 11 < n && !isDigit(j + 11)
        }
        func isBareKey(_ c: UInt8) -> Bool {
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == 0x5F
                || c == 0x2D
        }
        /// Skips a string starting at `i` (which is a quote); counts the lines it spans.
        func skipString() {
            let q = b[i]
            let multi = i + 2 < n && b[i + 1] == q && b[i + 2] == q
            i += multi ? 3 : 1
            while i < n {
                let c = b[i]
                if c == 0x0A {
                    if !multi { return }  // unterminated: toml++ reports it
                    line += 1
                } else if c == 0x5C && q == 0x22 {
                    // An escape in a basic string: the next byte cannot end it.
                    if i + 1 < n && b[i + 1] == 0x0A { line += 1 }
                    i += 2
                    continue
                } else if c == q {
                    if !multi { i += 1; return }
                    if i + 2 < n && b[i + 1] == q && b[i + 2] == q {
                        i += 3
                        // Up to two more quotes belong to the content ("""a"""" ends with a quote).
                        var extra = 0
                        while extra < 2 && i < n && b[i] == q { i += 1; extra += 1 }
                        return
                    }
                }
                i += 1
            }
        }

        while i < n {
            let c = b[i]
            switch c {
            case 0x0A:
                line += 1
                statementStart = open.isEmpty
                inValue = !open.isEmpty
                i += 1
            case 0x20, 0x09, 0x0D:
                i += 1
            case UInt8(ascii: "#"):
                while i < n && b[i] != 0x0A { i += 1 }
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                skipString()
                statementStart = false
            case UInt8(ascii: "[") where statementStart && open.isEmpty:
                // A table header: what follows `[` or `[[` (after spaces) must start a key.
                var j = i + 1
                while j < n && isSpace(b[j]) { j += 1 }
                if j < n && b[j] == UInt8(ascii: "[") {
                    j += 1
                    while j < n && isSpace(b[j]) { j += 1 }
                }
                if j < n {
                    let k = b[j]
                    if !(k == UInt8(ascii: "]") || k == UInt8(ascii: "\"") || k == UInt8(ascii: "'") || isBareKey(k)) {
                        return Problem(line: line, message: badHeader)
                    }
                }
                statementStart = false
                i = j
            case UInt8(ascii: "="):
                inValue = true
                statementStart = false
                i += 1
            case UInt8(ascii: "0")...UInt8(ascii: "9")
            where inValue && (i == 0 || !(isBareKey(b[i - 1]) || b[i - 1] == UInt8(ascii: "."))):
                if isDateWithoutTime(at: i) { return Problem(line: line, message: dateWithoutTime) }
                statementStart = false
                i += 1
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                open.append(c)
                statementStart = false
                i += 1
            case UInt8(ascii: "}") where open.last == UInt8(ascii: "["):
                return Problem(line: line, message: braceInArray)
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                // A bracket that closes nothing (or the wrong thing) is an error toml++ reports
                // right there, before it could read anything further: stop scanning.
                guard let last = open.last, last == (c == UInt8(ascii: "]") ? UInt8(ascii: "[") : UInt8(ascii: "{"))
                else {
                    if open.isEmpty && c == UInt8(ascii: "]") { i += 1; continue }  // end of a header
                    return nil
                }
                open.removeLast()
                if open.isEmpty { inValue = false }
                i += 1
            default:
                statementStart = false
                i += 1
            }
        }
        return nil
    }
}
