// SPDX-License-Identifier: Apache-2.0
// Everyday head motion (issue 30): recordings of people who are not playing (glasses with an
// IMU, reading, walking, climbing stairs, …), one round of each vocabulary over every
// recording; every decision is false. Reported per activity as false decisions per hour, with
// the head frame assumed (tiltd's defaults), given (headframes.json, as a calibrated wearer
// would play) and learned (what the game learns from wear, when it does).
import Foundation
import TiltCore
import TiltRecordings
import TiltSensors

/// One recording's false decisions per vocabulary and frame.
struct EverydayResult {
    var file: String
    var participant: String
    var activity: String
    var seconds: Double
    /// "frame/vocabulary" → decisions.
    var decisions: [String: Int] = [:]
    /// Seconds the game saw each activity (assumed frame, nod round: activity does not depend
    /// on the frame).
    var activitySeconds: [String: Double] = [:]
}

/// The answer limits (GESTURE_BENCH_LIMITS="minTiltTurn,bodyWaitSeconds[,minAnswerPeakDps]" overrides, for checks).
let benchLimits: AnswerLimits = {
    var l = AnswerLimits()
    if let v = ProcessInfo.processInfo.environment["GESTURE_BENCH_LIMITS"]?.split(separator: ",").compactMap({
        Double($0)
    }), v.count >= 2 {
        l.minTiltTurn = v[0]; l.bodyWaitSeconds = v[1]
        if v.count >= 3 { l.minAnswerPeakDps = v[2] }
    }
    // GESTURE_BENCH_GAIT="gaitPeakRatio[,gaitCycles[,bodyMoveSpareCycles[,nodCycles[,shakeCycles[,gaitSettleSeconds[,gaitShakeSwingSeconds[,gaitShakePeakRatio]]]]]]]".
    if let v = ProcessInfo.processInfo.environment["GESTURE_BENCH_GAIT"]?.split(separator: ",").compactMap({
        Double($0)
    }), !v.isEmpty {
        l.gaitPeakRatio = v[0]
        if v.count >= 2 { l.gaitCycles = Int(v[1]) }
        if v.count >= 3 { l.bodyMoveSpareCycles = Int(v[2]) }
        if v.count >= 4 { l.nodCycles = Int(v[3]) }
        if v.count >= 5 { l.shakeCycles = Int(v[4]) }
        if v.count >= 6 { l.gaitSettleSeconds = v[5] }
        if v.count >= 7 { l.gaitShakeSwingSeconds = v[6] }
        if v.count >= 8 { l.gaitShakePeakRatio = v[7] }
    }
    // The head-gestures logs' wearer is none of the everyday people: the built-in model is fair there.
    if benchClassifierMode == "rules" { l.classifier = nil }
    return l
}()

/// The rules (GESTURE_BENCH_NOD="nod_min_peak_dps,nod_min_swing_deg" overrides, for checks).
let benchRules: TiltGame.Rules = {
    var r = TiltGame.Rules()
    if let v = ProcessInfo.processInfo.environment["GESTURE_BENCH_NOD"]?.split(separator: ",").compactMap({ Double($0) }
    ), v.count >= 2 {
        r.nod.minPeakDps = v[0]; r.nod.minSwingDeg = v[1]
    }
    return r
}()

/// The frames judged: name and the calibration to use for a participant (nil = skip the row).
/// "none": no calibration and learning on, from nothing, in each recording (a daemon just installed).
let everydayFrames = ["assumed", "given", "learned", "none"]

/// Each participant's learned frame (set by `learnEveryday`).
nonisolated(unsafe) var learnedFrames: [String: HeadFrame] = [:]

