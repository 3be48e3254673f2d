// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// The real `tiltd calibrate mag --replay` on synthetic recordings (v2) whose field carries a known
/// hard-iron offset and soft iron: the offset comes back within 1 µT and only the magnetometer's
/// keys are written; a recording turned about one axis only is refused with exit status 3.
final class CalibrateMagTests: XCTestCase {
    var dir = ""
    var config: String { "\(dir)/tiltd.toml" }
    var calFile: String { "\(dir)/calibration.toml" }

    override func setUp() {
        dir = makeTempDir("calmag")
        FileManager.default.createFile(
            atPath: config, contents: Data("[calibration]\nfile = \"calibration.toml\"\n".utf8))
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// Berlin's field (WMM2025, µT: north 18.4, east 1.5, down 46.3) in an x-east, y-north, z-up world.
    let earth = Vector3(1.5, 18.4, -46.3)
    let hardIron = Vector3(35.5, -61.25, 12.75)
    let softIron = Matrix3(Vector3(1.06, 0.03, -0.01), Vector3(0.03, 0.95, 0.02), Vector3(-0.01, 0.02, 1.0))

    /// A v2 recording at 50 Hz with a field on every row: the board in `orientations`, the field
    /// distorted (S·f + b) and noisy (±0.2 µT, a fixed sequence).
    func recording(_ name: String, _ orientations: [Quaternion]) throws -> String {
        var lines = [RecordingFormat.bannerV2, RecordingFormat.headerV2]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func noise() -> Double {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(seed >> 11) / Double(1 << 53) - 0.5) * 0.4
        }
        for (i, q) in orientations.enumerated() {
            let accel = q.conjugate.rotate(Vector3(0, 0, 9.81))
            let field = softIron * q.conjugate.rotate(earth) + hardIron + Vector3(noise(), noise(), noise())
            let s = IMUSample(t: 1_000_000_000 + Int64(i) * 20_000_000, accel: accel, gyro: .zero)
            lines.append(RecordingFormat.format(s, field: field))
        }
        let path = "\(dir)/\(name).csv"
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func calibrationNumbers(_ key: String) throws -> [Double] {
        let text = try String(contentsOfFile: calFile, encoding: .utf8)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("\(key) = [") }, text)
        return line.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }.split(separator: ",")
            .map { Double($0.trimmingCharacters(in: .whitespaces)) ?? .nan }
    }

    func testAKnownHardIronOffsetComesBackWithin1MicroteslaAndOnlyItsKeysAreWritten() throws {
        try "[calibration]\ngyro_bias = [0.01, -0.02, 0.003]\n".write(
            toFile: calFile, atomically: true, encoding: .utf8)
        // 800 orientations drawn uniformly (Shoemake's method, a fixed sequence): what turning the
        // board through all directions gives.
        var u: UInt64 = 12345
        func uniform() -> Double {
            u = u &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(u >> 11) / Double(1 << 53)
        }
        let turns = (0..<800).map { _ -> Quaternion in
            let (u1, u2, u3) = (uniform(), uniform(), uniform())
            let a = (1 - u1).squareRoot(), b = u1.squareRoot()
            return Quaternion(
                w: a * sin(2 * .pi * u2), x: a * cos(2 * .pi * u2), y: b * sin(2 * .pi * u3), z: b * cos(2 * .pi * u3))
        }
        let path = try recording("turned", turns)
        let (status, out) = try runTiltd(
            ["calibrate", "mag", "--replay", path, "--config", config, "--lat", "52.52", "--lon", "13.40"], timeout: 60)
        XCTAssertEqual(status, 0, out)
        print(out)  // the fit's figures, for the log
        let offset = try calibrationNumbers("mag_offset")
        for i in 0..<3 { XCTAssertEqual(offset[i], hardIron[i], accuracy: 1, "mag_offset[\(i)]; \(out)") }
        XCTAssertEqual(try calibrationNumbers("mag_matrix").count, 9)
        XCTAssertEqual(try calibrationNumbers("gyro_bias"), [0.01, -0.02, 0.003], "other keys are kept")
        XCTAssertTrue(out.contains("the World Magnetic Model expects"), out)
        XCTAssertTrue(out.contains("wrote mag_offset, mag_matrix"), out)
    }

    func testTurningAboutOneAxisOnlyIsRefusedWithWhatIsMissing() throws {
        // Level, turned round and round about the vertical: the z axis never points along the field.
        let flat = (0..<600).map { Quaternion(axis: Vector3(0, 0, 1), angle: Double($0) * 0.05) }
        let path = try recording("flat", flat)
        let (status, out) = try runTiltd(["calibrate", "mag", "--replay", path, "--config", config], timeout: 60)
        XCTAssertEqual(status, 3, out)
        XCTAssertTrue(out.contains("refused") && out.contains("directions"), out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: calFile), "nothing written")
    }
}
