// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import TiltCore

/// Head-motion traces replayed through the game, asserting the exact decision sequence.
final class GameDecisionTests: XCTestCase {
    /// Two quick nods in a row: the second must not answer the next prompt.
    static func doubleNod(_ m: inout HeadMotion, _ nod: Double, gap: Double) {
        m.move(nod: nod, over: 0.15); m.hold(0.3); m.move(nod: 0, over: 0.1)
        m.hold(gap)
        m.move(nod: nod, over: 0.1); m.hold(0.3); m.move(nod: 0, over: 0.15)
    }

    /// A session mixing deliberate answers with everything that must not count, and the
    /// time the head finally came back upright after hovering at the threshold.
    /// `inBand`: after hovering, stand inside the hysteresis band (4° from its edge) for 1.5 s
    /// before coming upright; meant for noise up to 1° (4σ).
    static func mixedSession(inBand: Bool = true) -> (HeadMotion, hoverReleased: Double) {
        var m = HeadMotion()
        m.hold(1.0)  // neutral → prompt 1
        m.answer(45)  // correct
        m.hold(1.0)  // prompt 2
        m.answer(-45)  // skip
        m.hold(1.0)  // prompt 3
        m.jerk(50); m.hold(0.6)  // jerks: nothing
        m.jerk(-50); m.hold(0.6)
        m.jerk(60, ramp: 0.02, hold: 0.06); m.hold(1.0)
        doubleNod(&m, 45, gap: 0.1)  // one correct
        m.hold(1.0)  // prompt 4
        doubleNod(&m, -45, gap: 0.25)  // one skip
        m.hold(1.0)  // prompt 5
        m.move(nod: 15, over: 3); m.hold(2); m.move(nod: 0, over: 3); m.hold(0.5)  // slow drift: nothing
        m.move(nod: 32, over: 0.5); m.hold(3)  // hover 5° past the threshold: one correct
        if inBand { m.move(nod: 23, over: 0.3); m.hold(1.5) }  // back inside the hysteresis band: still no neutral
        let released = m.duration
        m.move(nod: 0, over: 0.3); m.hold(1.0)  // prompt 6
        m.answer(-60, hold: 0.8)  // skip
        m.hold(1.0)  // prompt 7
        return (m, released)
    }

    static let mixedKinds = [
        "round_started", "neutral", "prompt", "correct", "neutral", "prompt", "skip", "neutral", "prompt",
        "correct", "neutral", "prompt", "skip", "neutral", "prompt", "correct", "neutral", "prompt", "skip",
        "neutral", "prompt",
    ]

    func testMixedSessionGivesExactDecisionsForBothFacingsAndAllRates() throws {
        let (motion, released) = Self.mixedSession()
        var reference: [GameEvent]?
        for mount in [Quaternion.identity, HeadTrace.flipped] {
            for (rate, jitter) in [(1000.0, 0.0), (200, 0.2), (60, 0.3), (37, 0.45)] {
                var trace = HeadTrace(rateHz: rate, noiseDeg: 1.0, noiseSeed: 3, jitter: jitter, mount: mount)
                // Turning slowly (10 °/s) while playing: under still_dps, so the head counts as still.
                trace.yawDriftDegPerS = 10
                trace.nodDriftDegPerS = 0.1
                let traced = trace.samples(motion)
                let attitudes = traced.map(\.attitude)
                // The facing really differs: upright roll is +90° or −90°.
                XCTAssertEqual(attitudes[0].roll * 180 / .pi, mount == .identity ? 90 : -90, accuracy: 5)
                let (_, events) = try GamePlay.run(traced)
                let label = "mount \(mount == .identity ? "+90" : "-90") at \(rate) Hz"
                XCTAssertEqual(GamePlay.kinds(events), Self.mixedKinds, label)

                // The prompt after the hover appears only once the head left the hysteresis band.
                let prompts = events.filter { $0.kind == .prompt }
                XCTAssertGreaterThan(prompts[5].t, GamePlay.at(released), label)

                if let ref = reference {
                    XCTAssertEqual(prompts.map(\.prompt), ref.filter { $0.kind == .prompt }.map(\.prompt), label)
                    // Decisions happen at the same moments, give or take two sample periods.
                    let mine = events.filter { $0.kind == .correct || $0.kind == .skip }
                    let theirs = ref.filter { $0.kind == .correct || $0.kind == .skip }
                    for (a, b) in zip(mine, theirs) {
                        // Entry and confirmation are each seen up to one (jittered) period late.
                        XCTAssertEqual(Double(a.t - b.t) / 1e9, 0, accuracy: (2 + 2 * jitter) / rate + 0.002, label)
                    }
                } else {
                    reference = events
                }
            }
        }
    }

