// SPDX-License-Identifier: Apache-2.0
// The game for a player on the move: real nods and shakes (the head-gestures logs, cut out by
// `cutGestures`) played onto every walking, stairs, running and standing recording of the
// everyday set, at full and at half strength, with the wearer's head frame given (a calibrated
// player) and with none (no configuration: the game starts from tiltd's assumed frame and learns
// from the composite itself, as a daemon that was just installed). One table; what counts is a
// gesture made while a prompt showed, answered the right way (nod = correct, shake = skip).
import Foundation
import TestSupport
import TiltCore
import TiltPlatform
import TiltRecordings
import TiltSensors

/// The activities the composites are played onto, and how strong the gestures are.
let compositeActivities = ["walking", "stairs", "running", "standing"]
let compositeStrengths: [(name: String, scale: Double)] = [("full", 1), ("half", 0.5)]

/// `g` with its rates scaled by `scale` (the same timing: the swing and the rate both scale),
/// the temple's linear acceleration recomputed from the scaled rates.
func scaled(_ g: CutGesture, by scale: Double) -> CutGesture {
    guard scale != 1 else { return g }
    var s = g
    s.rate = g.rate.map { $0 * scale }
    // α × r scales with the rate, ω × (ω × r) with its square.
    s.accel = g.accel.indices.map { k in
        let w = g.rate[k]
        let r = Vector3(0.07, 0.10, -0.08)
        let centripetal = w.cross(w.cross(r))
        return (g.accel[k] - centripetal) * scale + centripetal * (scale * scale)
    }
    return s
}

/// Nod, shake, nod, … (each pool cycled on its own, twice the larger pool's length), scaled by `scale`.
func alternated(_ nods: [CutGesture], _ shakes: [CutGesture], scale: Double = 1) -> [CutGesture] {
    var both: [CutGesture] = []
    for k in 0..<(2 * max(nods.count, shakes.count)) {
        let pool = k % 2 == 0 ? nods : shakes
        if !pool.isEmpty { both.append(scaled(pool[(k / 2) % pool.count], by: scale)) }
    }
    return both
}

/// Records when the game showed a prompt (`phase == .prompt`), for "answered when a prompt showed".
final class PromptTimeline: @unchecked Sendable {
    /// (time, showing) at each change.
    var changes: [(t: Nanoseconds, showing: Bool)] = []
    /// Whether a prompt had been showing for `reaction` (ns) at `t`: a player answers a prompt
    /// seen, not one that appears as the head is already moving.
    func showing(at t: Nanoseconds, reaction: Nanoseconds = 500_000_000) -> Bool {
        var lo = 0
        var hi = changes.count
        while lo < hi { let m = (lo + hi) / 2; if changes[m].t <= t { lo = m + 1 } else { hi = m } }
        return lo > 0 && changes[lo - 1].showing && changes[lo - 1].t <= t - reaction
    }
}

/// One row's tallies.
struct CompositeTally {
    var seconds = 0.0, prompts = 0, other = 0, recordings = 0
    /// Per class (`WalkingAnswers.labels`): played, played while a prompt showed, right and wrong among those.
    var played: [String: Int] = [:], shown: [String: Int] = [:], right: [String: Int] = [:], wrong: [String: Int] = [:]
    mutating func add(_ o: CompositeTally) {
        seconds += o.seconds; prompts += o.prompts; other += o.other; recordings += o.recordings
        played.merge(o.played, uniquingKeysWith: +); shown.merge(o.shown, uniquingKeysWith: +)
        right.merge(o.right, uniquingKeysWith: +); wrong.merge(o.wrong, uniquingKeysWith: +)
    }
}

