// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// Recording v2 through the real binary: `tiltd record --replay` keeps the fields, `tiltd estimate`
/// and `tiltd judge` read them, and a v1 recording gives the same attitudes as before.
final class RecordingV2CommandTests: XCTestCase {
    private var dir = ""
    override func setUp() { dir = makeTempDir("rec2") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// The demo head recording's rows, and the same rows as v2: without fields, and with a field on
    /// every third row (a level field turning as the head's yaw does not: a heading to follow).
    private func recordings() throws -> (v1: String, bare: String, withFields: String) {
        let rows = try String(contentsOfFile: "\(repositoryRoot)/config/demo/head.csv", encoding: .utf8)
            .split(separator: "\n").compactMap { try RecordingFormat.parse(line: $0) }.prefix(600)
        func write(_ name: String, _ lines: [String]) throws -> String {
            let path = "\(dir)/\(name)"
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let v1 = try write(
            "v1.csv", [RecordingFormat.banner, RecordingFormat.header] + rows.map(RecordingFormat.format))
        let bare = try write(
            "bare.csv",
            [RecordingFormat.bannerV2, RecordingFormat.headerV2] + rows.map { RecordingFormat.format($0) + ",,," })
        let fields = try write(
            "fields.csv",
            [RecordingFormat.bannerV2, RecordingFormat.headerV2]
                + rows.enumerated().map { i, s in
                    RecordingFormat.format(s, field: i % 3 == 0 ? Vector3(20, 0, -40) : nil)
                })
        return (v1, bare, fields)
    }

    func testRecordKeepsTheFieldsOfAReplayedV2RecordingByteForByte() throws {
        let (_, _, fields) = try recordings()
        let out = "\(dir)/again.csv"
        let (status, log) = try runTiltd([
            "record", "--config", "\(dir)/none.toml", "--replay", fields, "--seconds", "100", "--out", out,
        ])
        XCTAssertEqual(status, 0, log)
        XCTAssertTrue(log.contains("recorded 600 samples and 200 magnetometer samples"), log)
        XCTAssertEqual(
            try String(contentsOfFile: out, encoding: .utf8), try String(contentsOfFile: fields, encoding: .utf8))
    }

    func testAV1RecordingEstimatesAsBeforeAndFieldsSetTheHeading() throws {
        let (v1, bare, fields) = try recordings()
        func estimate(_ path: String) throws -> String {
            let out = "\(path).q.csv"
            let (status, log) = try runTiltd(["estimate", "--in", path, "--out", out])
            XCTAssertEqual(status, 0, log)
            return try String(contentsOfFile: out, encoding: .utf8)
        }
        let a = try estimate(v1)
        XCTAssertEqual(try estimate(bare), a, "a v2 file without fields estimates exactly as its v1 form")
        XCTAssertNotEqual(try estimate(fields), a, "the fields set the heading")
        // judge reads both versions; the game does not use the heading.
        let (s1, j1) = try runTiltd(["judge", "--in", v1, "--quiet"])
        let (s2, j2) = try runTiltd(["judge", "--in", fields, "--quiet"])
        XCTAssertEqual(s1, 0, j1)
        XCTAssertEqual(s2, 0, j2)
        func summary(_ s: String) -> [Substring] { s.split(separator: "\n").filter { $0.hasPrefix("# prompts") } }
        XCTAssertEqual(summary(j1), summary(j2))
        XCTAssertFalse(summary(j1).isEmpty, j1)
    }

    func testImportTurnsAJoinedBROADFileIntoARecordingV2() throws {
        let broad = "\(dir)/trial.csv"
        try """
        t,ax,ay,az,gx,gy,gz,mx,my,mz,qw,qx,qy,qz,movement
        0.0,0.1,-0.2,9.8,0.01,0.02,-0.03,20.5,-3.25,-41,1,0,0,0,0
        0.0035,0.11,-0.21,9.79,0.011,0.02,-0.03,nan,nan,nan,1,0,0,0,0
        0.007,0.12,-0.22,9.78,0.012,0.02,-0.03,20.75,-3.5,-40.5,1,0,0,0,1

        """.write(toFile: broad, atomically: true, encoding: .utf8)
        let out = "\(dir)/imported.csv"
        let (status, log) = try runTiltd(["import", "--format", "broad", broad, out])
        XCTAssertEqual(status, 0, log)
        XCTAssertTrue(log.contains("imported 3 samples and 2 magnetometer samples"), log)
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(String(lines[0]), RecordingFormat.bannerV2)
        XCTAssertTrue(lines.contains { $0 == RecordingFormat.headerV2 })
        let rows = lines.compactMap { try? RecordingFormat.parseRow(line: $0) }
        XCTAssertEqual(rows.map(\.sample.t), [0, 3_500_000, 7_000_000])
        XCTAssertEqual(rows.map(\.field), [Vector3(20.5, -3.25, -41), nil, Vector3(20.75, -3.5, -40.5)])
        XCTAssertEqual(
            rows[1].sample,
            IMUSample(t: 3_500_000, accel: Vector3(0.11, -0.21, 9.79), gyro: Vector3(0.011, 0.02, -0.03)))
    }
}
