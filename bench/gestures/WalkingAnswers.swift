// SPDX-License-Identifier: Apache-2.0
// Answers while walking (issue 30: "deliberate answers still count, walking included"). Neither
// data set holds a nod made while walking, so this bench composes one from two real recordings:
// the nods and shakes of the head-gestures logs (headphones, 30 Hz) are cut out and played onto
// the walking recordings of the everyday set (glasses, 100 Hz) — the real gait with a real
// gesture on top — and the real game judges the result. Compositing: the gesture's rotation,
// integrated from its own rates in the head frame, is added to the walk's orientation through
// the walker's head frame (the gyro adds; the walk's accelerometer turns with the head), and the
// linear acceleration its rotation gives a sensor on a glasses temple (about the neck) is added.
// What it does not reproduce: how a walker's nod couples with the gait (people time nods to
// steps, or slow down), and the lever arm differs (headphones vs a glasses temple).
import Foundation
import TestSupport
import TiltCore
import TiltPlatform
import TiltRecordings
import TiltSensors

/// One gesture cut from a head-gestures log: rates, and the linear acceleration they give a temple, in the head frame
/// (x right, y up, z back), 30 Hz, from just before its first swing to just after its last.
struct CutGesture {
    var kind: HeadGesture.Kind
    /// Half-waves of its axis (a nod of two cycles: 4).
    var swings: Int
    var dt: [Double]
    var rate: [Vector3]
    var accel: [Vector3]
    var seconds: Double { dt.reduce(0, +) }
}

/// Cuts every gesture out of one mounted log, as the reference cycles see them
/// (`GestureCycles`): a run of consecutive half-waves of the gesture's axis rate, each peaking at
/// 40 °/s or more and sweeping 3° or more, turning more about that axis than about the other,
/// with 0.25 s around it in which the head turns under 40 °/s about both axes (so the cut starts
/// and ends at rest and holds one gesture), at most 3 s. `swings` = the half-waves.
func cutGestures(_ samples: [IMUSample], kind: HeadGesture.Kind) -> [CutGesture] {
    var est = AttitudeEstimator()
    let rates = samples.map { s -> Vector3 in
        let a = est.update(s); return s.gyro - a.gyroBias
    }
    let f = HeadFrame.assumed
    let own = rates.map { (kind == .nod ? f.pitchRate($0) : f.yawRate($0)) * 180 / .pi }
    let other = rates.map { (kind == .nod ? f.yawRate($0) : f.pitchRate($0)) * 180 / .pi }
    let n = samples.count
    func t(_ k: Int) -> Double { Double(samples[k].t - samples[0].t) * 1e-9 }
    // Half-waves of the own axis: [first, last] sample, peak, angle, and the other axis' angle.
    var waves: [(lo: Int, hi: Int, peak: Double, angle: Double, other: Double)] = []
    for k in 0..<n {
        let dt = k == 0 ? 0 : min(0.25, t(k) - t(k - 1))
        if k == 0 || (own[k] > 0) != (own[k - 1] > 0) { waves.append((k, k, 0, 0, 0)) }
        waves[waves.count - 1].hi = k
        waves[waves.count - 1].peak = max(waves[waves.count - 1].peak, abs(own[k]))
        waves[waves.count - 1].angle += abs(own[k]) * dt
        waves[waves.count - 1].other += abs(other[k]) * dt
    }
    let big = waves.map { $0.peak >= 40 && $0.angle >= 3 }
    var cuts: [CutGesture] = []
    var w = 0
    while w < waves.count {
        guard big[w] else { w += 1; continue }
        var e = w
        while e + 1 < waves.count, big[e + 1] { e += 1 }
        defer { w = e + 1 }
        let swings = e - w + 1
        let ownAngle = waves[w...e].reduce(0) { $0 + $1.angle }
        let otherAngle = waves[w...e].reduce(0) { $0 + $1.other }
        guard swings >= 2, ownAngle > otherAngle else { continue }
        var lo = waves[w].lo
        var hi = waves[e].hi
        while lo > 0, t(waves[w].lo) - t(lo - 1) <= 0.25 { lo -= 1 }
        while hi + 1 < n, t(hi + 1) - t(waves[e].hi) <= 0.25 { hi += 1 }
        let calm =
            (lo..<waves[w].lo).allSatisfy { abs(own[$0]) < 40 && abs(other[$0]) < 40 }
            && ((waves[e].hi + 1)...max(waves[e].hi + 1, hi)).allSatisfy {
                $0 >= n || (abs(own[$0]) < 40 && abs(other[$0]) < 40)
            }
        guard calm, t(hi) - t(lo) <= 3 else { continue }
        var g = CutGesture(kind: kind, swings: swings, dt: [], rate: [], accel: [])
        for k in lo...hi {
            g.dt.append(k == lo ? 0 : t(k) - t(k - 1))
            g.rate.append(rates[k])
        }
        // The linear part, from the rotation about the neck: a sensor on a glasses temple sits
        // about 0.1 m above, 0.08 m in front of and 0.07 m to the side of the neck's pivot
        // (a lever arm, head frame x right, y up, z back), so it feels α × r + ω × (ω × r).
        // (The log's own accelerometer is not used: its gravity, taken at the cut's first row,
        // is off by whatever the head was doing then, and twice integrated that reads as the
        // whole body moving.)
        let r = Vector3(0.07, 0.10, -0.08)
        for k in g.rate.indices {
            let w = g.rate[k]
            let next = g.rate[min(k + 1, g.rate.count - 1)]
            let prev = g.rate[max(k - 1, 0)]
            let span = (k + 1 < g.rate.count ? g.dt[k + 1] : 0) + (k > 0 ? g.dt[k] : 0)
            let alpha = span > 0 ? (next - prev) / span : .zero
            g.accel.append(alpha.cross(r) + w.cross(w.cross(r)))
        }
        cuts.append(g)
    }
    return cuts
}