/// Plays `gestures` onto `walk` (as `playGestures` places them) and judges the composite with the
/// nod vocabulary, the game told `frame` (given) or nothing (learning from scratch).
func judgeComposite(
    _ gestures: [CutGesture], onto recording: [IMUSample], activity: String, truth: HeadFrame, told: Bool, first: Int,
    participant: String
) -> CompositeTally {
    // A runner's head never turns under 60 °/s for long: running takes gestures wherever they fall.
    let (samples, placed) = composite(
        gestures, onto: recording, frame: truth, first: first, quietDps: activity == "running" ? .infinity : 60)
    var options = GameJudge.Options()
    if told {
        options.frontEnd = SampleFrontEnd(calibration: IMUCalibration(headUp: truth.up, headForward: truth.forward))
    } else {
        options.learnsHeadFrame = true
    }
    options.gestures = .nod
    options.limits = benchLimits(for: participant)
    options.rules = benchRules
    let timeline = PromptTimeline()
    options.onSample = { game, _, _ in
        let showing = game.phase == .prompt
        if timeline.changes.last?.showing != showing, let t = game.lastT { timeline.changes.append((t, showing)) }
    }
    let (events, summary) = try! GameJudge.play(samples, options: options)
    var r = CompositeTally(seconds: summary.seconds, prompts: summary.prompts, recordings: 1)
    var answered = Set<Int>()
    for p in placed {
        let l = WalkingAnswers.label(p.gesture)
        r.played[l, default: 0] += 1
        if timeline.showing(at: p.start) { r.shown[l, default: 0] += 1 }
    }
    var rightAt = Set<Int>()
    defer { if ProcessInfo.processInfo.environment["GESTURE_BENCH_MISSES"] != nil { printMisses() } }
    func printMisses() {
        let found = candidates(samples, truth: truth, given: told)
        let limits = options.limits
        for (k, p) in placed.enumerated() where timeline.showing(at: p.start) && !rightAt.contains(k) {
            let t0 = samples[0].t
            func s(_ t: Nanoseconds) -> String { String(format: "%.2f", Double(t - t0) * 1e-9) }
            var line =
                "MISS \(activity) \(told ? "given" : "none") \(participant) \(p.gesture.kind) \(p.gesture.swings) at \(s(p.start))–\(s(p.end)):"
            for e in events where e.t >= p.start - 3_000_000_000 && e.t <= p.end + 3_000_000_000 {
                line += " [\(e.kind) \(s(e.t))]"
            }
            for (g, f) in found where g.end >= p.start && g.end <= p.end + 300_000_000 {
                let prob = limits.classifier.map { $0.probability(f.inputs) } ?? -1
                line += String(
                    format: " {%@ c%d %@–%@ peak %.0f sm %.2f p %.3f}", g.kind.rawValue, g.cycle, s(g.start), s(g.end),
                    g.peakDps, f["stride_match"], prob)
            }
            print(line)
            if ProcessInfo.processInfo.environment["GESTURE_BENCH_MISSES"] == "rates" {
                // The head's rate about the frame's axes through the gesture, °/s, every 20 ms.
                let fe = SampleFrontEnd(calibration: IMUCalibration(headUp: truth.up, headForward: truth.forward))
                let hf = fe.calibrator.calibration.headFrame ?? .assumed
                var est = AttitudeEstimator()
                var rows = "RATES"
                var next: Nanoseconds = p.start - 500_000_000
                for raw in samples where raw.t <= p.end + 300_000_000 {
                    let x = fe.apply(raw)
                    let a = est.update(x)
                    guard x.t >= next else { continue }
                    next = x.t + 20_000_000
                    let w = x.gyro - a.gyroBias
                    rows += String(
                        format: " %@:%.0f/%.0f/%.0f", s(x.t), hf.pitchRate(w) * 180 / .pi, hf.yawRate(w) * 180 / .pi,
                        hf.rollRate(w) * 180 / .pi)
                }
                print(rows)
            }
        }
    }
    for e in events where e.kind == .correct || e.kind == .skip {
        guard let d = e.decision else { continue }
        if let k = placed.firstIndex(where: { d.decidedAt >= $0.start - 200_000_000 && d.decidedAt <= $0.end }),
            !answered.contains(k)
        {
            answered.insert(k)
            let g = placed[k]
            guard timeline.showing(at: g.start) else { continue }
            let l = WalkingAnswers.label(g.gesture)
            if (e.kind == .correct) == (g.gesture.kind == .nod) {
                r.right[l, default: 0] += 1
                rightAt.insert(k)
            } else {
                r.wrong[l, default: 0] += 1
            }
        } else {
            r.other += 1
        }
    }
    return r
}

