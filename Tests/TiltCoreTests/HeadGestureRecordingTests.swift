// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import XCTest

@testable import TiltCore

/// The game on real heads: excerpts of the head-gestures recordings (Fixtures/head-gestures,
/// BSD-3 licence there) through the real detector, the calibration nod and the real game.
/// The whole data set is measured by bench/gestures/run; these assert the same targets.
final class HeadGestureRecordingTests: XCTestCase {
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/head-gestures")
    /// The headset's axes (X back, Y up, Z left) to tiltd's convention (x right, y up, z back).
    static let headsetMount = Matrix3(Vector3(0, 0, -1), Vector3(0, 1, 0), Vector3(1, 0, 0))

    static func load(_ name: String) throws -> [IMUSample] {
        let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
        return try ForeignLogFormat.stMLC.parse(text, rateHz: 30)
    }

    static func play(
        _ samples: [IMUSample], _ gestures: TiltGame.Rules.Gestures,
        frontEnd: SampleFrontEnd = SampleFrontEnd(mount: headsetMount)
    ) throws -> ([GameEvent], GameJudge.Summary) {
        var o = GameJudge.Options()
        o.frontEnd = frontEnd
        o.gestures = gestures
        return try GameJudge.play(samples, options: o)
    }

    static func cycles(_ samples: [IMUSample]) -> (nods: Int, shakes: Int) {
        let fe = SampleFrontEnd(mount: headsetMount)
        var est = AttitudeEstimator()
        let rates = samples.map { r -> Vector3 in
            let s = fe.apply(r); return s.gyro - est.update(s).gyroBias
        }
        return GestureCycles.count(times: samples.map(\.t), rates: rates, frame: .assumed)
    }

    func testTheDetectorFindsNodsAndShakesInRealRecordings() throws {
        let nods = try Self.load("nod-0-60s.txt"), shakes = try Self.load("shake1-0-50s.txt")
        let nodCycles = Self.cycles(nods), shakeCycles = Self.cycles(shakes)
        XCTAssertGreaterThan(nodCycles.nods, 50)
        XCTAssertGreaterThan(shakeCycles.shakes, 80)
        let (_, n) = try Self.play(nods, .nod), (_, s) = try Self.play(shakes, .nod)
        XCTAssertGreaterThanOrEqual(Double(n.nodsDetected), 0.9 * Double(nodCycles.nods), "nod recall")
        XCTAssertLessThanOrEqual(Double(n.shakesDetected), 0.02 * Double(nodCycles.nods), "nods read as shakes")
        XCTAssertGreaterThanOrEqual(Double(s.shakesDetected), 0.9 * Double(shakeCycles.shakes), "shake recall")
        XCTAssertLessThanOrEqual(Double(s.nodsDetected), 0.02 * Double(shakeCycles.shakes), "shakes read as nods")
    }

    func testTheNodGameAnswersYesToNodsAndNoToShakesNeverTooFastNorStill() throws {
        let (_, n) = try Self.play(try Self.load("nod-0-60s.txt"), .nod)
        let (_, s) = try Self.play(try Self.load("shake1-0-50s.txt"), .nod)
        XCTAssertGreaterThanOrEqual(n.decisions, 10, "a game that never prompts is not a pass")
        XCTAssertGreaterThanOrEqual(s.decisions, 10)
        XCTAssertGreaterThanOrEqual(Double(n.correct), 0.95 * Double(n.decisions))
        XCTAssertGreaterThanOrEqual(Double(s.skip), 0.95 * Double(s.decisions))
        for x in [n, s] {
            XCTAssertEqual(x.fasterThanReaction, 0)
            XCTAssertEqual(x.whileStill, 0)
            XCTAssertGreaterThanOrEqual(x.medianDecisionMs ?? 0, 250)
        }
    }

    func testTheTiltGameNeverSaysCorrectToAShake() throws {
        let (_, s) = try Self.play(try Self.load("shake1-0-50s.txt"), .tilt)
        XCTAssertEqual(s.correct, 0)
        let (_, n) = try Self.play(try Self.load("nod-0-60s.txt"), .tilt)
        XCTAssertEqual(n.fasterThanReaction + s.fasterThanReaction, 0)
        XCTAssertEqual(n.whileStill + s.whileStill, 0)
    }

    /// Look ahead, nod down once: the first seconds of the nod recording.
    static func calibrate(_ samples: [IMUSample]) throws -> HeadFrame {
        var cal = HeadFrameCalibration()
        for s in samples.prefix(30 * 10) {
            if case .done = cal.add(s) { break }
        }
        struct Refused: Error { var progress: HeadFrameCalibration.Progress }
        guard case .done(let f) = cal.finish() else { throw Refused(progress: cal.finish()) }
        return f
    }