/// The walk's rate stays under `dps` for `seconds` from `t` (the rows are in time order).
func quiet(_ walk: [IMUSample], from t: Nanoseconds, seconds: Double, dps: Double = 60) -> Bool {
    guard dps.isFinite else { return true }
    let end = t + Nanoseconds(seconds * 1e9)
    var lo = 0
    var hi = walk.count
    while lo < hi { let m = (lo + hi) / 2; if walk[m].t < t { lo = m + 1 } else { hi = m } }
    var k = lo
    while k < walk.count, walk[k].t <= end {
        if walk[k].gyro.norm >= dps * .pi / 180 { return false }
        k += 1
    }
    return true
}

/// What the game made of the gestures played onto one frame's recordings, per kind of gesture.
struct WalkingAnswers {
    /// Per class ("nod, 1 cycle", …): played, answered right, answered wrong.
    var played: [String: Int] = [:], right: [String: Int] = [:], wrong: [String: Int] = [:]
    /// Decisions away from any played gesture, and the seconds judged.
    var other = 0, seconds = 0.0

    /// The class a gesture is counted in: what the walking rule asks (a nod of two cycles, a
    /// shake of five swings) or less.
    static func label(_ g: CutGesture) -> String {
        g.kind == .nod
            ? (g.swings >= 4 ? "nods of 2+ cycles" : "nods of 1 cycle")
            : (g.swings >= 5 ? "shakes of 5+ swings" : "shakes of 3–4 swings")
    }
    static let labels = ["nods of 1 cycle", "nods of 2+ cycles", "shakes of 3–4 swings", "shakes of 5+ swings"]

    mutating func add(_ o: WalkingAnswers) {
        played.merge(o.played, uniquingKeysWith: +); right.merge(o.right, uniquingKeysWith: +)
        wrong.merge(o.wrong, uniquingKeysWith: +); other += o.other; seconds += o.seconds
    }
}

/// One gesture placed in a composite: where it starts and ends (sample time) and what it is.
struct PlacedGesture {
    var start: Nanoseconds
    var end: Nanoseconds
    var gesture: CutGesture
}

