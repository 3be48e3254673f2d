// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import XCTest

@testable import TiltCore

/// Issue 30's defects of `calibrate neutral` and the head frame in the game, one test each
/// (the command-line ones are in IntegrationTests/CalibrateTests).
final class NeutralCalibrationTests: XCTestCase {
    static let d = Double.pi / 180

    /// Samples of a head looking ahead with up = +z (sensor frame), at `hz`.
    struct Head {
        var t: Nanoseconds = 1_000_000_000
        var hz = 100.0
        var samples: [IMUSample] = []
        mutating func still(_ seconds: Double) { rate(.zero, seconds) }
        mutating func rate(_ w: Vector3, _ seconds: Double) {
            for _ in 0..<Int((seconds * hz).rounded()) {
                samples.append(IMUSample(t: t, accel: Vector3(0, 0, 9.81), gyro: w))
                t += Nanoseconds((1e9 / hz).rounded())
            }
        }
    }

    func testATwitchBeforeTheNodDoesNotRefuseTheCalibration() {
        // Board x forward, z up, so the wearer's left is +y (a nod down is +y).
        var h = Head()
        h.still(1)
        h.rate(Vector3(0, 0, 29 * Self.d), 0.1)  // a small turn about the vertical
        h.still(0.15)
        h.rate(Vector3(0, 80 * Self.d, 0), 0.25)  // down 20°
        h.rate(Vector3(0, -80 * Self.d, 0), 0.25)  // and back
        h.still(1.5)
        var cal = HeadFrameCalibration()
        for s in h.samples { cal.add(s) }
        guard case .done(let f) = cal.finish() else { return XCTFail("\(cal.finish())") }
        XCTAssertEqual(f.forward.dot(Vector3(1, 0, 0)), 1, accuracy: 0.01, "\(f.forward)")
    }

    func testTheLargestCleanNodIsTakenNotTheFirstMovement() {
        // A 6° nod, then at once (0.3 s later) a proper 20° one, tilted a little the other way.
        var h = Head()
        h.still(1)
        h.rate(Vector3(0, 60 * Self.d, 0), 0.1)
        h.rate(Vector3(0, -60 * Self.d, 0), 0.1)
        h.still(0.3)
        let axis = Vector3(0.2, 1, 0).normalized
        h.rate(axis * (80 * Self.d), 0.25)
        h.rate(axis * (-80 * Self.d), 0.25)
        h.still(1.5)
        var cal = HeadFrameCalibration()
        for s in h.samples { cal.add(s) }
        guard case .done(let f) = cal.finish() else { return XCTFail("\(cal.finish())") }
        XCTAssertEqual(f.left.dot(axis), 1, accuracy: 0.01, "\(f.left)")
    }

    func testAGestureStartsAtItsFirstMovingSample() {
        // Issue 30: at 26 Hz a swing was dated from the sample before its first moving one, so a
        // nod begun 269 ms after a prompt counted as begun at 231 ms.
        var detector = GestureDetector()
        let period: Nanoseconds = 38_461_538
        var t: Nanoseconds = 1_000_000_000
        var firstMoving: Nanoseconds?
        var found: [HeadGesture] = []
        for i in 0..<80 {
            let k = i - 26
            let pitch: Double = (0..<6).contains(k) ? 100 : ((6..<12).contains(k) ? -100 : 0)
            if pitch != 0, firstMoving == nil { firstMoving = t }
            found += detector.add(t: t, pitch: pitch * Self.d, yaw: 0)
            t += period
        }
        XCTAssertEqual(found.map(\.kind), [.nod])
        XCTAssertEqual(found.first?.start, firstMoving)
    }

    /// A board with its x axis to the back of the head (y up): nods turn about sensor z, which
    /// the convention takes for the front-to-back axis.
    static let xBack = Quaternion(axis: Vector3(0, 1, 0), angle: -Double.pi / 2)

    static func nodding() -> [(attitude: Attitude, rate: Vector3)] {
        var m = HeadMotion()
        m.hold(1)
        for _ in 0..<8 { m.answer(40, hold: 0.3); m.hold(0.8) }
        m.hold(1)
        var trace = HeadTrace(rateHz: 100)
        trace.mount = xBack
        return trace.samples(m)
    }

    func testARightBackAxisIsHonouredBeforeTheFirstCapture() throws {
        // Issue 30: the orientation check used the convention's axes until a pose was captured,
        // so a correct back_axis looked suspect while the wearer nodded before any round.
        var trace = HeadTrace(rateHz: 100)
        trace.mount = Self.xBack
        var rules = TiltGame.Rules()
        rules.mode = .relative
        rules.backAxis = trace.backAxisInSensor
        var game = try TiltGame(configuration: rules)
        var events: [GameEvent] = []
        for x in Self.nodding() { events += game.update(x.attitude, rate: x.rate) }
        XCTAssertFalse(events.contains { $0.kind == .orientationSuspect }, "\(GamePlay.kinds(events))")
        XCTAssertEqual(game.headFrame.left.dot(Vector3(0, 0, 1)).magnitude, 1, accuracy: 0.05)
    }

    func testASuspectClearedByANewCaptureIsFollowedByOrientationOK() throws {
        // Issue 30: a capture reset the check silently; the last event said no prompt would appear.
        var rules = TiltGame.Rules()
        rules.mode = .relative
        var game = try TiltGame(configuration: rules)
        var events: [GameEvent] = []
        let samples = Self.nodding()
        for x in samples { events += game.update(x.attitude, rate: x.rate) }
        XCTAssertTrue(game.orientationSuspect, "\(GamePlay.kinds(events))")
        let captured = game.captureNeutral(samples.last!.attitude)
        XCTAssertEqual(GamePlay.kinds(captured), ["neutral_captured", "orientation_ok"])
        XCTAssertFalse(game.orientationSuspect)
    }

    func testASuspectResetByNewRulesIsFollowedByOrientationOK() throws {
        // A new back_axis starts the check over: that is said, not done silently.
        var rules = TiltGame.Rules()
        rules.mode = .relative
        var game = try TiltGame(configuration: rules)
        for x in Self.nodding() { _ = game.update(x.attitude, rate: x.rate) }
        XCTAssertTrue(game.orientationSuspect)
        rules.backAxis = Vector3(1, 0, 0)
        let events = try game.setConfiguration(rules)
        XCTAssertEqual(GamePlay.kinds(events), ["orientation_ok"])
        XCTAssertEqual(events.first?.t, game.lastT)
        XCTAssertFalse(game.orientationSuspect)
        // Unchanged frame rules say nothing.
        rules.holdSeconds = 0.3
        XCTAssertEqual(try game.setConfiguration(rules), [])
    }
}
