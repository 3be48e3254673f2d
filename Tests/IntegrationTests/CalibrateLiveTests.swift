// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TestSupport
import TiltCore
import XCTest

/// `tiltd calibrate` on a "live" IMU: a fake inv_mpu6050 read by the real libiio inside the
/// fake-hardware harness (`scripts/fakehw-ns`), the kernel's side played by `ScanWriter`.
final class CalibrateLiveTests: XCTestCase {
    var dir = ""
    var config = ""
    var configBytes = Data()
    var scenario: FakeScenario?

    override func setUpWithError() throws {
        if let reason = FakeHarness.unavailableReason {
            if FakeHarness.isCI { XCTFail("fake-hardware harness required in CI: \(reason)") }
            throw XCTSkip(reason)
        }
        dir = makeTempDir("callive")
        config = "\(dir)/tiltd.toml"
        configBytes = Data("# live calibration test\n[imu]\ndevice = \"mpu6050\"\nrate_hz = 100\n".utf8)
        FileManager.default.createFile(atPath: config, contents: configBytes)
    }

    override func tearDown() {
        scenario?.remove()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Scans at 100 Hz of a motion script: (seconds, motion) pieces, each starting where the last ended.
    func scans(_ d: FakeIIODevice, bias: Vector3, _ pieces: [(Double, Vector3)]) -> [ScanWriter.Scan] {
        var out: [ScanWriter.Scan] = []
        var q = Quaternion(roll: 0.2, pitch: -0.1, yaw: 0)
        var t: Int64 = 7_000_000_000
        for (seconds, rate) in pieces {
            let m = Motion(start: q, bodyRate: rate)
            let n = Int(seconds * 100)
            for i in 0..<n {
                let r = m.reading(at: Double(i) / 100)
                out.append(
                    ScanWriter.scan(
                        t: t, accel: d.rawCounts(r.accel, group: d.accel!),
                        gyro: d.rawCounts(r.gyro + bias, group: d.gyro!)))
                t += 10_000_000
            }
            q = m.orientation(at: Double(n) / 100)
        }
        return out
    }

    func testGyroOnTheLiveDevice() throws {
        let d = FakeIIODevice.mpu6050()
        scenario = try FakeScenario([d])
        let bias = Vector3(0.0213, -0.0117, 0.0061)
        let p = try DaemonProcess(["calibrate", "gyro", "--config", config, "--seconds", "2"], logPath: "\(dir)/log")
        let writer = try ScanWriter(scenario: scenario!, device: d, timeout: 10)
        // 1 s settle (the default live) + 2 s measured + spare.
        // tiltd stops reading (broken pipe here) as soon as it has its 3 s: the spare second may not fit.
        try? writer.write(scans(d, bias: bias, [(4, .zero)]))
        let status = p.waitForExit(timeout: 20)
        writer.close()
        XCTAssertEqual(status, 0, p.log)
        XCTAssertTrue(p.log.contains("wrote gyro_bias to \(dir)/calibration.toml"), p.log)
        let text = try String(contentsOfFile: "\(dir)/calibration.toml", encoding: .utf8)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("gyro_bias = [") })
        let got = line.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }.split(separator: ",")
            .compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        XCTAssertEqual(got.count, 3)
        // The quantised bias is within half a gyro count (0.001065 rad/s at ±2000 °/s) per axis.
        for i in 0..<3 { XCTAssertEqual(got[i], bias[i], accuracy: d.gyro!.scaleValue * 0.6, "axis \(i)") }
        XCTAssertEqual(FileManager.default.contents(atPath: config), configBytes)
    }

    func testGyroOnTheLiveDeviceRefusesMotion() throws {
        let d = FakeIIODevice.mpu6050()
        scenario = try FakeScenario([d])
        let p = try DaemonProcess(["calibrate", "gyro", "--config", config, "--seconds", "3"], logPath: "\(dir)/log")
        let writer = try ScanWriter(scenario: scenario!, device: d, timeout: 10)
        // tiltd closes the device once it refuses, so the writer may see a broken pipe.
        try? writer.write(scans(d, bias: Vector3(0.01, 0, 0), [(2, .zero), (2, Vector3(0.3, 0.2, 0))]))
        let status = p.waitForExit(timeout: 20)
        writer.close()
        XCTAssertNotNil(status, p.log)
        XCTAssertNotEqual(status, 0, p.log)
        XCTAssertTrue(p.log.contains("refused: moved: "), p.log)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/calibration.toml"))
        XCTAssertEqual(FileManager.default.contents(atPath: config), configBytes)
    }

    func testAccelSixFacesOnTheLiveDevice() throws {
        let d = FakeIIODevice.mpu6050()
        scenario = try FakeScenario([d])
        let gain = Vector3(1.024, 0.979, 1.012), offset = Vector3(-0.21, 0.15, 0.33)
        let p = try DaemonProcess(["calibrate", "accel", "--config", config], logPath: "\(dir)/log")
        let writer = try ScanWriter(scenario: scenario!, device: d, timeout: 10)
        var out: [ScanWriter.Scan] = []
        var t: Int64 = 9_000_000_000
        var q = Quaternion.identity
        for face in ["+Z", "-X", "+Y", "-Z", "+X", "-Y"] {
            // A smooth 0.6 s move to the face, then 3 s still on it.
            let target = SyntheticIMU.faceUp(AccelCalibration.Face(rawValue: face)!)
            var rel = q.conjugate * target
            if rel.w < 0 { rel = Quaternion(w: -rel.w, x: -rel.x, y: -rel.y, z: -rel.z) }
            let angle = 2 * acos(min(1, rel.w))
            let rate = angle > 1e-9 ? rel.vector.normalized * (angle / 0.6) : .zero
            for (seconds, motion) in [
                (0.6, Motion(start: q, bodyRate: rate)), (3.0, Motion(start: target, bodyRate: .zero)),
            ] {
                for i in 0..<Int(seconds * 100) {
                    let r = motion.reading(at: Double(i) / 100)
                    let a = Vector3(gain.x * r.accel.x, gain.y * r.accel.y, gain.z * r.accel.z) + offset
                    out.append(
                        ScanWriter.scan(
                            t: t, accel: d.rawCounts(a, group: d.accel!), gyro: d.rawCounts(r.gyro, group: d.gyro!)))
                    t += 10_000_000
                }
            }
            q = target
        }
        // tiltd stops reading once the sixth face is in: the tail may meet a broken pipe.
        try? writer.write(out)
        let status = p.waitForExit(timeout: 30)
        writer.close()
        XCTAssertEqual(status, 0, p.log)
        XCTAssertTrue(p.log.contains("Place the device with +Z up"), p.log)
        XCTAssertTrue(p.log.contains("captured -Y up"), p.log)
        XCTAssertTrue(p.log.contains("wrote accel_offset, accel_scale to \(dir)/calibration.toml"), p.log)
        let text = try String(contentsOfFile: "\(dir)/calibration.toml", encoding: .utf8)
        func numbers(_ key: String) throws -> [Double] {
            let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("\(key) = [") }, text)
            return line.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }.split(separator: ",")
                .compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
        let scale = try numbers("accel_scale"), off = try numbers("accel_offset")
        for i in 0..<3 {
            XCTAssertEqual(scale[i] * gain[i], 1, accuracy: 0.01, "scale \(i) within 1 %")
            XCTAssertEqual(off[i], offset[i], accuracy: 0.02, "offset \(i)")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: config), configBytes)
    }
}