/// Plays `gestures` (cycled from `first`) onto `walk` every 7 s from 6 s on, seen through `frame`
/// (sensor frame): the composite samples and where each gesture went.
func composite(
    _ gestures: [CutGesture], onto walk: [IMUSample], frame: HeadFrame, first: Int, quietDps: Double = 60
) -> (samples: [IMUSample], placed: [PlacedGesture]) {
    let right = frame.left * -1
    let back = frame.forward * -1
    func toSensor(_ v: Vector3) -> Vector3 { right * v.x + frame.up * v.y + back * v.z }
    func toHead(_ v: Vector3) -> Vector3 { Vector3(v.dot(right), v.dot(frame.up), v.dot(back)) }
    var samples = walk
    var placed: [PlacedGesture] = []
    let t0 = walk[0].t
    var at: Nanoseconds = t0 + 6_000_000_000
    var k = first
    var i = 0
    while true {
        let g = gestures[k % gestures.count]
        k += 1
        while i < samples.count, samples[i].t < at { i += 1 }
        // A player answers while looking ahead, not in the middle of looking around: the walk's
        // own rate stays under 60 °/s (a walking head's swings are 10–40 °/s) from 1 s before
        // the gesture to 1 s after it.
        while i < samples.count, !quiet(walk, from: samples[i].t - 1_000_000_000, seconds: g.seconds + 2, dps: quietDps)
        {
            i += 10
        }
        guard i < samples.count, Double(samples[samples.count - 1].t - samples[i].t) * 1e-9 > g.seconds + 2 else {
            break
        }
        // Walk the gesture's own time along the walk's samples, interpolating its 30 Hz rows.
        var q = Quaternion(w: 1, x: 0, y: 0, z: 0)
        var j = i
        var gt = 0.0
        var row = 0
        while j < samples.count, row + 1 < g.rate.count {
            let dt = j == i ? 0 : Double(samples[j].t - samples[j - 1].t) * 1e-9
            gt += dt
            while row + 1 < g.rate.count, gt > g.dt[row + 1] { gt -= g.dt[row + 1]; row += 1 }
            guard row + 1 < g.rate.count else { break }
            let u = g.dt[row + 1] > 0 ? gt / g.dt[row + 1] : 0
            let w = g.rate[row] * (1 - u) + g.rate[row + 1] * u
            let lin = g.accel[row] * (1 - u) + g.accel[row + 1] * u
            if w.norm > 0, dt > 0 { q = q * Quaternion(axis: w.normalized, angle: w.norm * dt) }
            let s = samples[j]
            samples[j].gyro = toSensor(q.conjugate.rotate(toHead(s.gyro)) + w)
            samples[j].accel = toSensor(q.conjugate.rotate(toHead(s.accel)) + lin)
            j += 1
        }
        // The cut starts and ends at rest, so what the gesture turned away it has mostly turned
        // back: the rest of the walk goes on in the walk's own orientation.
        placed.append(PlacedGesture(start: samples[i].t, end: samples[min(j, samples.count - 1)].t, gesture: g))
        at = samples[min(j, samples.count - 1)].t + 5_000_000_000
    }
    return (samples, placed)
}

/// Plays `gestures` onto `walk` (`composite`) and judges the composite with the nod vocabulary,
/// the game told `frame`.
func playGestures(_ gestures: [CutGesture], onto walk: [IMUSample], frame: HeadFrame, first: Int) -> WalkingAnswers {
    let (samples, placed) = composite(gestures, onto: walk, frame: frame, first: first)
    var options = GameJudge.Options()
    options.frontEnd = SampleFrontEnd(calibration: IMUCalibration(headUp: frame.up, headForward: frame.forward))
    options.gestures = .nod
    options.limits = benchLimits
    options.rules = benchRules
    let (events, summary) = try! GameJudge.play(samples, options: options)
    var r = WalkingAnswers(seconds: summary.seconds)
    for p in placed { r.played[WalkingAnswers.label(p.gesture), default: 0] += 1 }
    var answered = Set<Int>()
    for e in events where e.kind == .correct || e.kind == .skip {
        guard let d = e.decision else { continue }
        if let p = placed.firstIndex(where: { d.decidedAt >= $0.start - 200_000_000 && d.decidedAt <= $0.end }),
            !answered.contains(p)
        {
            answered.insert(p)
            let g = placed[p].gesture
            if (e.kind == .correct) == (g.kind == .nod) {
                r.right[WalkingAnswers.label(g), default: 0] += 1
            } else {
                r.wrong[WalkingAnswers.label(g), default: 0] += 1
            }
        } else {
            r.other += 1
        }
    }
    return r
}

