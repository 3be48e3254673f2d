// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import XCTest

@testable import TiltCore

/// The learner's second cue (issue 30): outside walking the head tilts mostly about its
/// ear-to-ear axis (looking down and back up, bending, standing up), and up is made
/// perpendicular to that axis (ears level). Synthetic wear on `HeadFrameLearnerTests.mount`.
final class HeadFrameTiltTests: XCTestCase {
    typealias W = HeadFrameLearnerTests

    /// At a desk: the head pitches 15–45° down and back (4 s a cycle, up to 24 °/s), with a
    /// little roll (`rollDps` peak, 3 s a cycle).
    static func desk(_ s: Double, rollDps: Double = 5) -> (accel: Vector3, rate: Vector3) {
        let down = (30 + 15 * sin(2 * .pi * s / 4)) * .pi / 180
        let downRate = 15 * .pi / 180 * 2 * .pi / 4 * cos(2 * .pi * s / 4)
        let accel = (W.headUp * cos(down) - W.headForward * sin(down)) * 9.81
        let rate = W.headLeft * downRate + W.headForward * (rollDps * .pi / 180 * sin(2 * .pi * s / 3))
        return (accel, rate)
    }

    /// Walking as `HeadFrameLearnerTests.wear`, but with the carriage rolled `rollDeg` (toward
    /// the left ear) and the step's bob about an axis turned `bobSkewDeg` about up from the
    /// ear-to-ear axis.
    static func walk(_ s: Double, rollDeg: Double = 0, bobSkewDeg: Double = 0) -> (accel: Vector3, rate: Vector3) {
        let step = 2 * Double.pi * 1.8
        let bobAxis = Quaternion(axis: W.headUp, angle: bobSkewDeg * .pi / 180).rotate(W.headLeft)
        let accel =
            W.headUp * (9.81 + 1.5 * sin(step * s)) + W.headForward * (-0.8 * cos(step * s))
            + W.headLeft * (0.6 * sin(step / 2 * s))
        let rate =
            bobAxis * (0.25 * sin(step * s + 0.7)) + W.headForward * (0.35 * sin(step / 2 * s))
            + W.headUp * (0.3 * sin(step / 2 * s + 1))
        let roll = Quaternion(axis: W.headForward, angle: -rollDeg * .pi / 180)
        return (roll.rotate(accel), roll.rotate(rate))
    }

    static func feed(
        _ l: inout HeadFrameLearner, from t0: Double, seconds: Double,
        _ sample: (Double) -> (accel: Vector3, rate: Vector3), activity: Activity
    ) {
        for i in 0..<Int(seconds * 100) {
            let s = t0 + Double(i) / 100
            let (a, w) = sample(s)
            l.add(
                t: Nanoseconds(s * 1e9) + 1_000_000_000, accel: W.mount.rotate(a), rate: W.mount.rotate(w),
                activity: activity)
        }
    }

    func testACarriageRolledWhileWalkingIsLevelledByTheNodAxis() throws {
        // D1-U15 of the everyday set walked with its carriage rolled 19° from its standing pose.
        var l = HeadFrameLearner()
        Self.feed(&l, from: 0, seconds: 40, { Self.desk($0) }, activity: .moving)
        Self.feed(&l, from: 40, seconds: 60, { Self.walk($0, rollDeg: 15) }, activity: .walking)
        let f = try XCTUnwrap(l.frame)
        XCTAssertLessThan(W.degrees(f.up, W.mount.rotate(W.headUp)), 3, "ears level, not the rolled carriage")
        XCTAssertLessThan(W.degrees(f.left, W.mount.rotate(W.headLeft)), 3)
        XCTAssertLessThan(W.degrees(f.forward, W.mount.rotate(W.headForward)), 3)
    }

    /// Walking 2 steps/s whose every step has a swing (the head turning at 40 °/s, its gravity
    /// tipped `swingDownDeg` forward meanwhile) and a quiet half (turning at about 1 °/s, the
    /// head at its carriage, level).
    static func swingingWalk(_ s: Double, swingDownDeg: Double) -> (accel: Vector3, rate: Vector3) {
        let bob = W.headUp * (1.5 * sin(2 * .pi * 2 * s))
        if (s * 2).truncatingRemainder(dividingBy: 1) < 0.5 {
            let tip = Quaternion(axis: W.headLeft, angle: -swingDownDeg * .pi / 180)
            return (tip.rotate(W.headUp * 9.81 + bob), W.headLeft * (40 * .pi / 180))
        }
        return (W.headUp * 9.81 + bob, ActivityTests.jitter(s, dps: 1))
    }

