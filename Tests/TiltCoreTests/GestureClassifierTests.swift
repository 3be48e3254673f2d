// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform
import XCTest

@testable import TiltCore

/// The trained classifier's parts: the rate history's grid, the stride features, the trees'
/// walk. What it scores on real heads is bench/gestures' (docs/dev/game-everyday.md); the real
/// head-gestures excerpt in `HeadGestureRecordingTests` plays through it.
final class GestureClassifierTests: XCTestCase {
    func testTheBuiltInModelIsWhole() {
        let m = GestureClassifier.trained
        XCTAssertTrue(m.isValid())
        XCTAssertEqual(m.roots.count, 60)
        XCTAssertGreaterThan(m.accept, 0.5)
        XCTAssertLessThan(m.accept, 1)
        // Every input the trees test exists.
        XCTAssertLessThan(m.feature.max() ?? 0, GestureFeatures.inputNames.count)
    }

    func testABrokenModelIsRefused() {
        var m = GestureClassifier.trained
        m.left[m.roots[0]] = m.roots[0]  // a loop
        XCTAssertFalse(m.isValid())
        var n = GestureClassifier.trained
        n.threshold.removeLast()
        XCTAssertFalse(n.isValid())
    }

    func testTheTreesWalkToTheirLeaves() {
        // One stump: input 0 ≤ 0.5 → −2, else +2; base 0, rate 1.
        let m = GestureClassifier(
            base: 0, rate: 1, roots: [0], feature: [0, -1, -1], threshold: [0.5, 0, 0], left: [1, -1, -1],
            right: [2, -1, -1], value: [0, -2, 2], accept: 0.9)
        XCTAssertTrue(m.isValid(inputs: 1))
        XCTAssertEqual(m.probability([0]), 1 / (1 + exp(2)), accuracy: 1e-12)
        XCTAssertEqual(m.probability([1]), 1 / (1 + exp(-2)), accuracy: 1e-12)
    }

    func testTheHistoryIsOnA10msGridWhateverTheRate() {
        for rate in [30.0, 60, 100, 1000] {
            var h = RateHistory()
            for k in 0..<Int(5 * rate) {
                let t = Nanoseconds((Double(k) / rate * 1e9).rounded())
                h.add(t: t, h1: Double(k) / rate, h2: 0, up: 0, accel: nil)
            }
            let g = h.grid(from: 1_000_000_000, to: 3_000_000_000)
            XCTAssertEqual(g.count, 201, "\(rate) Hz")
            XCTAssertEqual(g[1].t - g[0].t, 10_000_000)
            // A ramp is kept (interpolated, or each bin's mean at 1000 Hz: within one bin).
            XCTAssertEqual(g[100].h1, 2.0, accuracy: 0.006, "\(rate) Hz")
        }
    }

    func testAGaitThatRepeatsMatchesItsStrideAndAGestureDoesNot() {
        // A 2 Hz bob: the period found is 0.5 s (or a multiple), the candidate matches its stride.
        let bob = (0..<800).map { sin(2 * .pi * 2 * Double($0) * 0.01) * 30 }
        let period = RateHistory.period(Array(bob[200..<500]))
        XCTAssertNotNil(period)
        XCTAssertEqual(Double(period!).truncatingRemainder(dividingBy: 50), 0, accuracy: 1)
        XCTAssertLessThan(RateHistory.strideMatch(bob, from: 600, period: period).value, 0.05)
        // The same bob with a nod on it over the last 1.2 s: nothing like a stride before.
        var nodded = bob
        for k in 680..<800 { nodded[k] += 100 * sin(2 * .pi * Double(k - 680) * 0.01 / 0.6) }
        XCTAssertGreaterThan(RateHistory.strideMatch(nodded, from: 680, period: period).value, 0.4)
        // A still head has no stride: nothing to match (1).
        XCTAssertNil(RateHistory.period([Double](repeating: 0, count: 300)))
        XCTAssertEqual(RateHistory.strideMatch(nodded, from: 680, period: nil).value, 1)
    }

