import XCTest

@testable import TiltCore

final class JSONTests: XCTestCase {
    func testRoundTripKeepsOrderAndTypes() throws {
        let text = #"{"cmd":"watch","id":7,"attitude_hz":30.5,"classes":["game","place"],"samples":false,"x":null}"#
        let v = try JSONParser.parse(text)
        XCTAssertEqual(v["cmd"], "watch")
        XCTAssertEqual(v["id"], .int(7))
        XCTAssertEqual(v["attitude_hz"], .double(30.5))
        XCTAssertEqual(v.jsonText, text)
    }

    func testRejectsMalformed() {
        for bad in ["", "{", "{\"a\":}", "[1,]", "tru", "01", "1.", "\"\\x\"", "{\"a\":1} x", "\u{1}", "\"\\ud800\""] {
            XCTAssertThrowsError(try JSONParser.parse(bad), "accepted \(bad.debugDescription)")
        }
    }

    func testDepthLimit() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        XCTAssertThrowsError(try JSONParser.parse(deep))
    }

    func testStringEscapes() throws {
        let v = try JSONParser.parse(#""a\"b\\c\nd\u00e9\ud83d\ude00""#)
        XCTAssertEqual(v, .string("a\"b\\c\nd\u{e9}\u{1F600}"))
        XCTAssertEqual(JSONValue.string("q\"\n\u{1}").jsonText, #""q\"\n\u0001""#)
    }

    func testEventEncodingHasClassSeqAndTime() throws {
        let a = Attitude(t: 1_000, q: .identity, atRest: true, gyroBias: .zero)
        let line = Event(.attitude, t: 1_000, .attitude(a)).encode(seq: 42)
        XCTAssertEqual(line.last, 0x0A)
        let v = try JSONParser.parse(line.dropLast())
        XCTAssertEqual(v["class"], "attitude")
        XCTAssertEqual(v["seq"], .int(42))
        XCTAssertEqual(v["t_ns"], .int(1_000))
        XCTAssertEqual(v["roll_deg"]?.doubleValue, 0)
        XCTAssertEqual(v["at_rest"], .bool(true))
    }
}

final class JSONWriterNumberTests: XCTestCase {
    func format(_ d: Double, _ digits: Int) -> String {
        var w = JSONWriter()
        w.double(d, digits: digits)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    func testFixedDigits() {
        XCTAssertEqual(format(1.23456789, 4), "1.2346")
        XCTAssertEqual(format(-0.5, 3), "-0.5")
        XCTAssertEqual(format(-0.00001, 3), "0")
        XCTAssertEqual(format(2.0, 6), "2")
        XCTAssertEqual(format(9.80665, 2), "9.81")
        XCTAssertEqual(format(-123.000001, 6), "-123.000001")
        XCTAssertEqual(format(0.05, 2), "0.05")
        XCTAssertEqual(format(.nan, 2), "null")
        XCTAssertEqual(format(1e300, 2), "1e+300")
    }

    func testFormattedNumbersParseBack() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let d = Double.random(in: -1e6...1e6, using: &rng)
            let text = format(d, 5)
            let back = try XCTUnwrap(JSONParser.parse(text).doubleValue)
            XCTAssertEqual(back, d, accuracy: 0.5e-5 + 1e-9, text)
        }
    }
}