    func testNoiseLevelsUpToTwoDegreesDoNotChangeTheDecisions() throws {
        let (motion, _) = Self.mixedSession(inBand: false)
        for seed in UInt64(1)...8 {
            for noise in [0.0, 0.5, 1.0, 2.0] {
                let trace = HeadTrace(rateHz: 100, noiseDeg: noise, noiseSeed: seed)
                let (_, events) = try GamePlay.run(trace.samples(motion))
                XCTAssertEqual(GamePlay.kinds(events), Self.mixedKinds, "seed \(seed) noise \(noise)°")
            }
        }
    }

    func testSideLeanAndHeadingDoNotCount() throws {
        var m = HeadMotion()
        m.hold(1)
        m.move(nod: 0, lean: 40, over: 0.4); m.hold(1); m.move(nod: 0, lean: -40, over: 0.8); m.hold(1)
        m.move(nod: 0, lean: 0, over: 0.4); m.hold(1)
        m.answer(40)
        m.hold(1)
        var trace = HeadTrace(rateHz: 100, noiseDeg: 0.5)
        trace.yawDriftDegPerS = 15  // turning, slower than still_dps
        let (_, events) = try GamePlay.run(trace.samples(m))
        XCTAssertEqual(GamePlay.decisions(events), ["correct"])
    }

    func testAJerkMustBeHeldForTheHoldTimeToCount() throws {
        // Step trace at 100 Hz: the head is in the low zone for exactly n samples.
        for (samples, counts) in [(15, false), (16, true)] {
            var m = HeadMotion()
            m.hold(0.995)  // steps between samples: no ties between key times and sample times
            m.move(nod: 45, over: 0); m.hold(Double(samples) / 100)
            m.move(nod: 0, over: 0); m.hold(1)
            let (_, events) = try GamePlay.run(HeadTrace(rateHz: 100).samples(m))
            // 15 samples span 0.14 s (< hold 0.15 s); 16 samples span 0.15 s.
            XCTAssertEqual(GamePlay.decisions(events), counts ? ["correct"] : [], "\(samples) samples")
            if counts {
                let c = events.first { $0.kind == .correct }!
                XCTAssertEqual(c.t, GamePlay.at(1.15))
                XCTAssertEqual(c.decision?.decidedAt, GamePlay.at(1.0))
                XCTAssertEqual(c.decision?.decisionTime, 800_000_000)  // prompt at 0.2 s
            }
        }
    }

    func testTheHoldCountsOnlyPastTheThresholdAndHysteresisBlocksNeutralInsideTheBand() throws {
        let c = TiltGame.Rules.absoluteMode
        // Enter at 60° (nod 30), dip to 68° (nod 22, inside the 63…73 hysteresis band) and back
        // to 60°, 0.1 s each: the zone is kept, but the hold counts only past 63° itself, so
        // neither 0.1 s stay answers. Held at 60° for 0.2 s more: a decision 0.15 s after the
        // head went back past the threshold.
        var m = HeadMotion()
        m.hold(0.995)
        m.move(nod: 30, over: 0); m.hold(0.1)
        m.move(nod: 22, over: 0); m.hold(0.1)
        m.move(nod: 30, over: 0); m.hold(0.1)
        m.move(nod: 22, over: 0); m.hold(0.1)
        m.move(nod: 30, over: 0); m.hold(0.2)
        // Then stand at 70° (nod 20) for 2 s: inside the band, so never neutral, no prompt.
        m.move(nod: 20, over: 0); m.hold(2)
        // 74° (nod 16) is past 63 + 10: neutral once still, prompt after the neutral hold.
        m.move(nod: 16, over: 0); m.hold(1)
        let (_, events) = try GamePlay.run(HeadTrace(rateHz: 100).samples(m), config: c)
        XCTAssertEqual(GamePlay.kinds(events), ["round_started", "neutral", "prompt", "correct", "neutral", "prompt"])
        XCTAssertEqual(events[3].t, GamePlay.at(1.55))
        XCTAssertEqual(events[3].decision?.decidedAt, GamePlay.at(1.40))
        XCTAssertEqual(events[4].t, GamePlay.at(3.81))
        XCTAssertEqual(events[5].t, GamePlay.at(3.81))
    }