func everydayFrame(_ name: String, participant: String, file: String, frames: [String: Any]) -> IMUCalibration?? {
    switch name {
    case "learned":
        let excluded = (frames["excluded"] as? [String]) ?? []
        guard !excluded.contains(file), let f = learnedFrames[participant] else { return .some(nil) }
        return .some(IMUCalibration(headUp: f.up, headForward: f.forward))
    case "assumed", "none": return .some(IMUCalibration())
    case "given":
        let excluded = (frames["excluded"] as? [String]) ?? []
        guard !excluded.contains(file), let people = frames["participants"] as? [String: Any],
            let p = people[participant] as? [String: Any], let u = p["head_up"] as? [Double],
            let f = p["head_forward"] as? [Double], u.count == 3, f.count == 3
        else { return .some(nil) }
        return .some(IMUCalibration(headUp: Vector3(u[0], u[1], u[2]), headForward: Vector3(f[0], f[1], f[2])))
    default: return nil
    }
}

func runEveryday(_ dir: String) -> [EverydayResult] {
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".csv.gz") }
        .sorted()
    let framesData = (try? Data(contentsOf: URL(fileURLWithPath: "\(dir)/headframes.json"))) ?? Data()
    let frames = ((try? JSONSerialization.jsonObject(with: framesData)) as? [String: Any]) ?? [:]
    var out: [EverydayResult] = []
    for file in files {
        // <d1a|d1b|d2>-u<user>-e<experiment>-<activity>.csv.gz
        let parts = file.dropLast(".csv.gz".count).split(separator: "-", maxSplits: 3).map(String.init)
        guard parts.count == 4 else { continue }
        let set = parts[0].hasPrefix("d1") ? "D1" : "D2"
        let participant = "\(set)-\(parts[1].uppercased())"
        let samples: [IMUSample]
        do { samples = try DatasetReader.read(path: "\(dir)/\(file)").samples } catch {
            print("\(file): \(error)"); exit(1)
        }
        guard let first = samples.first, let last = samples.last else { continue }
        var r = EverydayResult(
            file: file, participant: participant, activity: parts[3], seconds: Double(last.t - first.t) * 1e-9)
        for name in everydayFrames {
            guard let cal = everydayFrame(name, participant: participant, file: file, frames: frames), let cal
            else { continue }
            for g in TiltGame.Rules.Gestures.allCases {
                var options = GameJudge.Options()
                options.frontEnd = SampleFrontEnd(calibration: cal)
                options.gestures = g
                options.learnsHeadFrame = name == "none"
                options.limits = benchLimits(for: participant)
                options.rules = benchRules
                if let tr = ProcessInfo.processInfo.environment["GESTURE_BENCH_TRACE"],
                    tr == "\(file):\(name):\(g.rawValue)"
                {
                    let t0 = first.t
                    nonisolated(unsafe) var n = 0
                    options.onSample = { game, w, acc in
                        n += 1
                        guard n % 5 == 0 else { return }
                        let f = game.headFrame
                        print(
                            String(
                                format: "TR %.2f tilt=%.1f p=%.0f y=%.0f r=%.0f |a|=%.2f ",
                                Double(game.lastT! - t0) * 1e-9, game.lastTilt ?? -1, f.pitchRate(w) * 57.3,
                                f.yawRate(w) * 57.3, f.rollRate(w) * 57.3, acc.norm)
                                + "\(game.activity.rawValue) \(game.phase.rawValue)")
                    }
                }
                let (events, s) = try! GameJudge.play(samples, options: options)
                r.decisions["\(name)/\(g.rawValue)"] = s.decisions
                if name == "assumed", g == .nod { r.activitySeconds = s.activitySeconds }
                if ProcessInfo.processInfo.environment["GESTURE_BENCH_DUMP"] != nil {
                    // One line per false decision, for looking at what caused it.
                    for e in events {
                        guard let d = e.decision else { continue }
                        print(
                            "DECISION \(file) \(name) \(g.rawValue) \(e.kind.rawValue) \(e.gesture?.rawValue ?? "-") "
                                + "\(Double(d.decidedAt - first.t) * 1e-9) \(Double(e.t - first.t) * 1e-9) \(Double(d.shownAt - first.t) * 1e-9)"
                        )
                    }
                }
            }
        }
        out.append(r)
    }
    return out
}

