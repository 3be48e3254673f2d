// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltRecordings
import TiltSensors
import XCTest

/// DatasetReader: both CSV layouts, gzip, decimation, and clear errors.
final class DatasetReaderTests: XCTestCase {
    func tempFile(_ name: String, _ text: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-dataset-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testRecordingFormatWithComments() throws {
        let path = try tempFile(
            "rec.csv",
            """
            # tiltd recording
            # rate 100 Hz
            t_ns,ax,ay,az,gx,gy,gz
            1000000000,0.1,-0.2,9.8,0.01,0.02,-0.03
            1010000000,0.2,-0.1,9.7,0.00,0.01,1e-3

            """)
        let d = try DatasetReader.read(path: path)
        XCTAssertEqual(d.format, .recording)
        XCTAssertEqual(d.samples.count, 2)
        XCTAssertEqual(d.samples[1].t, 1_010_000_000)
        XCTAssertEqual(d.samples[0].accel, Vector3(0.1, -0.2, 9.8))
        XCTAssertEqual(d.samples[1].gyro, Vector3(0, 0.01, 0.001))
    }

    func testBROADLayoutGzippedAndDecimated() throws {
        var text = "t,ax,ay,az,gx,gy,gz,qw,qx,qy,qz,movement\n"
        for i in 0..<11 {
            text += String(format: "%.6f,%d,0,9.8,0.1,0,0,nan,nan,nan,nan,0\n", Double(i) * 0.0035, i)
        }
        let plain = try tempFile("trial.csv", text)
        let gz = plain + ".gz"
        try? FileManager.default.removeItem(atPath: gz)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "gzip -kc \"$0\" > \"$0.gz\"", plain]
        try p.run(); p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let d = try DatasetReader.read(path: gz)
        XCTAssertEqual(d.format, .broad)
        XCTAssertEqual(d.samples.count, 11)
        XCTAssertEqual(d.samples[2].t, 7_000_000)
        let kept = DatasetReader.decimate(d.samples, keepingEvery: 5)
        XCTAssertEqual(kept.map(\.t), [0, 17_500_000, 35_000_000])  // rows 0, 5 and 10, times as recorded
        XCTAssertEqual(kept.map(\.accel.x), [0, 5, 10])
        XCTAssertEqual(DatasetReader.decimate(d.samples, keepingEvery: 1).count, 11)
    }

    func testBadInputNamesFileAndLine() throws {
        let path = try tempFile("bad.csv", "t_ns,ax,ay,az,gx,gy,gz\n1,0,0,9.8,0,0,0\n2,0,zero,9.8,0,0,0\n")
        XCTAssertThrowsError(try DatasetReader.read(path: path)) { error in
            XCTAssertEqual("\(error)", "\(path):3: field 3 is not a finite number: 'zero'")
        }
        let header = try tempFile("header.csv", "time,a,b\n1,2,3\n")
        XCTAssertThrowsError(try DatasetReader.read(path: header)) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(header):1: expected header"), "\(error)")
        }
        XCTAssertThrowsError(try DatasetReader.read(path: "/nonexistent/x.csv")) { error in
            XCTAssertEqual("\(error)", "/nonexistent/x.csv: cannot read: No such file or directory")
        }
    }

    func testMagnetometerColumnsAfterTheGyro() throws {
        let path = try tempFile(
            "mag.csv",
            """
            t,ax,ay,az,gx,gy,gz,mx,my,mz,qw,qx,qy,qz,movement
            0.000000,0,0,9.8,0,0,0,1.5,20,-40,1,0,0,0,1
            0.003500,0,0,9.8,0,0,0,nan,nan,nan,1,0,0,0,1
            0.007000,0,0,9.8,0,0,0,2,21,-41,1,0,0,0,1

            """)
        let d = try DatasetReader.read(path: path)
        XCTAssertEqual(d.format, .broad)
        XCTAssertEqual(d.samples.count, 3)
        let mag = try XCTUnwrap(d.magnetometer)
        XCTAssertEqual(mag[0], Vector3(1.5, 20, -40))
        XCTAssertTrue(mag[1].x.isNaN)
        XCTAssertEqual(DatasetReader.decimate(mag, keepingEvery: 2), [mag[0], mag[2]])
        // Without the columns there is no magnetometer.
        let plain = try tempFile("plain.csv", "t_ns,ax,ay,az,gx,gy,gz\n1,0,0,9.8,0,0,0\n")
        XCTAssertNil(try DatasetReader.read(path: plain).magnetometer)
        let bad = try tempFile(
            "badmag.csv", "t_ns,ax,ay,az,gx,gy,gz,mx,my,mz\n1,0,0,9.8,0,0,0,1,x,3\n2,0,0,9.8,0,0,0\n")
        XCTAssertThrowsError(try DatasetReader.read(path: bad)) { error in
            XCTAssertEqual("\(error)", "\(bad):2: field 9 is not a number: 'x'")
        }
    }
}