    func testFeaturesNeedHalfASecondOfHistory() {
        var h = RateHistory()
        for k in 0..<30 { h.add(t: Nanoseconds(k) * 10_000_000, h1: 0.01, h2: 0, up: 0, accel: 9.8) }
        let g = HeadGesture(
            kind: .nod, start: 200_000_000, end: 290_000_000, amplitudeDeg: 5, cycle: 2, peakDps: 50,
            runStart: 200_000_000, runSwings: 4)
        XCTAssertNil(h.features(of: g), "0.2 s of history before it")
        for k in 30..<200 { h.add(t: Nanoseconds(k) * 10_000_000, h1: 0.01, h2: 0, up: 0, accel: 9.8) }
        let later = HeadGesture(
            kind: .nod, start: 1_500_000_000, end: 1_900_000_000, amplitudeDeg: 5, cycle: 2, peakDps: 50,
            runStart: 1_500_000_000, runSwings: 4)
        let f = h.features(of: later)
        XCTAssertNotNil(f)
        XCTAssertEqual(f?.values.count, GestureFeatures.names.count)
        XCTAssertEqual(f?.inputs.count, GestureFeatures.inputNames.count)
        XCTAssertTrue(f?.inputs.allSatisfy(\.isFinite) ?? false)
    }
    /// A standing round in the nod vocabulary: a nod of `cycles` cycles (0.4 s each, 143 °/s)
    /// at 4 s, judged by a classifier that scores every candidate `score`.
    static func nodRound(
        cycles: Int, score: Double, runAccept: Double, learned: HeadFrame? = nil
    ) throws -> [GameEvent] {
        var game = try TiltGame(configuration: .absoluteMode)
        if let learned {
            game.learnsHeadFrame = true
            _ = game.restoreLearnedFrame(learned)
        }
        // No trees: every candidate's log-odds is the base.
        game.limits.classifier = GestureClassifier(
            base: log(score / (1 - score)), rate: 1, roots: [], feature: [], threshold: [], left: [], right: [],
            value: [], accept: 0.93)
        game.limits.classifierRunAccept = runAccept
        let q = Quaternion(roll: .pi / 2, pitch: 0, yaw: 0)
        var events = try game.start(at: 1_000_000_000, gestures: .nod, deck: GamePlay.deck())
        let left = HeadFrame.assumed.left
        for i in 0..<800 {
            let s = Double(i) / 100
            var pitch = 0.5 * .pi / 180 * sin(2 * .pi * 0.7 * s)
            if s >= 4, s < 4 + 0.4 * Double(cycles) { pitch = 143 * .pi / 180 * sin(2 * .pi * (s - 4) / 0.4) }
            let a = Attitude(t: 1_000_000_000 + Nanoseconds(i) * 10_000_000, q: q, atRest: false, gyroBias: .zero)
            events += game.update(a, rate: left * pitch, accel: Vector3(0, 9.81, 0))
        }
        return events
    }

    func testTwoCyclesOfOneNodBothLikelyAnswerWhereNeitherAloneWould() throws {
        // Each candidate scores 0.9, under the classifier's 0.93.
        XCTAssertEqual(GamePlay.decisions(try Self.nodRound(cycles: 3, score: 0.9, runAccept: 1)), [])
        XCTAssertEqual(GamePlay.decisions(try Self.nodRound(cycles: 3, score: 0.9, runAccept: 0.85)), ["correct"])
        // A nod of two cycles is one candidate: nothing to add up.
        XCTAssertEqual(GamePlay.decisions(try Self.nodRound(cycles: 2, score: 0.9, runAccept: 0.85)), [])
        // Either alone at 0.95 answers.
        XCTAssertEqual(GamePlay.decisions(try Self.nodRound(cycles: 2, score: 0.95, runAccept: 1)), ["correct"])
    }

    func testALearnedFrameDoesNotSteerTheCandidates() throws {
        // Kept from an earlier run and wrong by 90° about up: it takes the ear-to-ear axis for
        // front-to-back. A learned frame can be off (bench/gestures: 9 of 16 within 15°), so the
        // classifier's candidates are read about up and the horizontal until a calibration
        // gives the frame; this nod would otherwise be read as a sideways roll.
        let a = HeadFrame.assumed
        let wrong = HeadFrame(up: a.up, forward: a.left, source: .learned)!
        XCTAssertEqual(
            GamePlay.decisions(try Self.nodRound(cycles: 2, score: 0.95, runAccept: 1, learned: wrong)), ["correct"])
    }
}
