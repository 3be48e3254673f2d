// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// `calibrate.gyro` on the real daemon with the socket fuzzer's edge values (issue 37): the one
/// command `SocketFuzzTests` leaves out, because a valid one answers only after its measurement.
/// Here each line waits for its own reply: edge values of `seconds` and `settle` and of other
/// types, one at a time, on a replayed moving head (a measurement is refused as the head moves,
/// so none runs for long). Every line gets a reply with its id, the daemon answers `ping` after
/// each and never exits, and a measurement can still start after them all.
final class GyroCalibrateFuzzTests: ReplayDaemonTestCase {
    override var tempTag: String { "gyrofuzz" }

    func testEdgeValuesOfCalibrateGyroEachGetTheirReplyAndLeaveTheDaemonAnswering() throws {
        try writeConfig(socketKeys: "max_bad_lines = 1000000", extra: "[log]\nlevel = \"error\"")
        let c = try startReplayDaemon()
        // Measurements need a streaming IMU (before, they are refused `unavailable` at once).
        try waitUntil("the replay to stream", timeout: 15) {
            let status = try c.request(#"{"cmd":"status","id":2}"#, id: 2)
            return (status["sources"]?.arrayValue ?? []).contains { $0["state"] == "streaming" }
        }
        let values = FuzzLineMaker.numbers + FuzzLineMaker.strings + FuzzLineMaker.others
        var lines: [(id: String, line: String)] = []
        for (k, v) in values.enumerated() {
            lines.append(("s\(k)", #"{"cmd":"calibrate.gyro","id":"s\#(k)","seconds":\#(v),"settle":0}"#))
            lines.append(("t\(k)", #"{"cmd":"calibrate.gyro","id":"t\#(k)","seconds":1,"settle":\#(v)}"#))
        }
        var answered = 0, measured = 0, refused: [String: Int] = [:]
        let start = Date()
        for (id, line) in lines {
            try c.send(line)
            // The longest valid measurement here is 100 s of `seconds` after no settle; the
            // head moves within seconds, which ends it.
            // A line the JSON reader refuses (1e400 is out of any double's range) is answered
            // `invalid_json` without an id: the id was never read.
            let reply: JSONValue
            do { reply = try c.next("reply", timeout: 130) } catch {
                return XCTFail("no reply to \(line) in 130 s: \(error)\n\(daemon!.log.suffix(3000))")
            }
            if reply["id"] == .null {
                XCTAssertEqual(reply["error"]?["code"], "invalid_json", "\(line): \(reply)")
            } else {
                XCTAssertEqual(reply["id"]?.stringValue, id, "\(line): \(reply)")
            }
            answered += 1
            if reply["ok"] == .bool(true) {
                measured += 1
            } else {
                refused[reply["error"]?["code"]?.stringValue ?? "?", default: 0] += 1
            }
            XCTAssertEqual(
                try c.request(#"{"cmd":"ping","id":1}"#, id: 1, timeout: 5)["ok"], .bool(true), "ping after \(line)")
            XCTAssertTrue(daemon!.isRunning, "after \(line)\n\(daemon!.log.suffix(2000))")
        }
        XCTAssertEqual(answered, lines.count)
        // Refused as bad arguments (other types, out of range), and the valid ones measured or
        // refused as the head moved: both kinds were met.
        let bad = refused["bad_argument"] ?? 0
        XCTAssertGreaterThan(bad, values.count, "\(refused)")
        XCTAssertGreaterThan(measured + (refused["calibration_refused"] ?? 0), 3, "measurements ran: \(refused)")
        print(
            "tiltd calibrate.gyro fuzz: \(lines.count) lines, each answered with its id in \(String(format: "%.1f", Date().timeIntervalSince(start))) s; refused \(refused.sorted { $0.key < $1.key }), measured \(measured)"
        )
    }
}
