// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltProtocol
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
        let line = Event(.attitude, t: 1_000, .attitude(AttitudeBody(a))).encode(seq: 42)
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
        return w.text
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

final class JSONWriterStorageTests: XCTestCase {
    /// Numbers against a reference that rounds with `rounded()` and prints the integer
    /// `Int` way: every digit count, signs, ties, and values near a power of ten.
    func testDigitsMatchReference() {
        func reference(_ d: Double, _ digits: Int) -> String {
            let n = (d * pow(10, Double(digits))).rounded()
            if n == 0 { return "0" }
            var s = String(Int64(abs(n)))
            if digits > 0 {
                if s.count <= digits { s = String(repeating: "0", count: digits - s.count + 1) + s }
                s.insert(".", at: s.index(s.endIndex, offsetBy: -digits))
                while s.hasSuffix("0") { s.removeLast() }
                if s.hasSuffix(".") { s.removeLast() }
            }
            return (n < 0 ? "-" : "") + s
        }
        var rng = SystemRandomNumberGenerator()
        var values: [Double] = [0, 0.5, -0.5, 1, 9.5, 99.99, 1e6 - 1e-7, 123_456_789.012]
        for _ in 0..<5000 {
            values.append(Double.random(in: -1e5...1e5, using: &rng) / pow(10, Double(Int.random(in: 0...6))))
        }
        for d in values {
            for digits in 0...9 where abs(d) * pow(10, Double(digits)) < 9e15 {
                var w = JSONWriter()
                w.double(d, digits: digits)
                XCTAssertEqual(w.text, reference(d, digits), "\(d) with \(digits) digits")
            }
        }
    }

    /// A writer over a small caller buffer moves to the heap when it fills, keeping what it wrote.
    func testOutgrowsCallerBuffer() {
        let value: JSONValue = .object([
            "name": "a long enough string to overflow", "n": .int(-1_234_567_890_123), "x": .null,
        ])
        let text = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8) { buffer in
            var w = JSONWriter(over: buffer)
            w.value(value)
            return w.text
        }
        XCTAssertEqual(text, #"{"name":"a long enough string to overflow","n":-1234567890123,"x":null}"#)
    }

    /// `withEncoded` gives the same line as `encode`, newline included.
    func testWithEncodedMatchesEncode() {
        let e = Event(.status, t: 5, fields: ["state": "running", "note": .string(String(repeating: "x", count: 600))])
        let viaClosure = e.withEncoded(seq: 9) { Array($0) }
        XCTAssertEqual(viaClosure, e.encode(seq: 9))
        XCTAssertEqual(viaClosure.last, 0x0A)
        XCTAssertGreaterThan(viaClosure.count, 600)
    }
}
