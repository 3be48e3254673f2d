// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import TiltCore

/// Relative mode: the neutral pose is captured, and the tilt measured from it, so the IMU may be
/// mounted any way round.
final class GameRelativeTests: XCTestCase {
    static func relative(backAxis: Vector3 = Vector3(0, 0, 1)) -> TiltGame.Rules {
        var c = TiltGame.Rules()
        c.mode = .relative
        c.backAxis = backAxis
        return c
    }

    func testRelativeEqualsAbsoluteForTheStandardMountsWhenCapturedUpright() {
        var rng = SplitMix64(seed: 17)
        for mount in [Quaternion.identity, HeadTrace.flipped] {
            let upright = Quaternion(roll: .pi / 2, pitch: 0, yaw: 0) * mount
            let pose = TiltMeter.neutralPose(t: 0, q: upright, backAxis: Vector3(0, 0, 1))!
            for _ in 0..<500 {
                let u = { Double(rng.next() >> 11) / Double(1 << 53) }
                let nod = (u() * 160 - 80) * .pi / 180, lean = (u() * 120 - 60) * .pi / 180,
                    yaw = (u() * 360 - 180) * .pi / 180
                let q = Quaternion(roll: .pi / 2 - nod, pitch: lean, yaw: yaw) * mount
                XCTAssertEqual(TiltMeter.relativeTilt(q, neutral: pose), TiltMeter.absoluteTilt(q), accuracy: 1e-9)
                XCTAssertEqual(TiltMeter.absoluteTilt(q), 90 - nod * 180 / .pi, accuracy: 1e-9)
            }
        }
    }

    func testARotatedMountWorksInRelativeModeButNotInAbsoluteMode() throws {
        let (motion, _) = GameDecisionTests.mixedSession()
        // The board on the band at an odd angle: turned 70° about a skew axis.
        let mount = Quaternion(axis: Vector3(0.3, 1, 0.5), angle: 70 * .pi / 180)
        for rate in [60.0, 400] {
            var trace = HeadTrace(rateHz: rate, noiseDeg: 1, noiseSeed: 5, jitter: 0.2, mount: mount)
            trace.yawDriftDegPerS = 15
            let traced = trace.samples(motion)
            let attitudes = traced.map(\.attitude)
            let (game, events) = try GamePlay.run(traced, config: Self.relative(backAxis: trace.backAxisInSensor))
            XCTAssertEqual(
                GamePlay.kinds(events).filter { $0 != "neutral_captured" }, GameDecisionTests.mixedKinds, "\(rate) Hz")
            // Captured once the head has been still for neutral_hold_s, before anything else happens.
            XCTAssertEqual(GamePlay.kinds(events).prefix(2), ["round_started", "neutral_captured"])
            let stillEnough = attitudes.first { $0.t - attitudes[0].t >= 200_000_000 }!.t
            XCTAssertEqual(events[1].t, stillEnough)
            XCTAssertEqual(game.neutral?.t, stillEnough)

            let (_, absolute) = try GamePlay.run(traced)
            XCTAssertNotEqual(
                GamePlay.kinds(absolute), GameDecisionTests.mixedKinds, "absolute mode cannot read this mount")
        }
    }

    func testAnApproximateBackAxisIsEnough() throws {
        // Sensor z along the ear-to-ear line, sensor −x toward the back of the head, and the whole
        // board 15° off. The user only says "−x points back".
        let mount =
            Quaternion(axis: Vector3(0, 1, 0), angle: .pi / 2)
            * Quaternion(axis: Vector3(1, 1, 0), angle: 15 * .pi / 180)
        let trace = HeadTrace(rateHz: 100, noiseDeg: 1, mount: mount)
        XCTAssertEqual(trace.backAxisInSensor.x, -1, accuracy: 0.1)
        let (motion, _) = GameDecisionTests.mixedSession()
        let (_, events) = try GamePlay.run(trace.samples(motion), config: Self.relative(backAxis: Vector3(-1, 0, 0)))
        XCTAssertEqual(GamePlay.kinds(events).filter { $0 != "neutral_captured" }, GameDecisionTests.mixedKinds)
    }

    func testSideLeanDoesNotCountInRelativeMode() throws {
        var m = HeadMotion()
        m.hold(1)
        m.move(nod: 0, lean: 45, over: 0.4); m.hold(1); m.move(nod: 0, lean: -45, over: 0.8); m.hold(1)
        m.move(nod: 0, lean: 0, over: 0.4); m.hold(1)
        m.answer(-40)
        m.hold(1)
        let trace = HeadTrace(rateHz: 100, noiseDeg: 0.5, mount: Quaternion(axis: Vector3(1, 0, 1), angle: 2.0))
        let (_, events) = try GamePlay.run(trace.samples(m), config: Self.relative(backAxis: trace.backAxisInSensor))
        XCTAssertEqual(GamePlay.decisions(events), ["skip"])
    }