    func testHoveringAtTheThresholdWithNoiseAnswersOnceWithHysteresisAndChattersWithout() throws {
        var m = HeadMotion()
        m.hold(1)
        m.move(nod: 31, over: 0.5); m.hold(20)  // 4° past 63°: noise (σ 1.5°) makes it cross both ways now and then
        m.move(nod: 0, over: 0.5); m.hold(1)
        let trace = HeadTrace(rateHz: 200, noiseDeg: 1.5, noiseSeed: 11)
        let (_, events) = try GamePlay.run(trace.samples(m))
        XCTAssertEqual(GamePlay.decisions(events), ["correct"])

        // The answer came from the move past the threshold, not from the noise while hovering.
        let answer = events.first { $0.kind == .correct }!
        XCTAssertLessThan(answer.decision!.decidedAt, GamePlay.at(1.6))
    }

    func testDebounceDelaysTheNextPromptExactly() throws {
        // Decision at 1.15 s; back to neutral at 1.20 s (inside the 0.5 s debounce): the neutral
        // hold counts from the debounce end, so the prompt comes at 1.65 + 0.2 = 1.85 s.
        // Back at 1.90 s instead (after the debounce): the step back is motion, so the head is
        // still from the next sample, 1.91 s, and the prompt comes at 2.11 s.
        for (back, prompt) in [(0.2, 1.85), (0.9, 2.11)] {
            var m = HeadMotion()
            m.hold(0.995)
            m.move(nod: 45, over: 0); m.hold(back)
            m.move(nod: 0, over: 0); m.hold(1.5)
            let (_, events) = try GamePlay.run(HeadTrace(rateHz: 100).samples(m))
            XCTAssertEqual(
                GamePlay.kinds(events), ["round_started", "neutral", "prompt", "correct", "neutral", "prompt"])
            XCTAssertEqual(events[3].t, GamePlay.at(1.15))
            XCTAssertEqual(events[5].t, GamePlay.at(prompt), "back at \(back)")
        }
    }

    func testNothingCountsDuringTheDebounceEvenAHeldOppositeTilt() throws {
        // Straight from a correct tilt into a held up tilt: the up tilt starts 0.1 s after the
        // decision, lasts 1 s, yet counts for nothing: the head must pass through neutral first.
        var m = HeadMotion()
        m.hold(0.995)
        m.move(nod: 45, over: 0); m.hold(0.25)
        m.move(nod: -45, over: 0); m.hold(1)
        m.move(nod: 0, over: 0); m.hold(1)
        let (_, events) = try GamePlay.run(HeadTrace(rateHz: 100).samples(m))
        XCTAssertEqual(GamePlay.kinds(events), ["round_started", "neutral", "prompt", "correct", "neutral", "prompt"])
        // Still from the sample after the step back (2.26 s), prompt 0.2 s later.
        XCTAssertEqual(events.last!.t, GamePlay.at(2.46))
    }

    func testSwapSidesExchangesCorrectAndSkip() throws {
        var m = HeadMotion()
        m.hold(1); m.answer(45); m.hold(1); m.answer(-45); m.hold(1)
        var c = TiltGame.Rules.absoluteMode
        c.swapSides = true
        let (_, events) = try GamePlay.run(HeadTrace(rateHz: 100).samples(m), config: c)
        XCTAssertEqual(GamePlay.decisions(events), ["skip", "correct"])
    }

    func testCustomThresholdsAreHonoured() throws {
        // A 20° nod is ignored by the defaults but answers with thresholds at 80°/100°.
        var m = HeadMotion()
        m.hold(1); m.answer(20); m.hold(1); m.answer(-20); m.hold(1)
        let trace = HeadTrace(rateHz: 100).attitudes(m)
        XCTAssertEqual(GamePlay.decisions(try GamePlay.run(trace).1), [])
        var c = TiltGame.Rules.absoluteMode
        c.lowThresholdDeg = 80
        c.highThresholdDeg = 100
        c.hysteresisDeg = 4
        XCTAssertEqual(GamePlay.decisions(try GamePlay.run(trace, config: c).1), ["correct", "skip"])
    }

    func testOutOfOrderAndInvalidAttitudesAreIgnored() throws {
        var m = HeadMotion()
        m.hold(1); m.move(nod: 45, over: 0); m.hold(0.5); m.move(nod: 0, over: 0); m.hold(1)
        var attitudes = HeadTrace(rateHz: 100).attitudes(m)
        let (_, clean) = try GamePlay.run(attitudes)
        // Stale copies of early (neutral) samples inside the tilt, and a NaN attitude.
        let stale = Array(attitudes[10...20])
        attitudes.insert(contentsOf: stale, at: 110)
        var nan = attitudes[115]
        nan.q = Quaternion(w: .nan, x: 0, y: 0, z: 0)
        attitudes.insert(nan, at: 116)
        let (_, messy) = try GamePlay.run(attitudes)
        XCTAssertEqual(messy, clean)
    }
}
