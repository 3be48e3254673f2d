// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import XCTest

@testable import TiltCore

/// `HeadFrameLearner` and the game's use of it (issue 30, point 2): synthetic wear with the
/// sensor mounted at a known, skewed rotation.
final class HeadFrameLearnerTests: XCTestCase {
    /// Head frame → sensor frame: a mount far from the convention (y up, z back).
    static let mount = Quaternion(roll: 1.2, pitch: -0.7, yaw: 2.1)
    static let headUp = Vector3(0, 0, 1)
    static let headForward = Vector3(1, 0, 0)
    static let headLeft = Vector3(0, 1, 0)

    /// One sample of wear at time `s` (head frame): accelerometer and rate. `walking`: 1.8 steps/s,
    /// the head bobbing about its ear-to-ear axis at the step frequency, rolling and yawing at the
    /// stride frequency (larger than the bob, as the body sways), the forward acceleration going
    /// with the vertical speed; `downDeg`: the head pitched down that much meanwhile (watching
    /// stairs). Not walking: reading, the head 25° down, nearly still.
    static func wear(_ s: Double, walking: Bool, downDeg: Double = 0) -> (accel: Vector3, rate: Vector3) {
        let step = 2 * Double.pi * 1.8
        if walking {
            let accel =
                headUp * (9.81 + 1.5 * sin(step * s)) + headForward * (-0.8 * cos(step * s))
                + headLeft * (0.6 * sin(step / 2 * s))
            let rate =
                headLeft * (0.25 * sin(step * s + 0.7)) + headForward * (0.35 * sin(step / 2 * s))
                + headUp * (0.3 * sin(step / 2 * s + 1))
            // The body's vectors seen from a head pitched down (about the ear-to-ear axis).
            let tip = Quaternion(axis: headLeft, angle: -downDeg * .pi / 180)
            return (tip.rotate(accel), tip.rotate(rate))
        }
        let down = 25 * Double.pi / 180
        let accel = (headUp * cos(down) - headForward * sin(down)) * 9.81
        return (accel, ActivityTests.jitter(s, dps: 1))
    }

    /// Feeds the learner `seconds` of wear at 100 Hz, in the sensor frame.
    static func feed(
        _ l: inout HeadFrameLearner, from t0: Double, seconds: Double, walking: Bool, downDeg: Double = 0
    ) {
        for i in 0..<Int(seconds * 100) {
            let s = t0 + Double(i) / 100
            let (a, w) = wear(s, walking: walking, downDeg: downDeg)
            l.add(
                t: Nanoseconds(s * 1e9) + 1_000_000_000, accel: mount.rotate(a), rate: mount.rotate(w),
                activity: walking ? .walking : .still)
        }
    }

    static func degrees(_ a: Vector3, _ b: Vector3) -> Double {
        acos(max(-1, min(1, a.normalized.dot(b.normalized)))) * 180 / .pi
    }

    func testTheFrameIsLearnedFromWalkingOnASkewedMount() throws {
        var l = HeadFrameLearner()
        Self.feed(&l, from: 0, seconds: 30, walking: false)
        Self.feed(&l, from: 30, seconds: 10, walking: true)
        XCTAssertNil(l.frame, "not confident after 10 s of walking")
        Self.feed(&l, from: 40, seconds: 30, walking: true)
        let f = try XCTUnwrap(l.frame)
        XCTAssertEqual(f.source, .learned)
        XCTAssertLessThan(Self.degrees(f.up, Self.mount.rotate(Self.headUp)), 3)
        XCTAssertLessThan(Self.degrees(f.left, Self.mount.rotate(Self.headLeft)), 5, "the pitch axis, not the sway's")
        XCTAssertLessThan(Self.degrees(f.forward, Self.mount.rotate(Self.headForward)), 5)
    }

    func testWindowsWithGesturesAreNotLearnedFrom() {
        // The game drops the window whenever its detector sees a nod or a shake (continuous
        // nodding reads as steps in part): a minute of that teaches nothing.
        var l = HeadFrameLearner()
        for k in 0..<30 {
            Self.feed(&l, from: Double(k) * 2, seconds: 2, walking: true)
            l.dropWindow()
        }
        XCTAssertNil(l.frame)
        XCTAssertEqual(l.walkingWindows, 0)
    }

    func testWithoutLooksThereIsNoFrameUntilTheWearerLooksDown() throws {
        // The sign comes only from looking down: a frame the wrong way round would swap
        // `correct` and `skip`, so a wearer seen only walking gets none.
        var l = HeadFrameLearner()
        Self.feed(&l, from: 0, seconds: 60, walking: true)
        XCTAssertGreaterThanOrEqual(l.walkingWindows, HeadFrameLearner.minWalkingWindows)
        XCTAssertNil(l.frame, "no looks yet: the sign is unknown")
        Self.feed(&l, from: 60, seconds: 20, walking: false)
        Self.feed(&l, from: 80, seconds: 6, walking: true)
        let f = try XCTUnwrap(l.frame)
        XCTAssertLessThan(Self.degrees(f.forward, Self.mount.rotate(Self.headForward)), 5)
    }