/// The table: every activity × frame × strength over all participants with a given frame.
func printComposites(_ everydayDir: String, nods: [CutGesture], shakes: [CutGesture]) {
    let framesData = (try? Data(contentsOf: URL(fileURLWithPath: "\(everydayDir)/headframes.json"))) ?? Data()
    let frames = ((try? JSONSerialization.jsonObject(with: framesData)) as? [String: Any]) ?? [:]
    let people = (frames["participants"] as? [String: Any]) ?? [:]
    let excluded = (frames["excluded"] as? [String]) ?? []
    let all = ((try? FileManager.default.contentsOfDirectory(atPath: everydayDir)) ?? []).sorted()
    print(
        "\nThe game on the move: the head-gestures logs' nods (\(nods.count)) and shakes (\(shakes.count)), played alternately onto every recording of each activity (5 s or more apart, where the recording turns under 60 °/s from 1 s before to 1 s after; running: anywhere) through the wearer's head frame (headframes.json; \(people.count) people); half = rates × 0.5 (half the swing and the rate). given: the game is told the frame; none: no configuration, the game starts from the assumed frame and learns its own. 'shown' = begun while a prompt had been showing for 0.5 s or more; right/wrong are among those (nod → correct, shake → skip).\n"
    )
    print(
        "| activity | frame | strength | recordings | min | prompts/min | nods 2+ cycles: shown | right | shakes 5+ swings: shown | right | wrong (all shown) | nods 1 cycle right | shakes 3–4 right | decisions away |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for activity in compositeActivities {
        let files = all.filter { $0.hasSuffix("-\(activity).csv.gz") && !excluded.contains($0) }
        var recordings: [(HeadFrame, [IMUSample], String)] = []
        for file in files {
            guard let truth = givenFrame(people[everydayParticipant(file)]),
                let s = try? DatasetReader.read(path: "\(everydayDir)/\(file)").samples, s.count > 100
            else { continue }
            recordings.append((truth, s, everydayParticipant(file)))
        }
        for told in [true, false] {
            for (strength, scale) in compositeStrengths {
                let both = alternated(nods, shakes, scale: scale)
                var t = CompositeTally()
                for (n, (truth, s, person)) in recordings.enumerated() {
                    t.add(
                        judgeComposite(
                            both, onto: s, activity: activity, truth: truth, told: told, first: 7 * n,
                            participant: person))
                }
                func cell(_ l: String) -> (String, String) {
                    let shown = t.shown[l] ?? 0, right = t.right[l] ?? 0
                    return ("\(shown) of \(t.played[l] ?? 0)", "\(right) (\(pct(right, shown)))")
                }
                let n2 = cell("nods of 2+ cycles"), s5 = cell("shakes of 5+ swings")
                let shownAll = t.shown.values.reduce(0, +), wrongAll = t.wrong.values.reduce(0, +)
                let minutes = t.seconds / 60
                print(
                    "| \(activity) | \(told ? "given" : "none") | \(strength) | \(t.recordings) | \(String(format: "%.1f", minutes)) | \(String(format: "%.2f", Double(t.prompts) / max(minutes, 1e-9))) | \(n2.0) | \(n2.1) | \(s5.0) | \(s5.1) | \(wrongAll) (\(pct(wrongAll, shownAll))) | \(cell("nods of 1 cycle").1) | \(cell("shakes of 3–4 swings").1) | \(t.other) |"
                )
            }
        }
    }
}

