// Pipeline benchmark: recorded samples through calibration + fusion + JSON encoding of the
// `sample` and `attitude` events, as the daemon does per sample. Prints ns per sample.
//
//   swift run -c release PipelineBench [recording.csv] [--samples N] [--repeats N] [--tsv]
//
// Three loops over the same samples: the estimator alone (the figure bench/pipeline/run sets next
// to the other filters' C/C++ cores), calibration + estimator, and calibration + estimator + JSON.
// --tsv prints "tiltd<TAB>name<TAB>ns per sample<TAB>checksum" lines for bench/pipeline/run.
import Foundation
import TiltCore

let args = CommandLine.arguments.dropFirst()
var path = "config/demo/head.csv"
var target = 1_000_000
var repeats = 3
var tsv = false
var it = args.makeIterator()
while let a = it.next() {
    switch a {
    case "--samples": target = it.next().flatMap { Int($0) } ?? 0
    case "--repeats": repeats = it.next().flatMap { Int($0) } ?? 0
    case "--tsv": tsv = true
    default: path = a
    }
}
guard target > 0, repeats > 0 else { print("--samples and --repeats take a positive number"); exit(1) }

guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
    print("cannot read \(path) (run from the repository root)"); exit(1)
}
var recording: [IMUSample] = []
for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
    do {
        if let s = try RecordingFormat.parse(line: line) { recording.append(s) }
    } catch {
        // A skipped row would make this and bench/pipeline/cores.cpp time different samples.
        print("\(path):\(number + 1): \(error)"); exit(1)
    }
}
guard let first = recording.first, let last = recording.last else { print("empty recording"); exit(1) }

// Repeat the recording end to end with continuous time until there are enough samples.
let span = last.t - first.t + (recording.count > 1 ? (last.t - first.t) / Int64(recording.count - 1) : 1)
var samples: [IMUSample] = []
samples.reserveCapacity(target)
var lap: Int64 = 0
while samples.count < target {
    for s in recording where samples.count < target {
        samples.append(IMUSample(t: s.t + lap * span, accel: s.accel, gyro: s.gyro))
    }
    lap += 1
}

let calibrator = Calibrator(IMUCalibration(accelOffset: Vector3(0.05, -0.02, 0.01), accelScale: Vector3(1.01, 0.99, 1.0),
                                           gyroBias: Vector3(0.001, -0.002, 0.0005)))

/// What one timed loop does per sample.
enum Stage: String, CaseIterable {
    case estimator = "estimator alone"
    case calibratedEstimator = "calibration + estimator"
    case withJSON = "calibration + estimator + JSON (2 events)"
}

/// One pass over all samples with a fresh estimator; the checksum consumes every output.
@MainActor func run(_ stage: Stage) -> (ns: Double, checksum: Double) {
    var estimator = AttitudeEstimator()
    var checksum = 0.0
    let clock = ContinuousClock()
    let start = clock.now
    switch stage {
    case .estimator:
        for raw in samples { checksum += estimator.update(raw).q.w }
    case .calibratedEstimator:
        for raw in samples { checksum += estimator.update(calibrator.apply(raw)).q.w }
    case .withJSON:
        var bytes = 0
        for (i, raw) in samples.enumerated() {
            let s = calibrator.apply(raw)
            let a = estimator.update(s)
            bytes &+= Event(.sample, t: s.t, .sample(s)).encode(seq: UInt64(2 * i)).count
            bytes &+= Event(.attitude, t: a.t, .attitude(a)).encode(seq: UInt64(2 * i + 1)).count
        }
        checksum = Double(bytes)
    }
    let d = start.duration(to: clock.now)
    let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    return (seconds * 1e9 / Double(samples.count), checksum)
}

if !tsv { print("pipeline benchmark: \(samples.count) samples from \(path) (\(recording.count) per lap)") }
_ = run(.withJSON)  // warm-up
var best = [Stage: Double](), checksum = [Stage: Double]()
// Stages interleaved, so a burst of load on the machine spreads over all of them.
for _ in 0..<repeats {
    for stage in Stage.allCases {
        let r = run(stage)
        best[stage] = min(best[stage] ?? .infinity, r.ns)
        checksum[stage, default: 0] += r.checksum
    }
}
for stage in Stage.allCases {
    let ns = String(format: "%.1f", best[stage]!)
    if tsv {
        print("tiltd\t\(stage.rawValue)\t\(ns)\t\(checksum[stage]!)")
    } else {
        print("\((stage.rawValue + ":").padding(toLength: 44, withPad: " ", startingAt: 0))\(ns) ns/sample (best of \(repeats))")
    }
}
if !tsv { print("(checksums \(Stage.allCases.map { String(format: "%.6g", checksum[$0]!) }.joined(separator: " ")))") }