/// The nods and the shakes of the head-gestures logs, cut out (`cutGestures`).
func cutPools(_ logs: [(String, [IMUSample])], mount: Matrix3) -> (nods: [CutGesture], shakes: [CutGesture]) {
    let frontEnd = SampleFrontEnd(mount: mount)
    var nods: [CutGesture] = []
    var shakes: [CutGesture] = []
    for (_, raw) in logs {
        let mounted = raw.map { frontEnd.apply($0) }
        var est = AttitudeEstimator()
        let rates = mounted.map { s -> Vector3 in
            let a = est.update(s); return s.gyro - a.gyroBias
        }
        let c = GestureCycles.count(times: mounted.map(\.t), rates: rates, frame: .assumed)
        if c.nods >= c.shakes {
            nods += cutGestures(mounted, kind: .nod)
        } else {
            shakes += cutGestures(mounted, kind: .shake)
        }
    }
    return (nods, shakes)
}

/// The table: the head-gestures logs' nods and shakes played onto each person's walking
/// recordings, with the given and the learned frames.
func printWalkingAnswers(_ everydayDir: String, logs: [(String, [IMUSample])], mount: Matrix3) {
    let (nods, shakes) = cutPools(logs, mount: mount)
    let both = alternated(nods, shakes)
    let framesData = (try? Data(contentsOf: URL(fileURLWithPath: "\(everydayDir)/headframes.json"))) ?? Data()
    let frames = ((try? JSONSerialization.jsonObject(with: framesData)) as? [String: Any]) ?? [:]
    let people = (frames["participants"] as? [String: Any]) ?? [:]
    let excluded = (frames["excluded"] as? [String]) ?? []
    // GESTURE_BENCH_ONTO=ACTIVITY plays them onto another activity's recordings (a check of the compositing).
    let activity = ProcessInfo.processInfo.environment["GESTURE_BENCH_ONTO"] ?? "walking"
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: everydayDir)) ?? []).filter {
        $0.hasSuffix("-\(activity).csv.gz") && !excluded.contains($0)
    }.sorted()
    print(
        "\nAnswers while walking: the head-gestures logs' nods (\(nods.count)) and shakes (\(shakes.count)), cut out as the reference cycles see them (half-waves ≥ 40 °/s and ≥ 3°, 0.25 s of rest around them, ≤ 3 s), played alternately onto the everyday set's \(files.count) \(activity) recordings through the walker's head frame, 5 s or more apart, where the walk turns under 60 °/s; the nod game judges the composite (a nod should answer correct, a shake skip):\n"
    )
    print("| frame | \(activity) recordings (s) | gestures | played | right | wrong | none |")
    print("|---|---|---|---|---|---|---|")
    for name in ["given", "learned"] {
        var total = WalkingAnswers()
        for (n, file) in files.enumerated() {
            let p = everydayParticipant(file)
            let frame = name == "given" ? givenFrame(people[p]) : learnedFrames[p]
            guard let frame, var walk = try? DatasetReader.read(path: "\(everydayDir)/\(file)").samples else {
                continue
            }
            if ProcessInfo.processInfo.environment["GESTURE_BENCH_SYNTH"] != nil {
                // A held head: gravity along up, a slow 2 °/s sway about up.
                for k in walk.indices {
                    let s = Double(walk[k].t - walk[0].t) * 1e-9
                    walk[k].accel = frame.up * 9.81
                    walk[k].gyro = frame.up * (2 * .pi / 180 * sin(2 * .pi * 0.3 * s))
                }
            }
            total.add(playGestures(both, onto: walk, frame: frame, first: 7 * n))
        }
        for l in WalkingAnswers.labels {
            let played = total.played[l] ?? 0, right = total.right[l] ?? 0, wrong = total.wrong[l] ?? 0
            print(
                "| \(name) | \(String(format: "%.0f", total.seconds)) | \(l) | \(played) | \(right) (\(pct(right, played))) | \(wrong) | \(played - right - wrong) |"
            )
        }
        print("| \(name) | | decisions away from any gesture | \(total.other) | | | |")
    }
}