/// Decisions per hour over `rows` for one frame/vocabulary ("—" when no row has it).
func perHour(_ rows: [EverydayResult], _ key: String) -> String {
    let judged = rows.filter { $0.decisions[key] != nil }
    let hours = judged.reduce(0.0) { $0 + $1.seconds } / 3600
    guard hours > 0 else { return "—" }
    let n = judged.reduce(0) { $0 + $1.decisions[key]! }
    return String(format: "%.1f (%d)", Double(n) / hours, n)
}

/// The per-activity table; returns the glasses-on rows.
@discardableResult
func printEveryday(_ results: [EverydayResult], dir: String) -> [EverydayResult] {
    let on = results.filter { !$0.activity.hasPrefix("wear_remove") }
    print(
        "\neveryday: \(results.count) recordings from \(dir), \(Set(results.map(\.participant)).count) people; nobody plays, so every decision is false."
    )
    print(
        "False decisions per hour (count): one round per recording and vocabulary, defaults; frames: assumed = tiltd's convention (no calibration), given = headframes.json (its excluded recordings left out)\n"
    )
    var header = "| activity | recordings | h | seen walking | running | not worn |"
    var rule = "|---|---|---|---|---|---|"
    for f in everydayFrames {
        for g in TiltGame.Rules.Gestures.allCases { header += " \(f) \(g.rawValue) |"; rule += "---|" }
    }
    print(header)
    print(rule)
    func row(_ label: String, _ rows: [EverydayResult]) {
        let total = rows.reduce(0.0) { $0 + $1.seconds }
        var line = "| \(label) | \(rows.count) | \(String(format: "%.2f", total / 3600)) |"
        for a in [Activity.walking, .running, .notWorn] {
            let seen = rows.reduce(0.0) { $0 + ($1.activitySeconds[a.rawValue] ?? 0) }
            line += String(format: " %.0f%% |", 100 * seen / max(total, 1e-9))
        }
        for f in everydayFrames {
            for g in TiltGame.Rules.Gestures.allCases { line += " \(perHour(rows, "\(f)/\(g.rawValue)")) |" }
        }
        print(line)
    }
    for a in Set(results.map(\.activity)).sorted() { row(a, results.filter { $0.activity == a }) }
    row("**all, glasses on**", on)
    row("all", results)
    return on
}

/// The participant of an everyday file name (`<d1a|d1b|d2>-u<user>-…`).
func everydayParticipant(_ file: String) -> String {
    let parts = file.split(separator: "-")
    return "\(parts[0].hasPrefix("d1") ? "D1" : "D2")-\(parts[1].uppercased())"
}

/// A participant's frame in headframes.json.
func givenFrame(_ entry: Any?) -> HeadFrame? {
    guard let g = entry as? [String: Any], let u = g["head_up"] as? [Double], let f = g["head_forward"] as? [Double]
    else { return nil }
    return HeadFrame(up: Vector3(u[0], u[1], u[2]), forward: Vector3(f[0], f[1], f[2]), source: .calibrated)
}