    func testTheCarriageComesFromTheGaitsQuietInstants() throws {
        // The mean of the whole walk would be tipped about half the swing's 16°; the bins
        // turning under `quietDps` hold the level carriage.
        func learn(quietDps: Double) throws -> HeadFrame {
            var l = HeadFrameLearner()
            l.quietDps = quietDps
            Self.feed(&l, from: 0, seconds: 40, { Self.desk($0) }, activity: .moving)
            Self.feed(&l, from: 40, seconds: 60, { Self.swingingWalk($0, swingDownDeg: 16) }, activity: .walking)
            return try XCTUnwrap(l.frame)
        }
        let quiet = try learn(quietDps: HeadFrameLearner().quietDps)
        XCTAssertLessThan(W.degrees(quiet.up, W.mount.rotate(W.headUp)), 2)
        XCTAssertLessThan(W.degrees(quiet.forward, W.mount.rotate(W.headForward)), 3)
        let all = try learn(quietDps: .infinity)
        XCTAssertGreaterThan(W.degrees(all.up, W.mount.rotate(W.headUp)), 5, "every bin: tipped by the swings")
    }

    func testTheAxisComesFromTheTiltsWhenTheWalkingBobIsSkewed() throws {
        // D2-U24's bob turned about an axis 19.5° from its ear-to-ear axis.
        var l = HeadFrameLearner()
        Self.feed(&l, from: 0, seconds: 40, { Self.desk($0) }, activity: .moving)
        Self.feed(&l, from: 40, seconds: 60, { Self.walk($0, bobSkewDeg: 20) }, activity: .walking)
        let f = try XCTUnwrap(l.frame)
        XCTAssertLessThan(W.degrees(f.left, W.mount.rotate(W.headLeft)), 3)
        XCTAssertLessThan(W.degrees(f.forward, W.mount.rotate(W.headForward)), 3)
        // With the bob weighed in as much as the tilts, the axis is pulled toward the bob's.
        var both = HeadFrameLearner()
        both.walkWeight = 5
        Self.feed(&both, from: 0, seconds: 40, { Self.desk($0) }, activity: .moving)
        Self.feed(&both, from: 40, seconds: 60, { Self.walk($0, bobSkewDeg: 20) }, activity: .walking)
        XCTAssertGreaterThan(W.degrees(try XCTUnwrap(both.frame).left, W.mount.rotate(W.headLeft)), 5)
    }

    func testAStillHeadsSwayIsNoTilt() throws {
        // Under 10 °/s (a held head's sway, the sensor's noise) nothing counts as a tilt: with
        // the wearer only sitting still the walking bob decides the axis, and a skewed bob shows.
        var l = HeadFrameLearner()
        Self.feed(
            &l, from: 0, seconds: 40,
            { s in
                let (a, _) = Self.desk(0)
                return (a, ActivityTests.jitter(s, dps: 3))
            }, activity: .still)
        Self.feed(&l, from: 40, seconds: 60, { Self.walk($0, bobSkewDeg: 20) }, activity: .walking)
        let f = try XCTUnwrap(l.frame)
        // (The bob alone, step minus stride, ends some 10° off here; with the desk's tilts, < 3°.)
        XCTAssertGreaterThan(W.degrees(f.left, W.mount.rotate(W.headLeft)), 5)
    }

    func testJudgeReportsEachLearnedFrameWithTheWalkingSeenByThen() throws {
        // Raw samples through the daemon's front end and estimator (`tiltd judge`, the bench).
        var samples: [IMUSample] = []
        for i in 0..<10_000 {
            let s = Double(i) / 100
            let (a, w) = s < 40 ? Self.desk(s) : Self.walk(s)
            samples.append(
                IMUSample(t: Nanoseconds(s * 1e9) + 1_000_000_000, accel: W.mount.rotate(a), gyro: W.mount.rotate(w)))
        }
        var o = GameJudge.Options()
        o.learnsHeadFrame = true
        let s = try GameJudge.play(samples, options: o).summary
        let first = try XCTUnwrap(s.learnedFrames.first)
        XCTAssertEqual(first.walkingSeconds, 20, accuracy: 10, "8 windows of walking: 20 s or a little more")
        let f = try XCTUnwrap(s.learnedFrames.last?.frame)
        XCTAssertLessThan(W.degrees(f.forward, W.mount.rotate(W.headForward)), 5)
        // The game follows the learner's frame once it moved 3° from the one in use.
        XCTAssertLessThan(try XCTUnwrap(s.learner.frame).rotationDegrees(to: f), TiltGame.learnedFrameRefreshDeg)
        XCTAssertTrue(try GameJudge.play(samples).summary.learnedFrames.isEmpty, "learning off: nothing")
    }

