// Pipeline benchmark: recorded samples through calibration + fusion + JSON encoding of the
// `sample` and `attitude` events, as the daemon does per sample. Prints ns per sample.
//
//   swift run -c release PipelineBench [recording.csv] [--samples N]
import Foundation
import TiltCore

let args = CommandLine.arguments.dropFirst()
var path = "config/demo/head.csv"
var target = 1_000_000
var it = args.makeIterator()
while let a = it.next() {
    if a == "--samples", let n = it.next().flatMap({ Int($0) }) { target = n } else { path = a }
}

guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
    print("cannot read \(path) (run from the repository root)"); exit(1)
}
var recording: [IMUSample] = []
for line in text.split(separator: "\n") {
    if let s = try? RecordingFormat.parse(line: line) { recording.append(s) }
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

@MainActor func run(encode: Bool) -> (ns: Double, checksum: Int) {
    var estimator = AttitudeEstimator()
    var bytes = 0
    let clock = ContinuousClock()
    let start = clock.now
    for (i, raw) in samples.enumerated() {
        let s = calibrator.apply(raw)
        let a = estimator.update(s)
        if encode {
            bytes &+= Event(.sample, t: s.t, .sample(s)).encode(seq: UInt64(2 * i)).count
            bytes &+= Event(.attitude, t: a.t, .attitude(a)).encode(seq: UInt64(2 * i + 1)).count
        } else {
            bytes &+= a.q.w > 2 ? 1 : 0
        }
    }
    let d = start.duration(to: clock.now)
    let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    return (seconds * 1e9 / Double(samples.count), bytes)
}

print("pipeline benchmark: \(samples.count) samples from \(path) (\(recording.count) per lap)")
_ = run(encode: true)  // warm-up
var fusionOnly: [Double] = [], full: [Double] = []
var checksum = 0
for _ in 0..<3 {
    let f = run(encode: false); fusionOnly.append(f.ns); checksum &+= f.checksum
    let r = run(encode: true); full.append(r.ns); checksum &+= r.checksum
}
func fmt(_ x: Double) -> String { String(format: "%.1f", x) }
print("calibration + fusion:                     \(fmt(fusionOnly.min()!)) ns/sample (best of 3)")
print("calibration + fusion + JSON (2 events):   \(fmt(full.min()!)) ns/sample (best of 3)")
print("(checksum \(checksum))")
