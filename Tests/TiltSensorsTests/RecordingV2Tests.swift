// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import TiltCore
import TiltRecordings
import XCTest

@testable import TiltSensors

/// Recording format v2 (`mx,my,mz` on the rows where a magnetometer sample falls): rows, the
/// recorder's placement of fields, the replay's `.magnetometer` outputs, and v1 reading as before.
final class RecordingV2Tests: XCTestCase {
    private func temp(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-rec2-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir.appendingPathComponent(name).path
    }

    private func sample(_ t: Int64, gyro: Bool = true) -> IMUSample {
        gyro
            ? IMUSample(t: t, accel: Vector3(0.1, -0.2, 9.8), gyro: Vector3(0.01, 0, -0.02))
            : IMUSample(t: t, accelOnly: Vector3(0.1, -0.2, 9.8))
    }

    func testRowsOfBothVersions() throws {
        let v1 = try XCTUnwrap(RecordingFormat.parseRow(line: "5,1,2,3,0.1,0.2,0.3"))
        XCTAssertNil(v1.field)
        XCTAssertEqual(v1.sample, IMUSample(t: 5, accel: Vector3(1, 2, 3), gyro: Vector3(0.1, 0.2, 0.3)))
        let v2 = try XCTUnwrap(RecordingFormat.parseRow(line: "5,1,2,3,0.1,0.2,0.3,21.5,-3,40.25"))
        XCTAssertEqual(v2.sample, v1.sample)
        XCTAssertEqual(v2.field, Vector3(21.5, -3, 40.25))
        XCTAssertNil(try RecordingFormat.parseRow(line: "5,1,2,3,0.1,0.2,0.3,,,")?.field)
        XCTAssertThrowsError(try RecordingFormat.parseRow(line: "5,1,2,3,0.1,0.2,0.3,1,2"), "9 fields")
        XCTAssertThrowsError(try RecordingFormat.parseRow(line: "5,1,2,3,0.1,0.2,0.3,1,,3"), "a partial field")
        // An accelerometer alone with a field, and back.
        let line = RecordingFormat.format(sample(7, gyro: false), field: Vector3(1.5, 2, -3))
        XCTAssertEqual(line, "7,0.1,-0.2,9.8,,,,1.5,2,-3")
        let back = try XCTUnwrap(RecordingFormat.parseRow(line: Substring(line)))
        XCTAssertEqual(back, RecordingFormat.Row(sample: sample(7, gyro: false), field: Vector3(1.5, 2, -3)))
        // Without a field a row is the v1 row, character for character.
        XCTAssertEqual(RecordingFormat.format(sample(7), field: nil), RecordingFormat.format(sample(7)))
    }

    func testRecorderPutsEachFieldOnTheFirstRowAtOrAfterIt() throws {
        let path = temp("v2.csv")
        let r = try Recorder(path: path)
        try r.append(sample(0))
        r.append(MagSample(t: 0, field: Vector3(1, 2, 3)))  // after its sample, as a replay sends it
        try r.append(sample(10))
        r.append(MagSample(t: 15, field: Vector3(4, 5, 6)))  // before the row it falls on (live)
        r.append(MagSample(t: 12, field: Vector3(7, 8, 9)))  // late, but still due at row 20
        try r.append(sample(20))
        try r.append(sample(30))
        r.append(MagSample(t: 45, field: Vector3(1, 1, 1)))  // after the last row: not written
        try r.close()
        XCTAssertEqual(r.count, 4)
        XCTAssertEqual(r.fieldCount, 2)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(Array(lines.prefix(2)).map(String.init), [RecordingFormat.bannerV2, RecordingFormat.headerV2])
        let rows = try ReplaySource.loadRows(path: path)
        XCTAssertEqual(rows.map(\.sample.t), [0, 10, 20, 30])
        XCTAssertEqual(rows.map(\.field), [Vector3(1, 2, 3), nil, Vector3(7, 8, 9), nil])
    }

    func testWithoutAMagnetometerTheRecorderWritesV1AsBefore() throws {
        let path = temp("v1.csv")
        let r = try Recorder(path: path)
        for t in [Int64(0), 10, 20] { try r.append(sample(t)) }
        try r.close()
        let want =
            [RecordingFormat.banner, RecordingFormat.header] + [0, 10, 20].map { RecordingFormat.format(sample($0)) }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), want.joined(separator: "\n") + "\n")
    }

    func testReplayEmitsEachFieldAfterItsSampleAndV1EmitsNone() throws {
        let v2 = temp("replay2.csv"), v1 = temp("replay1.csv")
        try
            ([RecordingFormat.bannerV2, RecordingFormat.headerV2]
            + [
                RecordingFormat.format(sample(0), field: Vector3(20, 0, -40)), RecordingFormat.format(sample(10)),
                RecordingFormat.format(sample(20), field: Vector3(0, 20, -40)),
            ]).joined(separator: "\n").write(toFile: v2, atomically: true, encoding: .utf8)
        try
            ([RecordingFormat.banner, RecordingFormat.header] + [0, 10, 20].map { RecordingFormat.format(sample($0)) })
            .joined(separator: "\n").write(toFile: v1, atomically: true, encoding: .utf8)
        func outputs(_ path: String) throws -> [String] {
            let out = Mutex<[String]>([])
            try ReplaySource(path: path, speed: nil).run(stop: StopSignal()) { o in
                let line: String
                switch o {
                case .sample(let s): line = "s\(s.t)"
                case .magnetometer(let m): line = "m\(m.t):\(m.field.x),\(m.field.y)"
                case .status(let st): line = "\(st.state.rawValue): \(st.message)"
                }
                out.withLock { $0.append(line) }
            }
            return out.withLock { $0 }
        }
        XCTAssertEqual(
            try outputs(v2),
            [
                "starting: loading \(v2)", "streaming: replaying 3 samples and 2 magnetometer samples", "s0",
                "m0:20.0,0.0",
                "s10", "s20", "m20:0.0,20.0", "finished: end of recording (3 samples)",
            ])
        XCTAssertEqual(
            try outputs(v1),
            [
                "starting: loading \(v1)", "streaming: replaying 3 samples", "s0", "s10", "s20",
                "finished: end of recording (3 samples)",
            ])
    }

    func testDatasetReaderTakesAV2RecordingWithFieldsOnSomeRows() throws {
        let path = temp("estimate.csv")
        try
            ([RecordingFormat.bannerV2, RecordingFormat.headerV2]
            + [
                RecordingFormat.format(sample(0), field: Vector3(20, 0, -40)), RecordingFormat.format(sample(10)),
                RecordingFormat.format(sample(20), field: nil) + ",,,",
            ]).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let d = try DatasetReader.read(path: path)
        XCTAssertEqual(d.format, .recording)
        XCTAssertEqual(d.samples, [sample(0), sample(10), sample(20)])
        let m = try XCTUnwrap(d.magnetometer)
        XCTAssertEqual(m[0], Vector3(20, 0, -40))
        XCTAssertTrue(m[1].x.isNaN && m[2].x.isNaN, "no field on those rows")
    }
}
