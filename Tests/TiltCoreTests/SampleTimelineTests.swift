// SPDX-License-Identifier: Apache-2.0
import TiltCore
import XCTest

/// `SampleTimeline`: timestamp jumps become one re-anchoring each; steady streams, real pauses
/// and small jitter pass through.
final class SampleTimelineTests: XCTestCase {
    let period: Int64 = 16_666_667  // 60 Hz
    let realtime: Int64 = 1_764_000_000_000_000_000  // a wall-clock timestamp (2025)

    /// Feeds `count` samples at the period from `t0`, arriving in batches of 3 (like a 10 ms buffer).
    func feed(_ tl: inout SampleTimeline, from t0: Int64, arrival a0: Int64, count: Int) -> [SampleTimeline.Placement] {
        (0..<count).map { i in
            tl.place(t0 + Int64(i) * period, arrival: a0 + Int64(i / 3 * 3) * period)
        }
    }

    func testSteadyStreamPassesThroughUnchanged() {
        var tl = SampleTimeline(parameters: .init(rateHz: 60))
        let out = feed(&tl, from: realtime, arrival: 5_000_000_000, count: 600)
        XCTAssertEqual(out.map(\.t), (0..<600).map { realtime + Int64($0) * period })
        XCTAssertNil(out.first { $0.jump != nil })
        XCTAssertEqual(tl.offset, 0)
    }

    func testStepBackOneHourIsOneJumpAndTimeKeepsFlowing() {
        var tl = SampleTimeline(parameters: .init(rateHz: 60))
        let before = feed(&tl, from: realtime, arrival: 0, count: 120)
        let hour: Int64 = 3_600_000_000_000
        let after = feed(&tl, from: realtime + 120 * period - hour, arrival: 120 * period, count: 120)
        let jumps = after.compactMap(\.jump)
        XCTAssertEqual(jumps.count, 1)
        XCTAssertEqual(jumps[0].step, -hour, accuracy: 2 * period)
        XCTAssertTrue(jumps[0].summary.hasPrefix("back 3600"), jumps[0].summary)
        let all = (before + after).map(\.t)
        XCTAssertEqual(zip(all, all.dropFirst()).filter { $1 <= $0 }.count, 0, "never backwards")
        // The output keeps the sample rate across the step: 240 samples span 239 periods.
        XCTAssertEqual(all.last! - all.first!, 239 * period, accuracy: 2 * period)
    }

    func testStepForwardThreeDaysIsOneJump() {
        var tl = SampleTimeline(parameters: .init(rateHz: 60))
        _ = feed(&tl, from: realtime, arrival: 0, count: 60)
        let days: Int64 = 3 * 86_400_000_000_000
        let after = feed(&tl, from: realtime + 60 * period + days, arrival: 60 * period, count: 60)
        XCTAssertEqual(after.compactMap(\.jump).count, 1)
        XCTAssertEqual(after[0].t, realtime + 60 * period, accuracy: 2 * period)
        XCTAssertEqual(after.last!.t - after[0].t, 59 * period)
    }

    func testRealPauseWithMatchingArrivalIsNotAJump() {
        var tl = SampleTimeline(parameters: .init(rateHz: 60))
        _ = feed(&tl, from: 10_000_000_000, arrival: 10_000_000_000, count: 30)
        // The sensor stalled for 2 s and the reader saw the same 2 s pass.
        let t = 10_000_000_000 + 29 * period + 2_000_000_000
        let p = tl.place(t, arrival: 10_000_000_000 + 27 * period + 2_000_000_000)
        XCTAssertNil(p.jump)
        XCTAssertEqual(p.t, t)
    }

    func testWithoutArrivalTimesAForwardGapOfAFewPeriodsIsAJump() {
        var tl = SampleTimeline(parameters: .init(rateHz: 60))
        for i in 0..<10 { _ = tl.place(Int64(i) * period) }
        XCTAssertNil(tl.place(10 * period + 2 * period).jump, "two periods late: jitter")
        XCTAssertNotNil(tl.place(20 * period + 10 * period).jump, "10 periods without knowing why")
    }