/// GESTURE_BENCH_DIAG=ACTIVITY: what the detector alone (no game rules) reports within each
/// gesture played onto that activity's recordings, given frames, full strength: the most
/// cycles of the gesture's own kind, and whether the other kind was reported.
func diagnoseDetector(_ everydayDir: String, nods: [CutGesture], shakes: [CutGesture], activity: String, scale: Double)
{
    let framesData = (try? Data(contentsOf: URL(fileURLWithPath: "\(everydayDir)/headframes.json"))) ?? Data()
    let frames = ((try? JSONSerialization.jsonObject(with: framesData)) as? [String: Any]) ?? [:]
    let people = (frames["participants"] as? [String: Any]) ?? [:]
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: everydayDir)) ?? []).sorted().filter {
        $0.hasSuffix("-\(activity).csv.gz")
    }
    let both = alternated(nods, shakes, scale: scale)
    var hist: [String: Int] = [:]
    for (n, file) in files.enumerated() {
        guard let truth = givenFrame(people[everydayParticipant(file)]),
            let rec = try? DatasetReader.read(path: "\(everydayDir)/\(file)").samples
        else { continue }
        let (samples, placed) = composite(both, onto: rec, frame: truth, first: 7 * n)
        let fe = SampleFrontEnd(calibration: IMUCalibration(headUp: truth.up, headForward: truth.forward))
        var est = AttitudeEstimator()
        var det = GestureDetector()
        var found: [HeadGesture] = []
        let hf = fe.calibrator.calibration.headFrame ?? .assumed
        for raw in samples {
            let s = fe.apply(raw)
            let a = est.update(s)
            let w = s.gyro - a.gyroBias
            found += det.add(t: s.t, pitch: hf.pitchRate(w), yaw: hf.yawRate(w))
        }
        for p in placed {
            let inside = found.filter { $0.end >= p.start && $0.end <= p.end + 300_000_000 }
            let own = inside.filter { $0.kind == p.gesture.kind }.map(\.cycle).max() ?? 0
            let other = inside.contains { $0.kind != p.gesture.kind }
            hist[
                "\(WalkingAnswers.label(p.gesture)): own cycles \(min(own, 3))\(other ? " + other kind" : "")",
                default: 0] += 1
        }
    }
    for (k, v) in hist.sorted(by: { $0.key < $1.key }) { print("DIAG \(activity) ×\(scale) | \(k) | \(v)") }
}

/// GESTURE_BENCH_DIAG=POOL: the size of the cut gestures' half-swings (about their own axis):
/// quartiles of each swing's angle and peak rate, nods and shakes, so the "half strength" rows
/// can be read against what a gentle player does (10–20° at 50–100 °/s).
func describePool(_ gestures: [CutGesture], name: String) {
    var angles: [Double] = [], peaks: [Double] = [], periods: [Double] = []
    for g in gestures {
        var sign = 0.0, angle = 0.0, peak = 0.0, seconds = 0.0
        func close() {
            if angle >= 3 && peak >= 40 { angles.append(angle); peaks.append(peak); periods.append(seconds) }
            angle = 0; peak = 0; seconds = 0
        }
        for (k, w) in g.rate.enumerated() {
            let r = (g.kind == .nod ? w.x : w.y) * 180 / .pi
            let s: Double = r > 0 ? 1 : -1
            if s != sign { close(); sign = s }
            angle += abs(r) * g.dt[k]; peak = max(peak, abs(r)); seconds += g.dt[k]
        }
        close()
    }
    func q(_ v: [Double]) -> String {
        let s = v.sorted()
        guard !s.isEmpty else { return "—" }
        return [0.1, 0.25, 0.5, 0.75, 0.9].map {
            String(format: "%.1f", s[min(s.count - 1, Int($0 * Double(s.count)))])
        }
        .joined(separator: " / ")
    }
    print("DIAG pool \(name): \(gestures.count) gestures, \(angles.count) half-swings; p10/p25/p50/p75/p90")
    print("DIAG pool \(name): angle °: \(q(angles)); peak °/s: \(q(peaks)); duration s: \(q(periods))")
}
