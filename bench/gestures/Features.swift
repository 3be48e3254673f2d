// SPDX-License-Identifier: Apache-2.0
// GESTURE_BENCH_FEATURES=FILE: the training and validation data of `GestureClassifier`, as CSV.
// Every candidate the loose detector (`GestureCandidates`) reports, with its features:
// on every everyday recording as it is (nobody playing: label "none"), and within the nods and
// shakes played onto the walking, stairs, running and standing recordings (`composite`, full and
// half strength, four passes through the pool so each place gets a nod and a shake), labelled
// with the gesture played there. Each row names its participant, so the training script
// (bench/gestures/train) can leave one person out.
import Foundation
import TiltCore
import TiltRecordings
import TiltSensors

/// Runs the candidates over `samples` through the wearer's frame (`truth`, given) or none.
func candidates(
    _ samples: [IMUSample], truth: HeadFrame, given: Bool
) -> [(gesture: HeadGesture, features: GestureFeatures)] {
    let fe = SampleFrontEnd(
        calibration: given ? IMUCalibration(headUp: truth.up, headForward: truth.forward) : IMUCalibration())
    let frame = given ? fe.calibrator.calibration.headFrame : nil
    var est = AttitudeEstimator()
    var c = GestureCandidates()
    var out: [(gesture: HeadGesture, features: GestureFeatures)] = []
    for raw in samples {
        let s = fe.apply(raw)
        let a = est.update(s)
        out += c.add(
            t: s.t, rate: s.gyro - a.gyroBias, up: TiltMeter.upInSensor(a.q), frame: frame, accel: s.accel.norm)
    }
    return out
}

func dumpFeatures(_ everydayDir: String, nods: [CutGesture], shakes: [CutGesture], to path: String) {
    let framesData = (try? Data(contentsOf: URL(fileURLWithPath: "\(everydayDir)/headframes.json"))) ?? Data()
    let frames = ((try? JSONSerialization.jsonObject(with: framesData)) as? [String: Any]) ?? [:]
    let people = (frames["participants"] as? [String: Any]) ?? [:]
    let excluded = (frames["excluded"] as? [String]) ?? []
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: everydayDir)) ?? []).sorted().filter {
        $0.hasSuffix(".csv.gz") && !excluded.contains($0)
    }
    var out = "source,participant,file,activity,frame,strength,label,placed,t_s,seconds,"
    out += (GestureFeatures.names + GestureFeatures.inputNames.map { "in_\($0)" }).joined(separator: ",") + "\n"
    func row(
        _ source: String, _ file: String, _ frame: String, _ strength: Double, _ label: String, _ placed: Int,
        _ t: Double, _ seconds: Double, _ f: GestureFeatures
    ) {
        let activity = file.split(separator: "-").dropFirst(3).joined(separator: "-").replacingOccurrences(
            of: ".csv.gz", with: "")
        out += "\(source),\(everydayParticipant(file)),\(file),\(activity),\(frame),\(strength),\(label),\(placed),"
        out += String(format: "%.3f,%.1f,", t, seconds)
        out += (f.values + f.inputs).map { String(format: "%.6g", $0) }.joined(separator: ",") + "\n"
    }
    for (n, file) in files.enumerated() {
        guard let truth = givenFrame(people[everydayParticipant(file)]),
            let rec = try? DatasetReader.read(path: "\(everydayDir)/\(file)").samples, rec.count > 100
        else { continue }
        let t0 = rec[0].t
        let seconds = Double(rec[rec.count - 1].t - t0) * 1e-9
        for given in [true, false] {
            for (g, f) in candidates(rec, truth: truth, given: given) {
                row("everyday", file, given ? "given" : "none", 0, "none", -1, Double(g.end - t0) * 1e-9, seconds, f)
            }
        }
        guard let activity = compositeActivities.first(where: { file.hasSuffix("-\($0).csv.gz") }) else { continue }
        for (_, scale) in compositeStrengths {
            let both = alternated(nods, shakes, scale: scale)
            for pass in 0..<4 {
                let (samples, placed) = composite(
                    both, onto: rec, frame: truth, first: 7 * n + pass * 37,
                    quietDps: activity == "running" ? .infinity : 60)
                for given in [true, false] {
                    for (g, f) in candidates(samples, truth: truth, given: given) {
                        guard let k = placed.firstIndex(where: { g.end >= $0.start && g.end <= $0.end + 300_000_000 })
                        else { continue }
                        let id = (n * 1000 + pass * 100 + k) * 2 + (scale == 1 ? 0 : 1)
                        row(
                            "composite", file, given ? "given" : "none", scale, placed[k].gesture.kind.rawValue, id,
                            Double(g.end - t0) * 1e-9, seconds, f)
                    }
                }
            }
        }
    }
    try! out.write(toFile: path, atomically: true, encoding: .utf8)
    print("features: \(out.split(separator: "\n").count - 1) rows → \(path)")
}

