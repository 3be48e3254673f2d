// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import XCTest

@testable import TiltCore

/// What tells an answer from everyday head motion (`AnswerLimits`, issue 30): each rule drops
/// the everyday motion it is for and keeps the deliberate answer next to it.
final class EverydayAnswerTests: XCTestCase {
    func testATiltThatStandingUpBeginsWithIsDroppedWhenTheRiseFollows() throws {
        // The trunk leans (the head goes down 45° like a tilt, held 0.5 s), then the body rises
        // 0.5 m over 0.8 s while the head comes back up: the rise is seen after the tilt's hold.
        var m = HeadMotion()
        m.hold(1); m.move(nod: 45, over: 0.2); m.hold(0.5); m.move(nod: 0, over: 0.8); m.hold(2)
        func rise(_ s: Double) -> Double {
            let f = min(max((s - 1.7) / 0.8, 0), 1)
            return -0.5 * (1 - cos(.pi * f)) / 2
        }
        XCTAssertEqual(GamePlay.decisions(try WholeBodyTests.play(m)), ["correct"], "the head alone answers")
        XCTAssertEqual(GamePlay.decisions(try WholeBodyTests.play(m, drop: rise)), [])
    }

    func testATiltAnswerIsConfirmedOneSecondAfterItBeganAndNeedNotBeHeld() throws {
        // A quick deliberate tilt (held 0.2 s, back upright at once) still answers; with the
        // accelerometer in play the answer comes `bodyWait` after it began.
        var m = HeadMotion()
        m.hold(1); m.answer(40, hold: 0.2, ramp: 0.15); m.hold(2)
        let events = try WholeBodyTests.play(m)
        XCTAssertEqual(GamePlay.decisions(events), ["correct"])
        let answer = events.first { $0.kind == .correct }!
        XCTAssertEqual(
            Double(answer.t - answer.decision!.decidedAt) * 1e-9, AnswerLimits().bodyWaitSeconds, accuracy: 0.011)
    }

    func testDeliberateTiltsWhileWalkingStillAnswer() throws {
        // Steps bob the head 3 cm at 1.8 Hz (walking by the gait test); tilts about the neck.
        var m = HeadMotion()
        m.hold(5); m.answer(40); m.hold(1.5); m.answer(-40); m.hold(1.5)
        let bob: (Double) -> Double = { 0.03 * sin(2 * .pi * 1.8 * $0) }
        // (A head's sway, 1 °/s: a gyroscope reading exactly 0 for 2 s is a device put down.)
        XCTAssertEqual(GamePlay.decisions(try WholeBodyTests.play(m, drop: bob, swayDps: 1)), ["correct", "skip"])
    }

    func testADriftAcrossTheThresholdFromARestNearItDoesNotAnswer() throws {
        // The head settles 20° down (reading), then sinks 12° more, past the threshold (27°):
        // no answer. From there a deliberate 25° tilt answers.
        var m = HeadMotion()
        m.hold(1); m.move(nod: 20, over: 0.5); m.hold(2); m.move(nod: 32, over: 0.4); m.hold(1.5)
        XCTAssertEqual(GamePlay.decisions(try GamePlay.run(HeadTrace(rateHz: 100).samples(m)).1), [])
        m.move(nod: 20, over: 0.4); m.hold(2); m.move(nod: 45, over: 0.3); m.hold(1)
        XCTAssertEqual(GamePlay.decisions(try GamePlay.run(HeadTrace(rateHz: 100).samples(m)).1), ["correct"])
    }

    /// A nod vocabulary round, the head still but for one nod (`pitchDps` peak, 0.4 s) or shake
    /// (`yawDps`, `swings` half-swings of 0.2 s) at 2 s (5 s while walking: the gait is seen
    /// after 4 s of steps).
    static func gestureRound(
        pitchDps: Double = 0, yawDps: Double = 0, swings: Int = 3, nodCycles: Int = 2, walking: Bool = false,
        limits: AnswerLimits = AnswerLimits()
    ) throws -> [GameEvent] {
        var game = try TiltGame(configuration: .absoluteMode)
        game.limits = limits
        let q = Quaternion(roll: .pi / 2, pitch: 0, yaw: 0)
        var events = try game.start(at: 1_000_000_000, gestures: .nod, deck: GamePlay.deck())
        let f = HeadFrame.assumed
        let at = walking ? 5.0 : 2.0
        for i in 0..<900 {
            let s = Double(i) / 100
            var w = ActivityTests.jitter(s, dps: 1)  // a worn head's sway
            if s >= at, s < at + 0.4 * Double(nodCycles) {
                w = f.left * (pitchDps * .pi / 180 * sin(2 * .pi * (s - at) / 0.4))
            }
            if s >= at, s < at + 0.2 * Double(swings) {
                w = w + f.up * (yawDps * .pi / 180 * sin(2 * .pi * (s - at) / 0.4))
            }
            let a = Attitude(t: 1_000_000_000 + Nanoseconds(i) * 10_000_000, q: q, atRest: false, gyroBias: .zero)
            let g = walking ? 9.81 + 1.5 * sin(2 * .pi * 1.8 * s) : 9.81
            events += game.update(a, rate: w, accel: Vector3(0, g, 0))
        }
        return events
    }

    func testTheHandSetRulesTakeAGlanceSlowerThanAnAnswerForOne() throws {
        // The hand-set rules (no classifier): 50 °/s down-ups (6°) were refused as glances at a
        // desk, and with them every gentle player's nod; a nod of two at 90 °/s answered.
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(pitchDps: 50, limits: .handSet)), [])
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(pitchDps: 90, limits: .handSet)), ["correct"])
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(yawDps: 50, swings: 5, limits: .handSet)), [])
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(yawDps: 120, swings: 5, limits: .handSet)), ["skip"])
    }

    func testAGentlePlayersNodAndShakeAnswer() throws {
        // A real player nods 10–20° at 50–100 °/s (issue 36's gentle player): the classifier
        // answers two cycles at 50 °/s and a five-swing shake at 50 °/s on a held head, where the
        // everyday set's desk work gave it no false decision (docs/game-everyday.md).
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(pitchDps: 50)), ["correct"])
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(pitchDps: 90)), ["correct"])
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(yawDps: 50, swings: 5)), ["skip"])
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(yawDps: 120, swings: 5)), ["skip"])
        // Slower than any answer (20 °/s, 2.5°): nothing.
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(pitchDps: 20)), [])
    }

    func testASingleDownUpIsAGlanceNotANodNorThreeSwingsAShake() throws {
        // A glance down at a desk and back up is one down-up at any speed; a nod answers from
        // its second cycle (`AnswerLimits.nodCycles`): on the everyday set single down-ups were
        // most of the false nods (docs/game-everyday.md).
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(pitchDps: 120, nodCycles: 1)), [])
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(pitchDps: 120, nodCycles: 2)), ["correct"])
        // Likewise a left-right-left is a look both ways; a shake answers from its fourth swing.
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(yawDps: 150, swings: 3)), [])
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(yawDps: 150, swings: 5)), ["skip"])
    }

    func testWhileWalkingAShakeAnswersFromItsSecondCycle() throws {
        // Left-right-left while walking: a walker looking both ways, no answer; two cycles do.
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(yawDps: 120, walking: true)), [])
        XCTAssertEqual(GamePlay.decisions(try Self.gestureRound(yawDps: 120, swings: 5, walking: true)), ["skip"])
    }
}