    func testTheCalibrationNodLearnsTheHeadsetAxes() throws {
        let frame = try Self.calibrate(try Self.load("nod-0-60s.txt"))
        // README: X back, Y up, Z left (sensor frame, no mount matrix).
        XCTAssertGreaterThan(
            frame.forward.dot(Vector3(-1, 0, 0)), cos(20 * Double.pi / 180), "forward \(frame.forward)")
        XCTAssertGreaterThan(frame.left.dot(Vector3(0, 0, 1)), cos(20 * Double.pi / 180), "left \(frame.left)")
        XCTAssertGreaterThan(frame.up.dot(Vector3(0, 1, 0)), cos(20 * Double.pi / 180), "up \(frame.up)")
    }

    func testARotatedBoardGivesTheSameDecisionsAfterTheCalibrationNod() throws {
        let original = try Self.load("nod-0-60s.txt")
        func decisions(_ samples: [IMUSample], _ g: TiltGame.Rules.Gestures) throws -> [String] {
            let frame = try Self.calibrate(samples)
            let cal = IMUCalibration(headUp: frame.up, headForward: frame.forward)
            let (events, _) = try Self.play(samples, g, frontEnd: SampleFrontEnd(calibration: cal))
            return events.compactMap { e in
                guard let d = e.decision else { return nil }
                return "\(e.kind.rawValue)@\((d.decidedAt - samples[0].t) / 10_000_000)"
            }
        }
        for g in TiltGame.Rules.Gestures.allCases {
            let reference = try decisions(original, g)
            XCTAssertFalse(reference.isEmpty, "\(g)")
            // Upside down (turned over about the forward axis) and turned 90° about the vertical.
            for (name, r) in [
                ("upside down", Quaternion(axis: Vector3(1, 0, 0), angle: .pi)),
                ("90° about up", Quaternion(axis: Vector3(0, 1, 0), angle: .pi / 2)),
                ("skew 70°", Quaternion(axis: Vector3(0.3, 1, 0.5).normalized, angle: 70 * .pi / 180)),
            ] {
                let rotated = original.map { IMUSample(t: $0.t, accel: r.rotate($0.accel), gyro: r.rotate($0.gyro)) }
                XCTAssertEqual(try decisions(rotated, g), reference, "\(g), \(name)")
            }
        }
    }

    func testTheImporterReadsTheLogsAndNamesTheLineOfABadRow() throws {
        let samples = try Self.load("nod-0-60s.txt")
        XCTAssertEqual(samples.count, 1800)
        XCTAssertEqual(samples[1].t - samples[0].t, 33_333_333, accuracy: 1)
        // First row: -106.872 971.12 -153.72 mg, 1.68 -0.42 3.64 dps.
        XCTAssertEqual(samples[0].accel.y, 0.97112 * 9.80665, accuracy: 1e-9)
        XCTAssertEqual(samples[0].gyro.z, 3.64 * .pi / 180, accuracy: 1e-12)
        let header = "A_X [mg] \t A_Y [mg] \t A_Z [mg] \tG_X [dps] \t G_Y [dps] \t G_Z [dps] \t\n"
        func error(_ text: String) -> String {
            do { _ = try ForeignLogFormat.stMLC.parse(text, rateHz: 30); return "no error" } catch {
                return error.description
            }
        }
        XCTAssertEqual(
            error(header + "1\t2\t3\t4\t5\t6\n1\t2\t3\t4\t5\n"),
            "line 3: expected 6 tab-separated numbers (mg, mg, mg, dps, dps, dps), got 5 fields")
        XCTAssertEqual(error(header + "1\t2\tx3\t4\t5\t6\n"), "line 2: field 3 is not a number: \"x3\"")
        XCTAssertEqual(error(header + "1\t2\tnan\t4\t5\t6\n"), "line 2: field 3 is not a number: \"nan\"")
        XCTAssertEqual(error("t_ns,ax,ay,az,gx,gy,gz\n1,2,3,4,5,6,7\n").prefix(30), "line 1: expected the header \"A")
        XCTAssertEqual(error(""), "the input is empty")
        XCTAssertEqual(error(header), "the input has a header but no samples")
        do {
            _ = try ForeignLogFormat.stMLC.parse(header + "1\t2\t3\t4\t5\t6\n", rateHz: 0); XCTFail("rate 0 accepted")
        } catch {
            XCTAssertEqual(error.description, "the rate must be within 0…100000 Hz, got 0.0")
        }
    }
}
