// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import XCTest

@testable import TiltCore

/// The nod vocabulary for a runner: the next prompt without a still head
/// (`AnswerLimits.gaitSettleSeconds`), and the stride's sway about the vertical not taken for a
/// shake (`AnswerLimits.gaitShakeSwingSeconds`), a shake that stands out of it twice
/// (`AnswerLimits.gaitShakePeakRatio`), and a gait kept for a moment when the steps' rhythm breaks
/// (`ActivityTracker.onFoot`). These are the hand-set rules' checks (`AnswerLimits.classifier`
/// nil, `AnswerLimits.handSet`): the synthetic run here is a pure sinusoid, which the trained
/// classifier — judged on real walks and runs (bench/gestures) — was never shown.
final class GaitPromptTests: XCTestCase {
    /// A nod vocabulary round at a run (2.8 steps/s landing at ±6 m/s², the head bobbing at 35 °/s
    /// about the ear-to-ear axis: never under `still_dps` for the 0.2 s a prompt waits for), with
    /// `nods` (start s, cycles of 0.4 s at 143 °/s) and `shakes` (start s, half-swings, seconds
    /// per half-swing, at `shakeDps` about the vertical), the stride swaying the head about the
    /// vertical at `swayDps` (peak).
    static func runningRound(
        nods: [(at: Double, cycles: Int)] = [], shakes: [(at: Double, swings: Int, halfSwing: Double)] = [],
        seconds: Double, swayDps: Double = 0, shakeDps: Double = 120, limits: AnswerLimits = .handSet
    ) throws -> (events: [GameEvent], game: TiltGame, decidedAt: [Double]) {
        var game = try TiltGame(configuration: .absoluteMode)
        game.limits = limits
        let q = Quaternion(roll: .pi / 2, pitch: 0, yaw: 0)
        // The first prompt comes from a still head (before the run starts at 3 s).
        var events = try game.start(at: 1_000_000_000, gestures: .nod, deck: GamePlay.deck())
        var decidedAt: [Double] = []
        let left = HeadFrame.assumed.left
        let up = HeadFrame.assumed.up
        for i in 0..<Int(seconds * 100) {
            let s = Double(i) / 100
            let run = s >= 3
            var pitch = (run ? 35.0 : 0.5) * .pi / 180 * sin(2 * .pi * 2.8 * s)
            // The stride's sway about the vertical (1.4 strides/s).
            var yaw = (run ? swayDps : 0) * .pi / 180 * sin(2 * .pi * 1.4 * s)
            for n in nods where s >= n.at && s < n.at + 0.4 * Double(n.cycles) {
                pitch = 143 * .pi / 180 * sin(2 * .pi * (s - n.at) / 0.4)
            }
            for k in shakes where s >= k.at && s < k.at + k.halfSwing * Double(k.swings) {
                yaw = shakeDps * .pi / 180 * sin(.pi * (s - k.at) / k.halfSwing)
            }
            let a = Attitude(t: 1_000_000_000 + Nanoseconds(i) * 10_000_000, q: q, atRest: false, gyroBias: .zero)
            let new = game.update(
                a, rate: left * pitch + up * yaw,
                accel: Vector3(0, 9.81 + (run ? 6 : 0) * sin(2 * .pi * 2.8 * s), 0))
            if new.contains(where: { $0.kind == .correct || $0.kind == .skip }) { decidedAt.append(s) }
            events += new
        }
        return (events, game, decidedAt)
    }

    func testWhileRunningTheNextPromptComesThoughTheHeadIsNeverStill() throws {
        let played = try Self.runningRound(nods: [(8, 2)], seconds: 12)
        XCTAssertEqual(played.game.activity, .running)
        XCTAssertEqual(GamePlay.decisions(played.events), ["correct"], "\(GamePlay.kinds(played.events))")
        // The first prompt, then the next one once no nod cycle has been read for 1 s.
        let prompts = played.events.filter { $0.kind == .prompt }
        XCTAssertEqual(prompts.count, 2, "\(GamePlay.kinds(played.events))")
        // Waiting for a still head instead (the rule off): no second prompt on a run.
        var waiting = AnswerLimits.handSet
        waiting.gaitSettleSeconds = 0
        let before = try Self.runningRound(nods: [(8, 2)], seconds: 12, limits: waiting)
        XCTAssertEqual(GamePlay.decisions(before.events), ["correct"])
        XCTAssertEqual(before.events.filter { $0.kind == .prompt }.count, 1, "\(GamePlay.kinds(before.events))")
    }

