// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore

/// `--sweep`: each nod-vocabulary parameter varied alone around its default, over every log:
/// detector recall and cross-reading (summed over the logs, against the reference cycles) and
/// the nod game's decisions — where the defaults in docs/game.md come from.
func runSweep(_ logs: [(String, [IMUSample])]) {
    struct Prepared { var name: String; var raw: [IMUSample]; var nodLog: Bool; var own: Int }
    let prepared: [Prepared] = logs.map { name, raw in
        let fe = SampleFrontEnd(mount: headsetMount)
        var est = AttitudeEstimator()
        let rates = raw.map { r -> Vector3 in
            let s = fe.apply(r); return s.gyro - est.update(s).gyroBias
        }
        let c = GestureCycles.count(times: raw.map(\.t), rates: rates, frame: .assumed)
        return Prepared(name: name, raw: raw, nodLog: c.nods >= c.shakes, own: max(c.nods, c.shakes))
    }
    typealias Change = (inout TiltGame.Rules) -> Void
    let variants: [(String, Change)] = [
        ("defaults", { _ in }),
        ("nod_min_peak_dps 30", { $0.nod.minPeakDps = 30 }), ("nod_min_peak_dps 60", { $0.nod.minPeakDps = 60 }),
        ("nod_min_swing_deg 2", { $0.nod.minSwingDeg = 2 }), ("nod_min_swing_deg 5", { $0.nod.minSwingDeg = 5 }),
        ("nod_max_swing_s 0.5", { $0.nod.maxSwingSeconds = 0.5 }),
        ("nod_max_swing_s 1.2", { $0.nod.maxSwingSeconds = 1.2 }),
        ("nod_max_gap_s 0.05", { $0.nod.maxGapSeconds = 0.05 }), ("nod_max_gap_s 0.3", { $0.nod.maxGapSeconds = 0.3 }),
        ("nod_max_swing_ratio 3", { $0.nod.maxSwingRatio = 3 }),
        ("nod_max_swing_ratio 10", { $0.nod.maxSwingRatio = 10 }),
        ("shake_swings 2", { $0.nod.shakeSwings = 2 }), ("shake_swings 4", { $0.nod.shakeSwings = 4 }),
        ("still_dps 10", { $0.stillDps = 10 }), ("still_dps 30", { $0.stillDps = 30 }),
        ("neutral_hold_s 0.1", { $0.neutralHoldSeconds = 0.1 }),
        ("neutral_hold_s 0.4", { $0.neutralHoldSeconds = 0.4 }),
        ("min_reaction_s 0", { $0.minReactionSeconds = 0 }),
    ]
    print(
        "| variant | nod recall | nods as shakes | shake recall | shakes as nods | nod game: prompts | right | wrong | < 0.25 s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (name, change) in variants {
        var rules = TiltGame.Rules()
        change(&rules)
        var nodOwn = 0, nodHit = 0, nodCross = 0, shakeOwn = 0, shakeHit = 0, shakeCross = 0
        var prompts = 0, right = 0, wrong = 0, fast = 0
        for p in prepared {
            var o = GameJudge.Options()
            o.frontEnd = SampleFrontEnd(mount: headsetMount)
            o.rules = rules
            o.gestures = .nod
            let s = try! GameJudge.play(p.raw, options: o).summary
            if p.nodLog {
                nodOwn += p.own; nodHit += s.nodsDetected; nodCross += s.shakesDetected
            } else {
                shakeOwn += p.own; shakeHit += s.shakesDetected; shakeCross += s.nodsDetected
            }
            prompts += s.prompts
            right += p.nodLog ? s.correct : s.skip
            wrong += p.nodLog ? s.skip : s.correct
            fast += s.fasterThanReaction
        }
        print(
            "| \(name) | \(pct(nodHit, nodOwn)) | \(pct(nodCross, nodOwn)) | \(pct(shakeHit, shakeOwn)) | \(pct(shakeCross, shakeOwn)) | \(prompts) | \(right) | \(wrong) | \(fast) |"
        )
    }
}