    func testUpIsTheWalkingCarriageNotTheMeanOfWatchedStairs() throws {
        // 40 s walking looking ahead, then 40 s watching the steps at 20–60° down: the mean
        // walking gravity would be tipped about 20° forward; the carriage is the level walk.
        var l = HeadFrameLearner()
        Self.feed(&l, from: 0, seconds: 20, walking: false)
        Self.feed(&l, from: 20, seconds: 40, walking: true)
        for k in 0..<10 {
            Self.feed(&l, from: 60 + Double(k) * 4, seconds: 4, walking: true, downDeg: 20 + Double(k % 5) * 10)
        }
        let f = try XCTUnwrap(l.frame)
        XCTAssertLessThan(Self.degrees(f.up, Self.mount.rotate(Self.headUp)), 3)
        XCTAssertLessThan(Self.degrees(f.forward, Self.mount.rotate(Self.headForward)), 5)
    }

    func testAFrameWhoseSignBecameUnclearIsWithdrawn() throws {
        var l = HeadFrameLearner()
        Self.feed(&l, from: 0, seconds: 20, walking: false)
        Self.feed(&l, from: 20, seconds: 40, walking: true)
        XCTAssertNotNil(l.frame)
        // As long again looking 25° up (a sign cue now split evenly), then more walking.
        let up = 25 * Double.pi / 180
        let accel = (Self.headUp * cos(up) + Self.headForward * sin(up)) * 9.81
        for i in 0..<2000 {
            let s = 60 + Double(i) / 100
            l.add(
                t: Nanoseconds(s * 1e9) + 1_000_000_000, accel: Self.mount.rotate(accel),
                rate: Self.mount.rotate(ActivityTests.jitter(s, dps: 1)), activity: .still)
        }
        Self.feed(&l, from: 80, seconds: 6, walking: true)
        XCTAssertNil(l.frame, "no frame beats one that may be the wrong way round")
    }

    func testTimeGoingBackStartsOverInsteadOfStalling() throws {
        // Another recording replayed into the same learner starts earlier: the bin and the looks
        // start again (they stalled until the clock caught up: a whole recording was lost).
        var l = HeadFrameLearner()
        Self.feed(&l, from: 1000, seconds: 20, walking: false)
        Self.feed(&l, from: 1020, seconds: 10, walking: true)
        let before = l.walkingWindows
        Self.feed(&l, from: 0, seconds: 40, walking: true)
        XCTAssertGreaterThan(l.walkingWindows, before + 10)
        XCTAssertNotNil(l.frame)
    }

    /// The game with the same mount: the attitude is the mount's inverse (the head upright).
    static func play(_ game: inout TiltGame, seconds: Double, walking: Bool, from t0: Double) -> [GameEvent] {
        var events: [GameEvent] = []
        for i in 0..<Int(seconds * 100) {
            let s = t0 + Double(i) / 100
            let (a, w) = wear(s, walking: walking)
            let att = Attitude(
                t: Nanoseconds(s * 1e9) + 1_000_000_000, q: mount.conjugate, atRest: false, gyroBias: .zero)
            events += game.update(att, rate: mount.rotate(w), accel: mount.rotate(a))
        }
        return events
    }

    func testTheGameAdoptsTheLearnedFrameAndACalibrationWins() throws {
        var game = try TiltGame(configuration: .absoluteMode)
        game.learnsHeadFrame = true
        _ = Self.play(&game, seconds: 20, walking: false, from: 0)
        XCTAssertEqual(game.headFrame.source, .assumed)
        _ = Self.play(&game, seconds: 60, walking: true, from: 20)
        XCTAssertEqual(game.headFrame.source, .learned)
        XCTAssertLessThan(Self.degrees(game.headFrame.left, Self.mount.rotate(Self.headLeft)), 5)
        guard case .object(let o)? = game.snapshot["orientation"] else { return XCTFail("no orientation") }
        XCTAssertEqual(o["source"], .string("learned"))
        // An explicit frame (calibrate neutral, the configuration) wins over the learned one.
        let given = HeadFrame(up: Vector3(0, 1, 0), forward: Vector3(0, 0, -1), source: .calibrated)!
        game.setHeadFrame(given)
        XCTAssertEqual(game.headFrame, given)
        _ = Self.play(&game, seconds: 5, walking: true, from: 80)
        XCTAssertEqual(game.headFrame, given)
    }

    func testTheGameLearnsOnlyWhenAsked() throws {
        var game = try TiltGame(configuration: .absoluteMode)
        XCTAssertFalse(
            game.learnsHeadFrame, "off in the core: the daemon and `tiltd judge` set it from `[game] head_frame`")
        _ = Self.play(&game, seconds: 60, walking: true, from: 0)
        XCTAssertEqual(game.headFrame.source, .assumed)
    }
}
