// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol
import XCTest

@testable import TiltConfig

/// TOMLParser: values, the lines map, and each syntax rule with the line it is reported on.
/// (The parser was also checked against Python's tomllib on the toml-test suite and on fuzzed
/// documents; these are the cases worth keeping as regression tests.)
final class TOMLParserTests: XCTestCase {
    func parse(_ text: String) throws -> JSONObject { try TOMLParser.parse(text).root }

    /// Asserts that `text` is refused on `line` with a message containing `message`.
    func assertError(
        _ text: String, line: Int, _ message: String, file: StaticString = #filePath, lineNo: UInt = #line
    ) {
        do {
            let r = try TOMLParser.parse(text)
            XCTFail("accepted: \(text.debugDescription) as \(r.root)", file: file, line: lineNo)
        } catch {
            XCTAssertEqual(error.line, line, "\(text.debugDescription): \(error.message)", file: file, line: lineNo)
            XCTAssertTrue(error.message.hasPrefix("syntax error: "), error.message, file: file, line: lineNo)
            XCTAssertTrue(
                error.message.contains(message), "\(error.message) lacks \(message)", file: file, line: lineNo)
        }
    }

    // MARK: Values

    func testScalars() throws {
        let o = try parse(
            """
            i = -17
            big = 9_223_372_036_854_775_807
            small = -9223372036854775808
            hex = 0xdead_BEEF
            oct = 0o755
            bin = 0b1101
            f = 6.626e-34
            g = 224_617.445_991
            z = -0.0
            t = true
            n = false
            """)
        XCTAssertEqual(o["i"], .int(-17))
        XCTAssertEqual(o["big"], .int(.max))
        XCTAssertEqual(o["small"], .int(.min))
        XCTAssertEqual(o["hex"], .int(0xdead_beef))
        XCTAssertEqual(o["oct"], .int(0o755))
        XCTAssertEqual(o["bin"], .int(13))
        XCTAssertEqual(o["f"], .double(6.626e-34))
        XCTAssertEqual(o["g"], .double(224_617.445_991))
        XCTAssertEqual(o["z"]?.doubleValue?.sign, .minus)
        XCTAssertEqual(o["t"], .bool(true))
        XCTAssertEqual(o["n"], .bool(false))
    }

    func testInfAndNan() throws {
        let o = try parse("a = inf\nb = -inf\nc = +inf\nd = nan\ne = -nan\n")
        XCTAssertEqual(o["a"], .double(.infinity))
        XCTAssertEqual(o["b"], .double(-.infinity))
        XCTAssertEqual(o["c"], .double(.infinity))
        XCTAssertTrue(o["d"]?.doubleValue?.isNaN == true)
        XCTAssertTrue(o["e"]?.doubleValue?.isNaN == true)
    }

