// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// `tiltd import` and `tiltd judge` as a user runs them: a real ST log excerpt in, game lines
/// and a summary out; malformed input named by line.
final class JudgeImportCommandTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = makeTempDir("judge") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    static let fixture = "\(repositoryRoot)/Tests/TiltCoreTests/Fixtures/head-gestures/nod-0-60s.txt"

    func testImportNamesTheBadLineAndNeedsARate() throws {
        let bad = "\(dir)/bad.txt"
        try
            "A_X [mg] \t A_Y [mg] \t A_Z [mg] \tG_X [dps] \t G_Y [dps] \t G_Z [dps] \t\n1\t2\t3\t4\t5\t6\n1\t2\tthree\t4\t5\t6\n"
            .write(toFile: bad, atomically: true, encoding: .utf8)
        var (status, out) = try runTiltd(["import", "--format", "st-mlc", "--rate", "30", bad, "\(dir)/out.csv"])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(out.contains("bad.txt: line 3: field 3 is not a number: \"three\""), out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/out.csv"), "nothing written on an error")
        (status, out) = try runTiltd(["import", "--format", "st-mlc", bad, "\(dir)/out.csv"])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(out.contains("--rate HZ is needed"), out)
        (status, out) = try runTiltd(["import", "--format", "csv-magic", "--rate", "30", bad, "\(dir)/out.csv"])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(out.contains("unknown format \"csv-magic\" (known: st-mlc)"), out)
        (status, out) = try runTiltd([
            "import", "--format", "st-mlc", "--rate", "30", "\(dir)/missing.txt", "\(dir)/out.csv",
        ])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(out.contains("missing.txt: cannot read"), out)
    }

    func testImportThenJudgeARealNodRecording() throws {
        let rec = "\(dir)/nod.csv"
        var (status, out) = try runTiltd(["import", "--format", "st-mlc", "--rate", "30", Self.fixture, rec])
        XCTAssertEqual(status, 0, out)
        XCTAssertTrue(out.contains("imported 1800 samples"), out)
        // The headset's axes (X back, Y up, Z left) as the mount matrix.
        let config = "\(dir)/tiltd.toml"
        try """
        [imu]
        mount_matrix = [0, 0, -1, 0, 1, 0, 1, 0, 0]
        [socket]
        path = "\(dir)/tiltd.sock"
        [store]
        path = "\(dir)/tiltd.sqlite"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        (status, out) = try runTiltd(["judge", "--in", rec, "--config", config, "--gestures", "nod"])
        XCTAssertEqual(status, 0, out)
        let lines = out.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        let correct = lines.filter { $0["kind"] == "correct" }
        XCTAssertGreaterThanOrEqual(correct.count, 10, out)
        XCTAssertTrue(correct.allSatisfy { $0["gesture"] == "nod" && ($0["decision_ms"]?.intValue ?? 0) >= 250 })
        XCTAssertEqual(lines.filter { $0["kind"] == "skip" }.count, 0)
        XCTAssertTrue(out.contains("under 0.25 s 0, while still 0"), out)
        XCTAssertTrue(out.contains("orientation assumed"), out)
        (status, out) = try runTiltd(["judge", "--in", rec, "--gestures", "wink"])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(out.contains("--gestures must be tilt or nod"), out)
    }
}
