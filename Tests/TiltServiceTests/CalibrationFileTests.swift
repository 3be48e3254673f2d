// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import TestSupport
import TiltCore
import TiltPlatform
import XCTest

@testable import TiltConfig
@testable import TiltService

/// The calibration file writer, the `neutral` and `persist_*` keys, and gyro-bias persistence.
final class CalibrationFileTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = makeTempDir("calfile") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: dir).sorted() }

    func testUpdateKeepsKeysItDoesNotChangeAndLeavesNoTemporaryFile() throws {
        let path = "\(dir)/calibration.toml"
        try CalibrationFile.update(path: path) {
            $0.accelOffset = Vector3(0.1, -0.2, 0.3); $0.accelScale = Vector3(1.01, 0.99, 1.0)
        }
        try CalibrationFile.update(path: path, note: "test") { $0.gyroBias = Vector3(0.01, -0.02, 0.003) }
        let c = try CalibrationFile.read(path: path)
        XCTAssertEqual(c.accelOffset, Vector3(0.1, -0.2, 0.3))
        XCTAssertEqual(c.accelScale, Vector3(1.01, 0.99, 1.0))
        XCTAssertEqual(c.gyroBias, Vector3(0.01, -0.02, 0.003))
        XCTAssertNil(c.accelMatrix)
        XCTAssertNil(c.neutral)
        XCTAssertEqual(try files(), ["calibration.toml"])
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("# tiltd calibration, written by `tiltd calibrate`"), text)
        XCTAssertTrue(text.contains("# Last change: test"), text)
        // What is written loads through the real config loader too.
        XCTAssertEqual(try Configuration.loadCalibration(path: path).gyroBias, Vector3(0.01, -0.02, 0.003))
    }

    func testMagnetometerKeysAreWrittenBesideTheOthersAndApplied() throws {
        let path = "\(dir)/calibration.toml"
        try CalibrationFile.update(path: path) { $0.gyroBias = Vector3(0.01, -0.02, 0.003) }
        let soft = Matrix3(Vector3(1.05, 0.02, -0.01), Vector3(0.02, 0.97, 0.03), Vector3(-0.01, 0.03, 0.985))
        try CalibrationFile.update(path: path, note: "tiltd calibrate mag") {
            $0.magOffset = Vector3(12.5, -30.25, 4); $0.magMatrix = soft
        }
        let c = try CalibrationFile.read(path: path)
        XCTAssertEqual(c.gyroBias, Vector3(0.01, -0.02, 0.003), "the other keys are kept")
        XCTAssertEqual(c.magOffset, Vector3(12.5, -30.25, 4))
        XCTAssertEqual(c.magMatrix, soft)
        // Through the real loader, and applied as W · (m − b) in the one front end every source uses.
        let cal = try Configuration.loadCalibration(path: path)
        let m = Vector3(40, -10, -35)
        let want = soft * (m - Vector3(12.5, -30.25, 4))
        let got = SampleFrontEnd(calibration: cal).apply(MagSample(t: 7, field: m))
        XCTAssertEqual(got.t, 7)
        XCTAssertEqual((got.field - want).norm, 0, accuracy: 1e-12)
        // The config's mount matrix turns the field first, as it turns the accelerometer.
        let mount = Matrix3(Vector3(0, 1, 0), Vector3(-1, 0, 0), Vector3(0, 0, 1))
        let mounted = SampleFrontEnd(mount: mount, calibration: cal).apply(MagSample(t: 7, field: m)).field
        XCTAssertEqual((mounted - soft * (mount * m - Vector3(12.5, -30.25, 4))).norm, 0, accuracy: 1e-12)
        // A matrix that flips the field is a broken fit: refused, the file unchanged.
        XCTAssertThrowsError(
            try CalibrationFile.update(path: path) {
                $0.magMatrix = Matrix3(Vector3(-1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1))
            })
        XCTAssertEqual(try CalibrationFile.read(path: path).magMatrix, soft)
    }

    func testAnAtomicWriteIntoAFIFOWritesIntoItAndLeavesItAFIFO() throws {
        // `tiltd import --out /dev/null` (or /dev/stdout) once renamed a regular file over the
        // device node. A FIFO stands in for the device here: what must not happen to /dev/null
        // must not be tried on it in a test.
        let fifo = "\(dir)/out.fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // The reader's end first (non-blocking), so the writer's open does not wait for one.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        try CalibrationFile.writeAtomically(Array("hello".utf8), to: fifo)
        var info = stat()
        XCTAssertEqual(lstat(fifo, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO, "still a FIFO")
        var buf = [UInt8](repeating: 0, count: 64)
        let n = read(reader, &buf, buf.count)
        XCTAssertEqual(Array(buf[..<max(n, 0)]), Array("hello".utf8), "the bytes went through the FIFO")
        XCTAssertEqual(try files(), ["out.fifo"], "no temporary file left")
    }

    func testAnAtomicWriteThroughASymlinkReplacesTheFileNotTheLink() throws {
        try "old".write(toFile: "\(dir)/real.toml", atomically: false, encoding: .utf8)
        XCTAssertEqual(symlink("real.toml", "\(dir)/link.toml"), 0)
        try CalibrationFile.writeAtomically(Array("new".utf8), to: "\(dir)/link.toml")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: "\(dir)/link.toml"), "real.toml")
        XCTAssertEqual(try String(contentsOfFile: "\(dir)/real.toml", encoding: .utf8), "new")
    }

    func testValuesRoundTripExactlyEnough() throws {
        let path = "\(dir)/c.toml"
        let q = Quaternion(roll: 0.123456, pitch: -0.3, yaw: 2).normalized
        let m = Matrix3(rowMajor: [
            1.0123456789, 0.0021, -0.0013, 0.0021, 0.987654321, 0.0005, -0.0013, 0.0005, 1.00001,
        ])!
        try CalibrationFile.update(path: path) {
            $0.neutral = q; $0.accelMatrix = m; $0.gyroBias = Vector3(1e-5, -0, 0.123456789)
        }
        let c = try CalibrationFile.read(path: path)
        let back = try XCTUnwrap(c.neutral)
        XCTAssertEqual(back.w, q.w, accuracy: 1e-8); XCTAssertEqual(back.z, q.z, accuracy: 1e-8)
        for (a, b) in zip(try XCTUnwrap(c.accelMatrix).rowMajor, m.rowMajor) { XCTAssertEqual(a, b, accuracy: 1e-8) }
        XCTAssertEqual(c.gyroBias?.x ?? 0, 1e-5, accuracy: 1e-12)
        XCTAssertEqual(c.gyroBias?.z ?? 0, 0.123456789, accuracy: 1e-9)
    }

    func testBrokenFileIsNotOverwritten() throws {
        let path = "\(dir)/calibration.toml"
        let broken = "[calibration]\ngyro_bias = [0.1, 0.2]\n"
        try broken.write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try CalibrationFile.update(path: path) { $0.gyroBias = .zero }) { e in
            XCTAssertTrue("\(e)".contains("\(path):2: calibration.gyro_bias: expected 3 numbers"), "\(e)")
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), broken)
        XCTAssertEqual(try files(), ["calibration.toml"])
    }

    func testAValueTheLoaderWouldRefuseIsNeverWritten() throws {
        let path = "\(dir)/calibration.toml"
        try CalibrationFile.update(path: path) { $0.gyroBias = Vector3(0.01, 0, 0) }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try CalibrationFile.update(path: path) { $0.accelScale = Vector3(1.5, 1, 1) })
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        XCTAssertEqual(try files(), ["calibration.toml"])
    }

    func testWriteKeepsTheFileMode() throws {
        let path = "\(dir)/calibration.toml"
        try CalibrationFile.update(path: path) { $0.gyroBias = .zero }
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, 0o644)
        chmod(path, 0o600)
        try CalibrationFile.update(path: path) { $0.gyroBias = Vector3(0.001, 0, 0) }
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, 0o600)
    }

    func testNeutralMustBeAUnitQuaternionWithFileAndLine() throws {
        let path = "\(dir)/calibration.toml"
        try "# mine\n[calibration]\nneutral = [0.9, 0.1, 0.0, 0.0]\n".write(
            toFile: path, atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try Configuration.loadCalibration(path: path)) { e in
            XCTAssertTrue("\(e)".hasPrefix("\(path):3: calibration.neutral: must be a unit quaternion"), "\(e)")
        }
        try "[calibration]\nneutral = [1, 0, 0]\n".write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try Configuration.loadCalibration(path: path)) { e in
            XCTAssertTrue("\(e)".contains("expected 4 numbers"), "\(e)")
        }
        let s = 0.5.squareRoot()
        try "[calibration]\nneutral = [\(s), \(s), 0, 0]\n".write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertEqual(try Configuration.loadCalibration(path: path).neutral, Quaternion(w: s, x: s, y: 0, z: 0))
    }

    func testPersistSettingsAreReadFromTheMainConfigOnly() throws {
        let main = try Configuration.parse(
            text: "[calibration]\npersist_gyro_bias = true\npersist_after_s = 120\npersist_interval_min = 10\n",
            file: "\(dir)/tiltd.toml")
        XCTAssertEqual(
            main.biasPersistence,
            {
                var b = Configuration.BiasPersistence(); b.enabled = true; b.afterSeconds = 120; b.intervalMinutes = 10;
                return b
            }())
        XCTAssertFalse(try Configuration.parse(text: "", file: "\(dir)/tiltd.toml").biasPersistence.enabled)
        XCTAssertThrowsError(
            try Configuration.parse(text: "[calibration]\npersist_after_s = 1\n", file: "\(dir)/tiltd.toml"))
        let path = "\(dir)/calibration.toml"
        try "[calibration]\npersist_gyro_bias = true\n".write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try Configuration.loadCalibration(path: path)) { e in
            XCTAssertTrue("\(e)".contains("calibration.persist_gyro_bias: unknown key"), "\(e)")
        }
    }

    // MARK: bias persistence

    func settings(after: Double = 60, interval: Double = 30) -> Configuration.BiasPersistence {
        var s = Configuration.BiasPersistence()
        s.enabled = true; s.afterSeconds = after; s.intervalMinutes = interval
        return s
    }

    func testPolicySavesAfterLongRestAtMostOncePerInterval() {
        var p = BiasPersistPolicy(settings: settings(after: 60, interval: 30), appliedBias: Vector3(0.01, 0, 0))
        let learnt = Vector3(0.002, -0.001, 0)
        var saves: [(Double, Vector3)] = []
        func run(from: Double, to: Double, atRest: Bool, bias: Vector3 = learnt) {
            var t = from
            while t < to {
                if let b = p.feed(t: Nanoseconds(t * 1e9), atRest: atRest, bias: bias) { saves.append((t, b)) }
                t += 0.1
            }
        }
        run(from: 0, to: 50, atRest: true)
        run(from: 50, to: 51, atRest: false)  // a movement resets the rest timer
        run(from: 51, to: 200, atRest: true)
        XCTAssertEqual(saves.count, 1)
        XCTAssertEqual(saves[0].0, 111, accuracy: 0.15)
        XCTAssertEqual(saves[0].1, Vector3(0.012, -0.001, 0), "applied + learnt")
        run(from: 200, to: 1000, atRest: true, bias: Vector3(0.003, -0.001, 0))
        XCTAssertEqual(saves.count, 1, "within 30 min of the last save")
        run(from: 1000, to: 2000, atRest: true, bias: Vector3(0.003, -0.001, 0))
        XCTAssertEqual(saves.count, 2)
        XCTAssertEqual(saves[1].0, 111 + 1800, accuracy: 0.15)
        run(from: 2000, to: 5000, atRest: true, bias: Vector3(0.00305, -0.001, 0))
        XCTAssertEqual(saves.count, 2, "a change below \(BiasPersistPolicy.minChange) rad/s is not worth a write")
    }

    func testPolicyDoesNothingWhenDisabled() {
        var p = BiasPersistPolicy(settings: Configuration.BiasPersistence(), appliedBias: .zero)
        for i in 0..<100_000 {
            XCTAssertNil(p.feed(t: Nanoseconds(i) * 10_000_000, atRest: true, bias: Vector3(0.01, 0, 0)))
        }
    }

    func testPersisterWritesTheFileOffTheCallerAndKeepsOtherKeys() throws {
        let path = "\(dir)/calibration.toml"
        try CalibrationFile.update(path: path) {
            $0.accelOffset = Vector3(0.1, 0, 0); $0.gyroBias = Vector3(0.01, 0, 0)
        }
        let persister = BiasPersister(
            settings: settings(after: 5, interval: 1), path: path,
            appliedBias: Vector3(0.01, 0, 0), logger: Logger(label: "test"))
        for i in 0...700 {
            persister.feed(t: Nanoseconds(i) * 10_000_000, atRest: true, bias: Vector3(0.001, 0.002, 0))
        }
        persister.drain()
        XCTAssertEqual(persister.savedBiases.count, 1)
        let c = try CalibrationFile.read(path: path)
        XCTAssertEqual(c.gyroBias?.x ?? 0, 0.011, accuracy: 1e-12)
        XCTAssertEqual(c.gyroBias?.y ?? 0, 0.002, accuracy: 1e-12)
        XCTAssertEqual(c.accelOffset, Vector3(0.1, 0, 0))
    }

    func testPersisterIsMadeOnlyWhenEnabled() throws {
        var c = try Configuration.parse(text: "", file: "\(dir)/tiltd.toml")
        XCTAssertNil(BiasPersister.make(config: c, logger: Logger(label: "test")))
        c.biasPersistence.enabled = true
        XCTAssertEqual(BiasPersister.make(config: c, logger: Logger(label: "test"))?.path, "\(dir)/calibration.toml")
    }
}