    func testStrings() throws {
        let o = try parse(
            #"""
            basic = "tab\there \"q\" \\ \u00E9 \U0001F600"
            literal = 'C:\Users\x'
            ml = """
            Roses \
              are red"""
            quotes = """a""""
            mll = '''
            raw \n '' here'''
            "" = "empty key"
            """#)
        XCTAssertEqual(o["basic"], .string("tab\there \"q\" \\ é 😀"))
        XCTAssertEqual(o["literal"], .string(#"C:\Users\x"#))
        XCTAssertEqual(o["ml"], .string("Roses are red"))
        XCTAssertEqual(o["quotes"], .string("a\""))
        XCTAssertEqual(o["mll"], .string(#"raw \n '' here"#))
        XCTAssertEqual(o[""], .string("empty key"))
    }

    /// Dates and times are checked, then kept as the text written (separator and case too).
    func testDatesAndTimesAreKeptAsWritten() throws {
        let o = try parse(
            "a = 1979-05-27T07:32:00Z\nb = 1979-05-27 07:32:00.999-07:00\nc = 1979-05-27\nd = 07:32:00\n"
                + "e = 2000-02-29t00:00:00z\n")
        XCTAssertEqual(o["a"], .string("1979-05-27T07:32:00Z"))
        XCTAssertEqual(o["b"], .string("1979-05-27 07:32:00.999-07:00"))
        XCTAssertEqual(o["c"], .string("1979-05-27"))
        XCTAssertEqual(o["d"], .string("07:32:00"))
        XCTAssertEqual(o["e"], .string("2000-02-29t00:00:00z"))
    }

    func testArraysAndInlineTables() throws {
        let o = try parse(
            """
            mixed = [1, "two", 3.0, [4], {five = 5}]
            multi = [
              1, # one
              # nothing
              2,
            ]
            point = { x = 1, y.z = 2, y.w = { v = [] } }
            empty = {}
            """)
        XCTAssertEqual(o["mixed"], [1, "two", 3.0, [4], .object(["five": 5])])
        XCTAssertEqual(o["multi"], [1, 2])
        XCTAssertEqual(o["point"], .object(["x": 1, "y": .object(["z": 2, "w": .object(["v": []])])]))
        XCTAssertEqual(o["empty"], .object([:]))
    }

    /// Keys keep the order they were first written in, tables included.
    func testTablesArraysOfTablesAndOrder() throws {
        let o = try parse(
            """
            top = 1
            [imu]
            rate_hz = 60
            [a.b]
            c = 1
            [a]
            d = 2
            [[geofence]]
            name = "home"
            [geofence.area]
            r = 50
            [[geofence]]
            name = "work"
            """)
        XCTAssertEqual(o.keys, ["top", "imu", "a", "geofence"])
        XCTAssertEqual(o["a"], .object(["b": .object(["c": 1]), "d": 2]))
        XCTAssertEqual(
            o["geofence"], [.object(["name": "home", "area": .object(["r": 50])]), .object(["name": "work"])])
    }

    /// TOML 1.0: dotted keys may define sub-tables, and headers may add sub-tables below those.
    func testDottedKeysAndHeaders() throws {
        let o = try parse(
            """
            [fruit]
            apple.color = "red"
            apple.taste.sweet = true
            [fruit.apple.texture]
            smooth = true
            """)
        XCTAssertEqual(
            o["fruit"],
            .object([
                "apple": .object([
                    "color": "red", "taste": .object(["sweet": true]), "texture": .object(["smooth": true]),
                ])
            ]))
    }

    func testByteOrderMarkAndCRLF() throws {
        XCTAssertEqual(
            try parse("\u{FEFF}[t]\r\na = 1\r\ns = \"\"\"x\r\ny\"\"\"\r\n")["t"], .object(["a": 1, "s": "x\ny"]))
    }

    // MARK: Lines

    func testLinesMap() throws {
        let (_, lines) = try TOMLParser.parse(
            """
            title = "x"
            [imu]
            rate_hz = 60

            [["x y".z]]
            k = 1
            [[geofence]]
            lat = 1
            [[geofence]]
            lat = 2
            [t]
            a.b = 1
            p = {x = 1}
            """)
        XCTAssertEqual(lines["title"], 1)
        XCTAssertEqual(lines["imu"], 2)
        XCTAssertEqual(lines["imu.rate_hz"], 3)
        XCTAssertEqual(lines["x y.z[0]"], 5)
        XCTAssertEqual(lines["x y.z[0].k"], 6)
        XCTAssertEqual(lines["geofence"], 7)
        XCTAssertEqual(lines["geofence[0]"], 7)
        XCTAssertEqual(lines["geofence[0].lat"], 8)
        XCTAssertEqual(lines["geofence[1]"], 9)
        XCTAssertEqual(lines["geofence[1].lat"], 10)
        XCTAssertEqual(lines["t.a.b"], 12)
        XCTAssertEqual(lines["t.p"], 13)
    }

    func testLinesOfNestedArraysOfTables() throws {
        let (_, lines) = try TOMLParser.parse("[[a]]\n[[a.b]]\n[[a.b]]\nx = 1\n[[a]]\n[[a.b]]\n")
        XCTAssertEqual(lines["a[0].b[1].x"], 4)
        XCTAssertEqual(lines["a[1].b[0]"], 6)
        XCTAssertEqual(lines["a[0].b"], 2)
    }

    // MARK: Errors

    /// The messages the config fuzz tests rely on (inputs that once crashed toml++).
    func testFormerCrashesGiveTheirMessages() {
        let badHeader = "syntax error: a table header needs a name after '[' or '[[', like [imu] or [[geofence]]"
        for text in ["[[[imu]\n", "[imu]\n[\n", "[=x]\n", "\u{FEFF}[)re]\n", "[[ .geofence]]\n", "[]\n"] {
            XCTAssertThrowsError(try TOMLParser.parse(text)) {
                XCTAssertEqual(($0 as? TOMLSyntaxError)?.message, badHeader)
            }
        }
        assertError("a = [\n  1,\n}\n", line: 3, "syntax error: '}' inside an array (expected a value or ']')")
        assertError("a = [{x = [1, }]\n", line: 1, "'}' inside an array (expected a value or ']')")
        assertError(
            "x = 1\nd = 1979-05-27Ttrue\n", line: 2,
            "syntax error: a date-time needs a time after 'T', like 1979-05-27T07:32:00Z")
    }

    func testKeyAndValueErrors() {
        assertError("[imu]\nrate_hz 60\n", line: 2, "syntax error: expected '=' after the key")
        assertError("a =\n1\n", line: 1, "expected a value after '='")
        assertError("a = 1 b = 2\n", line: 1, "expected the end of the line after the value")
        assertError("a = hello\n", line: 1, "a string needs quotes")
        assertError("x = 1\ns = \"abc\nt = 2\n", line: 2, "syntax error: unterminated string")
        assertError("s = \"\"\"abc\n\nmore\n", line: 1, "syntax error: unterminated string")
        assertError("s = \"a\\qb\"\n", line: 1, "invalid escape '\\q'")
        assertError("s = \"\\uD800\"\n", line: 1, "not a Unicode scalar value")
        assertError("s = \"a\u{01}\"\n", line: 1, "control character U+0001")
        assertError("# fine\n# bad \u{7F}\n", line: 2, "in a comment")
        assertError("a = 1\rb = 2\n", line: 1, "expected the end of the line")
    }

    func testNumberAndDateErrors() {
        assertError("a = 012\n", line: 1, "leading zero")
        assertError("a = 1__0\n", line: 1, "invalid number '1__0'")
        assertError("a = 1.\n", line: 1, "invalid number")
        assertError("a = 9223372036854775808\n", line: 1, "does not fit in 64 bits")
        assertError("a = 0x8000000000000000\n", line: 1, "does not fit in 64 bits")
        assertError("a = 2023-02-29\n", line: 1, "invalid date '2023-02-29'")
        assertError("a = 1979-05-27T25:00:00\n", line: 1, "invalid date-time")
        assertError("a = 07:32\n", line: 1, "invalid time")
    }

    func testArrayAndInlineTableErrors() {
        assertError("a = [1 2]\n", line: 1, "expected ',' or ']'")
        assertError("a = [1,,2]\n", line: 1, "expected a value or ']'")
        assertError("a = [\n1,\n", line: 1, "unterminated array")
        assertError("a = {b = 1,}\n", line: 1, "an inline table cannot end with ','")
        assertError("a = {b = 1\n}\n", line: 1, "closed with '}' on its line")
        assertError("a = {b = 1, b = 2}\n", line: 1, "duplicate key 'b'")
        assertError(
            "a = " + String(repeating: "[", count: 101) + String(repeating: "]", count: 101), line: 1,
            "nested more than 100")
    }

    /// TOML's rules on defining and extending tables, each on the line that breaks it.
    func testTableRules() {
        assertError("[imu]\nrate_hz = 1\nrate_hz = 2\n", line: 3, "syntax error: duplicate key 'rate_hz'")
        assertError("a.b = 1\na.b = 2\n", line: 2, "duplicate key 'a.b'")
        assertError("[a]\nx = 1\n\n[a]\n", line: 4, "table [a] is defined twice")
        assertError("a.b.c = 1\n[a.b]\n", line: 2, "table [a.b] was already defined with dotted keys")
        assertError("[a.b]\n[a]\nb.c = 1\n", line: 3, "cannot add to table 'b', which is defined elsewhere")
        assertError("a = {x = 1}\n[a]\n", line: 2, "'a' is already a value")
        assertError("a = {x = 1}\na.y = 2\n", line: 2, "'a' is already a value")
        assertError("a = [1]\n[[a]]\n", line: 2, "'a' is already a value")
        assertError("[a]\n[[a]]\n", line: 2, "which is a table, not an array of tables")
        assertError("[[a]]\n[a]\n", line: 2, "already an array of tables")
        assertError("[[t.a]]\n[t]\na.x = 1\n", line: 3, "which is an array of tables")
        assertError("[a.b]\n[a]\nb = 1\n", line: 3, "duplicate key 'b' (already a table)")
    }

    /// Every prefix of a document that uses every feature is parsed or refused, never a crash.
    func testEveryPrefixParsesOrFails() {
        let doc = Array(
            """
            # c
            [a."b c"]
            s = "x\\u00e9" # c
            m = \"\"\"
            l\\
            \"\"\"
            l = '''q'''
            d = 1979-05-27 07:32:00Z
            n = [1, -0x1, 1e5, inf, {x = [true]}]
            [[g]]
            k.j = 07:32:00.5
            """.unicodeScalars)
        for n in 0...doc.count {
            var s = String.UnicodeScalarView()
            s.append(contentsOf: doc[0..<n])
            _ = try? TOMLParser.parse(String(s))
        }
    }
}