/// Which classifier the game plays with (GESTURE_BENCH_CLASSIFIER): "lopo" (default: for each
/// person the model trained without them, bench/gestures/classifiers-lopo.json), "trained" (the
/// one built in, trained on everybody: not a fair score on these people), "rules" (none: the
/// hand-set limits, as before the classifier).
let benchClassifierMode = ProcessInfo.processInfo.environment["GESTURE_BENCH_CLASSIFIER"] ?? "lopo"

/// The leave-one-person-out models, by participant ("D1-U07").
let lopoClassifiers: [String: GestureClassifier] = {
    guard benchClassifierMode == "lopo" else { return [:] }
    let path = "bench/gestures/classifiers-lopo.json"
    guard let data = FileManager.default.contents(atPath: path),
        let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
        let people = json["people"] as? [String: [String: Any]]
    else { print("\(path): missing or unreadable (run bench/gestures/train --write)"); exit(1) }
    var out: [String: GestureClassifier] = [:]
    for (p, m) in people {
        func doubles(_ k: String) -> [Double] { (m[k] as? [NSNumber])?.map(\.doubleValue) ?? [] }
        func ints(_ k: String) -> [Int] { (m[k] as? [NSNumber])?.map(\.intValue) ?? [] }
        let c = GestureClassifier(
            base: (m["base"] as? NSNumber)?.doubleValue ?? .nan, rate: (m["rate"] as? NSNumber)?.doubleValue ?? .nan,
            roots: ints("roots"), feature: ints("feature"), threshold: doubles("threshold"), left: ints("left"),
            right: ints("right"), value: doubles("value"), accept: (m["accept"] as? NSNumber)?.doubleValue ?? 1)
        guard c.isValid() else { print("\(path): \(p)'s model is not valid"); exit(1) }
        out[p] = c
    }
    return out
}()

/// `benchLimits` with the classifier for `participant` (see `benchClassifierMode`).
func benchLimits(for participant: String) -> AnswerLimits {
    var l = benchLimits
    switch benchClassifierMode {
    case "rules": l.classifier = nil
    case "trained": l.classifier = .trained
    default:
        guard let c = lopoClassifiers[participant] else { print("no leave-one-out model for \(participant)"); exit(1) }
        l.classifier = c
    }
    // GESTURE_BENCH_ACCEPT=P: the classifier's operating point (the probability it accepts from).
    if let a = ProcessInfo.processInfo.environment["GESTURE_BENCH_ACCEPT"].flatMap(Double.init) {
        l.classifier?.accept = a
    }
    // GESTURE_BENCH_RUN_ACCEPT=P: AnswerLimits.classifierRunAccept.
    if let a = ProcessInfo.processInfo.environment["GESTURE_BENCH_RUN_ACCEPT"].flatMap(Double.init) {
        l.classifierRunAccept = a
    }
    return l
}