    func testSmallJitterBackIsHeldNotReported() {
        var tl = SampleTimeline(parameters: .init(rateHz: 60))
        let a = tl.place(1_000_000_000, arrival: 0)
        let b = tl.place(1_000_000_000 - 5_000_000, arrival: 1_000_000)  // 5 ms back: no timestamp element
        XCTAssertNil(b.jump)
        XCTAssertGreaterThan(b.t, a.t)
    }

    func testResumeAcceptsTheTimeAwayButNotAStepBack() {
        var tl = SampleTimeline(parameters: .init(rateHz: 60))
        _ = feed(&tl, from: 40_000_000_000, arrival: 0, count: 30)
        tl.resume()
        let p = tl.place(50_000_000_000, arrival: 30 * period + 1_000_000_000)
        XCTAssertNil(p.jump, "a reconnect may come back much later")
        XCTAssertEqual(p.t, 50_000_000_000)
        tl.resume()
        let q = tl.place(2_000_000_000, arrival: 30 * period + 2_000_000_000)
        XCTAssertNotNil(q.jump, "another clock after the reconnect: re-anchored")
        XCTAssertGreaterThan(q.t, p.t)
    }

    func testMonotonicTimestampsKeepARealGapReadLate() {
        // A buffer's first scan read 190 ms after it was taken (the reader was starved), the
        // next one 200 ms later in sensor time but read at once: by arrival times alone that is
        // a 190 ms step forward. On CLOCK_MONOTONIC nothing can step: the gap is real and kept.
        var guessing = SampleTimeline(parameters: .init(rateHz: 60))
        _ = guessing.place(1_000_000_000, arrival: 1_190_000_000)
        XCTAssertNotNil(guessing.place(1_200_000_000, arrival: 1_200_000_000).jump, "arrival times alone")

        var params = SampleTimeline.Parameters(rateHz: 60)
        params.detectsJumps = false
        var monotonic = SampleTimeline(parameters: params)
        _ = monotonic.place(1_000_000_000, arrival: 1_190_000_000)
        let next = monotonic.place(1_200_000_000, arrival: 1_200_000_000)
        XCTAssertNil(next.jump)
        XCTAssertEqual(next.t, 1_200_000_000, "the sample keeps its own time")
        XCTAssertEqual(monotonic.place(1_199_000_000, arrival: 1_201_000_000).t, 1_200_000_001, "never decreasing")
        XCTAssertEqual(monotonic.jumps, 0)
    }

    func testAStepBackOnAClockBelievedMonotonicIsAJumpAndDisprovesIt() {
        var params = SampleTimeline.Parameters(rateHz: 50)
        params.detectsJumps = false
        var line = SampleTimeline(parameters: params)
        _ = line.place(10_000_000_000, arrival: 10_000_000_000)
        _ = line.place(10_020_000_000, arrival: 10_020_000_000)
        // An hour back (a chip's own timestamp reset, a clock switch that did not take).
        let back = line.place(10_040_000_000 - 3_600_000_000_000, arrival: 10_040_000_000)
        XCTAssertEqual(back.jump?.summary, "back 3600 s")
        XCTAssertEqual(back.t, 10_040_000_000, "continues one period on")
        XCTAssertTrue(line.monotonicDisproved)
        // Later samples advance at their own pace, not 1 ns each.
        let next = line.place(10_060_000_000 - 3_600_000_000_000, arrival: 10_060_000_000)
        XCTAssertEqual(next.t, 10_060_000_000)
        // And a step forward on it is now a jump too.
        let forward = line.place(10_080_000_000 + 86_400_000_000_000, arrival: 10_080_000_000)
        XCTAssertNotNil(forward.jump)
        XCTAssertEqual(forward.t, 10_080_000_000)
        XCTAssertEqual(line.jumps, 2)
    }
}