    func testTheNextPromptWaitsWhileTheRunnerStillNods() throws {
        // Nodding on after the answer (three more cycles, 1.2 s): no prompt until 1 s after the last.
        let played = try Self.runningRound(nods: [(8, 2), (8.8, 3)], seconds: 12)
        XCTAssertEqual(GamePlay.decisions(played.events), ["correct"], "\(GamePlay.kinds(played.events))")
        let second = try XCTUnwrap(played.events.filter { $0.kind == .prompt }.dropFirst().first)
        let secondAt = Double(second.t - 1_000_000_000) * 1e-9
        XCTAssertGreaterThanOrEqual(secondAt, 8.8 + 1.2 + 1.0 - 0.05)
    }

    func testARunnersSwayIsNotAShakeButAShakeIs() throws {
        // Half-swings of 0.35 s about the vertical (a stride's sway, four of them, standing out
        // of the run): no answer; a shake's half-swings of 0.15 s: skip.
        let sway = try Self.runningRound(shakes: [(8, 4, 0.35)], seconds: 11)
        XCTAssertEqual(sway.game.activity, .running)
        XCTAssertEqual(GamePlay.decisions(sway.events), [], "\(GamePlay.kinds(sway.events))")
        let shake = try Self.runningRound(shakes: [(8, 5, 0.15)], seconds: 11)
        XCTAssertEqual(GamePlay.decisions(shake.events), ["skip"], "\(GamePlay.kinds(shake.events))")
        // Without the limit the sway answered.
        var open = AnswerLimits.handSet
        open.gaitShakeSwingSeconds = 0
        let before = try Self.runningRound(shakes: [(8, 4, 0.35)], seconds: 11, limits: open)
        XCTAssertEqual(GamePlay.decisions(before.events), ["skip"], "\(GamePlay.kinds(before.events))")
    }

    func testOnFootAShakeAnswersAtTwiceTheBackgroundAboutTheVertical() throws {
        // The stride sways the head at 38 °/s peak about the vertical (24 °/s RMS 5 s into the
        // run, under the detector's 40 °/s: no swings of its own): a shake of 65 °/s is over
        // 2 × that and under 3 ×.
        let played = try Self.runningRound(shakes: [(8, 5, 0.15)], seconds: 11, swayDps: 38, shakeDps: 65)
        XCTAssertEqual(played.game.activity, .running)
        XCTAssertEqual(GamePlay.decisions(played.events), ["skip"], "\(GamePlay.kinds(played.events))")
        var three = AnswerLimits.handSet
        three.gaitShakePeakRatio = 3
        let before = try Self.runningRound(
            shakes: [(8, 5, 0.15)], seconds: 11, swayDps: 38, shakeDps: 65, limits: three)
        XCTAssertEqual(GamePlay.decisions(before.events), [], "\(GamePlay.kinds(before.events))")
    }

    func testTheGaitIsKeptForAMomentAfterTheStepsRhythmBreaks() {
        var tracker = ActivityTracker()
        ActivityTests.feed(
            &tracker, seconds: 6, rate: { Vector3(0.3 * sin(2 * .pi * 1.8 * $0), 0, 0) },
            accel: { Vector3(0, 0, 9.81 + 1.5 * sin(2 * .pi * 1.8 * $0)) })
        XCTAssertEqual(tracker.activity, .walking)
        // Stopped (a crossing): the rhythm is gone from the 4 s window within 3.6 s; on foot for
        // 4 s after the steps were last seen, then not.
        ActivityTests.feed(
            &tracker, from: 6, seconds: 3.6, rate: { ActivityTests.jitter($0, dps: 1) },
            accel: { _ in Vector3(0, 0, 9.81) })
        let t9: Nanoseconds = 1_000_000_000 + 9_600_000_000
        XCTAssertNotEqual(tracker.activity, .walking)
        XCTAssertTrue(tracker.onFoot(at: t9))
        ActivityTests.feed(
            &tracker, from: 9.6, seconds: 4.5, rate: { ActivityTests.jitter($0, dps: 1) },
            accel: { _ in Vector3(0, 0, 9.81) })
        XCTAssertNotEqual(tracker.activity, .walking)
        XCTAssertFalse(tracker.onFoot(at: t9 + 4_500_000_000))
    }
}

extension AnswerLimits {
    /// The hand-set rules alone, without the trained classifier (the bench's "rules" rows).
    static var handSet: AnswerLimits {
        var l = AnswerLimits()
        l.classifier = nil
        return l
    }
}
