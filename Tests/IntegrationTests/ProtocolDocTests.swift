// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// docs/protocol.md is executable: every `→` example is sent to a running daemon and its reply
/// is checked against the `←` example under it, and the documented events are compared with
/// the ones the daemon really sends.
final class ProtocolDocTests: XCTestCase {
    struct Example {
        var request: String
        var reply: JSONValue
        var line: Int
    }

    /// (request/reply pairs, event examples) from the document.
    static func examples() throws -> ([Example], [JSONValue]) {
        let text = try String(contentsOfFile: "\(repositoryRoot)/docs/protocol.md", encoding: .utf8)
        var pairs: [Example] = []
        var events: [JSONValue] = []
        var pending: (String, Int)?
        var inBlock = false
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") { inBlock = line.hasPrefix("```jsonl"); continue }
            guard inBlock else { continue }
            if line.hasPrefix("→ ") {
                pending = (String(line.dropFirst(2)), n + 1)
            } else if line.hasPrefix("← ") {
                let v = try JSONParser.parse(String(line.dropFirst(2)))
                if let (req, at) = pending {
                    pairs.append(Example(request: req, reply: v, line: at))
                    pending = nil
                } else {
                    events.append(v)
                }
            }
        }
        return (pairs, events)
    }

    /// Whether `actual` has every field of `example` with the same JSON type (null in the
    /// example stands for "any"); objects recursively, arrays by their first element.
    /// Fields the document marks "when known": shown in examples, absent in some real lines.
    static let optionalFields: Set<String> = [
        "t_ns", "track_deg", "alt_m", "eph_m", "epv_m", "speed_mps", "rate_hz",
        "retry_in_s", "device", "deck_note", "category", "fix", "sample_rate_hz",
        "dwell_s", "lat", "lon", "gyroscope", "heading_deg", "true_heading_deg", "mag_disturbed",
        "declination_deg", "model_note",
    ]

    static func sameShape(_ example: JSONValue, _ actual: JSONValue, path: String = "") -> String? {
        switch (example, actual) {
        case (.null, _), (_, .null): return nil
        case (.object(let e), .object(let a)):
            for (k, v) in e.entries {
                guard let av = a[k] else {
                    if optionalFields.contains(k) { continue }
                    return "\(path).\(k) missing"
                }
                if let m = sameShape(v, av, path: "\(path).\(k)") { return m }
            }
            return nil
        case (.array(let e), .array(let a)):
            // Each documented element has the shape of some real one.
            for (i, f) in e.enumerated() where !a.isEmpty {
                let misses = a.compactMap { sameShape(f, $0, path: "\(path)[\(i)]") }
                if misses.count == a.count { return misses.first }
            }
            return nil
        default:
            return example.typeName == actual.typeName
                ? nil : "\(path): \(example.typeName) documented, \(actual.typeName) sent"
        }
    }

    func testEveryDocumentedCommandGetsTheDocumentedReply() throws {
        let (pairs, eventExamples) = try Self.examples()
        XCTAssertGreaterThanOrEqual(pairs.count, 15)
        // Every command the daemon knows is documented with at least one example.
        for name in Command.names {
            XCTAssertTrue(
                pairs.contains { (try? JSONParser.parse($0.request))?["cmd"]?.stringValue == name },
                "\(name) has no example")
        }

        let dir = makeTempDir("doc")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
        [socket]
        path = "\(dir)/tiltd.sock"
        mode = "0666"
        [store]
        path = "\(dir)/tiltd.sqlite"
        [places]
        file = "\(repositoryRoot)/config/demo/places.geojson"
        """.write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)
        let d = try DaemonProcess(
            [
                "run", "--config", "\(dir)/tiltd.toml", "--replay", "\(repositoryRoot)/config/demo/head.csv",
                "--gpx", "\(repositoryRoot)/config/demo/walk.gpx", "--gpx-speed", "100",
            ], logPath: "\(dir)/log")
        defer { d.stop() }
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        var seen: [JSONValue] = []
        // Wait until the daemon has samples and a fix, as in the examples.
        let deadline = Date().addingTimeInterval(15)
        var haveAttitude = false, haveFix = false
        while !(haveAttitude && haveFix) && Date() < deadline, let v = try c.readJSON(timeout: 10) {
            seen.append(v)
            haveAttitude = haveAttitude || v["class"] == "attitude"
            haveFix = haveFix || v["class"] == "fix"
        }
        XCTAssertTrue(haveAttitude && haveFix, d.log)

        for ex in pairs {
            let expected = ex.reply
            let actual: JSONValue
            if expected["error"]?["code"] == "forbidden" {
                actual = try sendAsNobody(ex.request, socket: "\(dir)/tiltd.sock")
            } else {
                try c.send(ex.request)
                let id = expected["id"] ?? .null
                var reply: JSONValue?
                let until = Date().addingTimeInterval(10)
                while reply == nil, Date() < until, let v = try c.readJSON(timeout: 10) {
                    if v["class"] == "reply" && v["id"] == id { reply = v } else { seen.append(v) }
                }
                actual = try XCTUnwrap(reply, "no reply to \(ex.request)")
            }
            let location = "docs/protocol.md:\(ex.line) \(ex.request)"
            XCTAssertEqual(actual["cmd"], expected["cmd"], location)
            XCTAssertEqual(actual["ok"], expected["ok"], "\(location) → \(actual.jsonText)")
            XCTAssertEqual(actual["error"]?["code"], expected["error"]?["code"], "\(location) → \(actual.jsonText)")
            if let m = Self.sameShape(expected, actual) { XCTFail("\(location): \(m) in \(actual.jsonText)") }
            // The catalogue declares every field a reply carries, and every code it answers with.
            if let name = actual["cmd"]?.stringValue, let spec = CommandCatalogue.spec(name),
                let fields = actual.objectValue
            {
                let envelope: Set<String> = ["class", "seq", "t_ns", "id", "cmd", "ok", "error"]
                for k in fields.keys where !envelope.contains(k) {
                    XCTAssertNotNil(
                        spec.reply.first { $0.name == k },
                        "\(location): reply field \(k) is not declared in CommandCatalogue")
                }
                if let code = actual["error"]?["code"]?.stringValue {
                    XCTAssertTrue(
                        spec.allErrors.contains(ProtocolError.Code(rawValue: code)),
                        "\(location): \(code) is not declared for \(name)")
                }
            }
        }

        // The documented events: each kind the daemon sent during this run has the documented shape.
        // The documented `watch` narrowed this client's stream; widen it again to see every class.
        try c.send(#"{"cmd":"watch","id":999,"classes":["status","attitude","game","fix","place","quest","credit"]}"#)
        let drainUntil = Date().addingTimeInterval(4)
        while Date() < drainUntil, let v = try? c.readJSON(timeout: 0.5) { seen.append(v) }
        func key(_ v: JSONValue) -> String {
            let cls = v["class"]?.stringValue ?? "?"
            let sub = v["kind"]?.stringValue ?? v["event"]?.stringValue ?? v["source"]?.stringValue ?? ""
            return "\(cls)/\(sub)"
        }
        var matched = Set<String>()
        for ex in eventExamples {
            XCTAssertNotNil(ex["class"]?.stringValue); XCTAssertNotNil(ex["seq"]?.intValue)
            let k = key(ex)
            guard
                let actual = seen.first(where: {
                    key($0) == k && $0["state"] == ex["state"] || key($0) == k && ex["state"] == nil
                })
            else { continue }
            if let m = Self.sameShape(ex, actual) { XCTFail("event \(k): \(m) in \(actual.jsonText)") }
            matched.insert(k)
        }
        for required in [
            "hello/", "status/imu", "attitude/", "fix/", "game/round_started", "game/stopped", "game/reset",
            "quest/available",
        ] {
            XCTAssertTrue(
                matched.contains(required),
                "no documented \(required) was checked against a real one; matched \(matched.sorted())")
        }
    }

    /// Sends one line as user nobody and returns the reply.
    func sendAsNobody(_ line: String, socket: String) throws -> JSONValue {
        guard let r = try exchangeAsNobody([line], socket: socket).first(where: { $0["class"] == "reply" }) else {
            throw LineClient.Failure(description: "no reply as nobody to \(line)")
        }
        return r
    }
}