    func testRecapturingAfterTheBandSlipsKeepsTheDecisionsRight() throws {
        // Part A with the standard mount; then the band slips 40° (as if the head were tilted up
        // 40° at rest) and part B continues. The slip happens while a prompt is showing.
        var a = HeadMotion()
        a.hold(1); a.answer(45); a.hold(1.5)
        var b = HeadMotion()
        b.hold(1); b.answer(45); b.hold(1); b.answer(-45); b.hold(1)
        let partA = HeadTrace(rateHz: 100, noiseDeg: 0.5).samples(a)
        var traceB = HeadTrace(
            rateHz: 100, noiseDeg: 0.5, noiseSeed: 2, mount: Quaternion(axis: Vector3(1, 0, 0), angle: 40 * .pi / 180))
        traceB.startNs = partA.last!.attitude.t + traceB.periodNs
        let partB = traceB.samples(b)

        func play(recapture: Bool) throws -> [GameEvent] {
            var game = try TiltGame(configuration: Self.relative(), seed: 1)
            var events = try game.start(at: partA[0].attitude.t, deck: GamePlay.deck())
            for x in partA { events += game.update(x.attitude, rate: x.rate) }
            XCTAssertEqual(game.phase, .prompt)
            if recapture { events += game.captureNeutral(partB[0].attitude) }
            for x in partB { events += game.update(x.attitude, rate: x.rate) }
            return events
        }
        let fixed = try play(recapture: true)
        XCTAssertEqual(GamePlay.decisions(fixed), ["correct", "correct", "skip"])
        XCTAssertEqual(fixed.filter { $0.kind == .neutralCaptured }.count, 2)
        // Without the new capture the slipped neutral reads as a held up-tilt: a false skip.
        let stale = try play(recapture: false)
        XCTAssertEqual(GamePlay.decisions(stale).prefix(2), ["correct", "skip"])
    }

    func testACommandCaptureIsKeptAcrossRoundsWhenAskedTo() throws {
        var c = Self.relative()
        c.captureNeutralAtRoundStart = false
        var game = try TiltGame(configuration: c)
        let leaned = Attitude(t: 5, q: Quaternion(roll: .pi / 2 - 0.2, pitch: 0, yaw: 0), atRest: true, gyroBias: .zero)
        XCTAssertEqual(GamePlay.kinds(game.captureNeutral(leaned)), ["neutral_captured"])
        let started = try game.start(at: 10, deck: GamePlay.deck())
        XCTAssertEqual(GamePlay.kinds(started), ["round_started"])
        let e = game.update(Attitude(t: 20, q: leaned.q, atRest: true, gyroBias: .zero))
        XCTAssertEqual(GamePlay.kinds(e), [], "no capture at round start")
        XCTAssertEqual(game.neutral?.t, 5)
        XCTAssertEqual(game.lastTilt ?? 0, 90, accuracy: 1e-9)
        XCTAssertEqual(game.snapshot["neutral"]?["captured"], true)
    }

    func testACaptureWithTheBackAxisVerticalIsRejected() throws {
        // Standard mount, but the user named +y (which points up) as the back axis.
        var game = try TiltGame(configuration: Self.relative(backAxis: Vector3(0, 1, 0)))
        var m = HeadMotion()
        m.hold(1); m.answer(45); m.hold(1)
        let traced = HeadTrace(rateHz: 100).samples(m)
        let attitudes = traced.map(\.attitude)
        var events = try game.start(at: attitudes[0].t, deck: GamePlay.deck())
        for a in attitudes { events += game.update(a) }
        XCTAssertEqual(GamePlay.kinds(events), ["round_started", "neutral_rejected"])
        XCTAssertTrue(events[1].reason?.contains("back_axis") ?? false)
        XCTAssertNil(game.neutral)
        XCTAssertEqual(game.snapshot["neutral"]?["captured"], false)
        // A good capture by command gets the round going.
        var ok = try TiltGame(configuration: Self.relative())
        _ = try ok.start(at: attitudes[0].t, deck: GamePlay.deck())
        XCTAssertEqual(GamePlay.kinds(ok.captureNeutral(attitudes[0])), ["neutral_captured"])
        var after: [GameEvent] = []
        for a in attitudes { after += ok.update(a) }
        XCTAssertEqual(GamePlay.decisions(after), ["correct"])
    }
}