/// Learns each participant's head frame as the game does from wear: the learner goes through
/// the participant's recordings in order (experiment number = the order they were made), the
/// excluded ones (another mounting) left out. Prints the learned frames against headframes.json.
func learnEveryday(_ dir: String) {
    // GESTURE_BENCH_LEARNER=cluster,look[,walk[,share[,quiet[,quietBins]]]] sets clusterDeg,
    // lookMinDeg, walkWeight, minWalkingShare, quietDps and quietBinsMin (the
    // leave-one-person-out checks).
    var fresh = HeadFrameLearner()
    let knobs = (ProcessInfo.processInfo.environment["GESTURE_BENCH_LEARNER"] ?? "").split(separator: ",")
        .compactMap { Double($0) }
    if knobs.count >= 2 { fresh.clusterDeg = knobs[0]; fresh.lookMinDeg = knobs[1] }
    if knobs.count >= 3 { fresh.walkWeight = knobs[2] }
    if knobs.count >= 4 { fresh.minWalkingShare = knobs[3] }
    if knobs.count >= 5 { fresh.quietDps = knobs[4] }
    if knobs.count >= 6 { fresh.quietBinsMin = Int(knobs[5]) }
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".csv.gz") }
        .sorted()
    let framesData = (try? Data(contentsOf: URL(fileURLWithPath: "\(dir)/headframes.json"))) ?? Data()
    let frames = ((try? JSONSerialization.jsonObject(with: framesData)) as? [String: Any]) ?? [:]
    let excluded = (frames["excluded"] as? [String]) ?? []
    let people = (frames["participants"] as? [String: Any]) ?? [:]
    var learners: [String: HeadFrameLearner] = [:]
    var adoptedAfter: [String: Double] = [:]
    var walked: [String: Double] = [:]
    // The walking seen by the end of the recording after which the frame was within 15° and
    // stayed so (nil while outside): the recordings are the bench's only checkpoints.
    var staysFrom: [String: Double] = [:]
    // The same at every change of the learned frame (adopted, refreshed every 30 s of walking,
    // withdrawn): the walking seen when the frame came within 15° for good.
    var staysFromChange: [String: Double] = [:]
    for file in files where !excluded.contains(file) && !file.contains("wear_remove") {
        let p = everydayParticipant(file)
        guard let samples = try? DatasetReader.read(path: "\(dir)/\(file)").samples else { continue }
        var options = GameJudge.Options()
        options.gestures = .nod
        options.learnsHeadFrame = true
        options.learner = learners[p] ?? fresh
        let before = options.learner!.frame
        let (_, s) = try! GameJudge.play(samples, options: options)
        if before == nil, s.learner.frame != nil {
            adoptedAfter[p] = (walked[p] ?? 0) + (s.activitySeconds["walking"] ?? 0)
        }
        for c in s.learnedFrames {
            if let f = c.frame, let g = givenFrame(people[p]), f.rotationDegrees(to: g) <= 15 {
                if staysFromChange[p] == nil { staysFromChange[p] = (walked[p] ?? 0) + c.walkingSeconds }
            } else {
                staysFromChange[p] = nil
            }
        }
        walked[p, default: 0] += s.activitySeconds["walking"] ?? 0
        learners[p] = s.learner
        if let l = s.learner.frame, let g = givenFrame(people[p]), l.rotationDegrees(to: g) <= 15 {
            if staysFrom[p] == nil { staysFrom[p] = walked[p] }
        } else {
            staysFrom[p] = nil
        }
    }
    print("\nLearned head frames (HeadFrameLearner over each person's recordings in order) vs headframes.json:\n")
    print(
        "| person | walking seen (s) | walking by the end of the recording that gave it (s) | … that brought it within 15° to stay (s) | … at the frame's own updates (s) | up (deg) | ear-to-ear axis (deg) | forward (deg) | frame rotation (deg) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    var within = 0
    for p in people.keys.sorted() {
        guard let given = givenFrame(people[p]) else { continue }
        guard let l = learners[p]?.frame else {
            print("| \(p) | \(String(format: "%.0f", walked[p] ?? 0)) | — | — | — | — | — | — | — |"); continue
        }
        learnedFrames[p] = l
        func deg(_ a: Vector3, _ b: Vector3) -> Double {
            acos(max(-1, min(1, a.normalized.dot(b.normalized)))) * 180 / .pi
        }
        let rot = l.rotationDegrees(to: given)
        if rot <= 15 { within += 1 }
        print(
            String(
                format: "| %@ | %.0f | %.0f | %@ | %@ | %.1f | %.1f | %.1f | %.1f |", p, walked[p] ?? 0,
                adoptedAfter[p] ?? 0,
                staysFrom[p].map { String(format: "%.0f", $0) } ?? "—",
                (staysFrom[p] == nil ? nil : staysFromChange[p]).map { String(format: "%.0f", $0) } ?? "—",
                deg(l.up, given.up), deg(l.left, given.left), deg(l.forward, given.forward), rot))
    }
    print("\nwithin 15 deg (frame rotation): \(within) of \(people.count)")
    if ProcessInfo.processInfo.environment["GESTURE_BENCH_LEARN_ONLY"] != nil {
        for (p, l) in learners.sorted(by: { $0.key < $1.key }) { print(p, l.walkingWindows, l.lastVote, l.lastLooks) }
        exit(0)
    }
}