    func testTheGameSaysWhenItAdoptsAndDropsALearnedFrame() throws {
        var game = try TiltGame(configuration: .absoluteMode)
        game.learnsHeadFrame = true
        var events: [GameEvent] = []
        func play(_ t0: Double, _ seconds: Double, _ sample: (Double) -> (accel: Vector3, rate: Vector3)) {
            for i in 0..<Int(seconds * 100) {
                let s = t0 + Double(i) / 100
                let (a, w) = sample(s)
                let att = Attitude(
                    t: Nanoseconds(s * 1e9) + 1_000_000_000, q: W.mount.conjugate, atRest: false, gyroBias: .zero)
                events += game.update(att, rate: W.mount.rotate(w), accel: W.mount.rotate(a))
            }
        }
        play(0, 40, { Self.desk($0) })
        play(40, 60, { Self.walk($0) })
        let adopted = try XCTUnwrap(events.first { $0.kind == .headFrame })
        XCTAssertEqual(adopted.headFrame?.source, .learned)
        guard case .object(let o)? = adopted.fields["orientation"] else { return XCTFail("no orientation") }
        XCTAssertEqual(o["source"], .string("learned"))
        XCTAssertEqual(game.headFrame.source, .learned)
        // Learning turned off (`[game] head_frame = "assumed"`): back to the convention, said.
        let off = game.setLearnsHeadFrame(false)
        XCTAssertEqual(off.last?.kind, .headFrame)
        XCTAssertEqual(off.last?.headFrame?.source, .assumed)
        XCTAssertEqual(game.headFrame.source, .assumed)
        XCTAssertEqual(game.setLearnsHeadFrame(false), [], "no change, nothing said")
    }

    func testTheFrameInUseFollowsTheLearnersWithoutWaitingForARefresh() throws {
        // The wearer walks looking 14° down for 24 s (the learner adopts that carriage), then
        // ahead: once the new carriage outnumbers the old, the learner's frame moves by 14°, and
        // the game must follow within one window, not at the next 30 s of walking (which left
        // one wearer of the everyday set playing on a frame 15°+ off while the learner had it right).
        var game = try TiltGame(configuration: .absoluteMode)
        game.learnsHeadFrame = true
        let lookingDown = Quaternion(axis: W.headLeft, angle: 14 * .pi / 180)
        var worst = 0.0
        var changes = 0
        for (t0, seconds, sample) in [
            (0.0, 40.0, { Self.desk($0) }),
            (
                40, 24,
                { (s: Double) in
                    let (a, w) = Self.walk(s); return (lookingDown.rotate(a), lookingDown.rotate(w))
                }
            ),
            (64, 80, { Self.walk($0) }),
        ] as [(Double, Double, (Double) -> (accel: Vector3, rate: Vector3))] {
            for i in 0..<Int(seconds * 100) {
                let s = t0 + Double(i) / 100
                let (a, w) = sample(s)
                let att = Attitude(
                    t: Nanoseconds(s * 1e9) + 1_000_000_000, q: W.mount.conjugate, atRest: false, gyroBias: .zero)
                changes +=
                    game.update(att, rate: W.mount.rotate(w), accel: W.mount.rotate(a)).filter {
                        $0.kind == .headFrame
                    }.count
                if let l = game.learner.frame { worst = max(worst, game.headFrame.rotationDegrees(to: l)) }
            }
        }
        let end = try XCTUnwrap(game.learner.frame)
        XCTAssertLessThan(W.degrees(end.up, W.mount.rotate(W.headUp)), 3, "the learner took the new carriage")
        XCTAssertLessThan(worst, TiltGame.learnedFrameRefreshDeg + 1e-9, "the frame in use lagged the learner's")
        XCTAssertLessThan(changes, 10, "a settled frame is not announced every window")
    }
}
