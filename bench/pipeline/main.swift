// SPDX-License-Identifier: Apache-2.0
// Pipeline benchmark: recorded samples through what the daemon does per sample — calibration,
// fusion, the tilt game (a round always running, its events encoded), the heading and the JSON
// line of the `attitude` event every client gets. Prints ns per sample.
//
//   swift run -c release PipelineBench [recording.csv] [--samples N] [--repeats N] [--tsv]
//
// Loops over the same samples, each adding a stage: the estimator alone (the figure
// bench/pipeline/run sets next to the other filters' C/C++ cores); + calibration; + the game;
// + the heading and the attitude line (the daemon's whole per-sample path when no client watches
// raw samples);
// + the `sample` line too (encoded only while some client watches samples).
// --tsv prints "tiltd<TAB>name<TAB>ns per sample<TAB>checksum" lines for bench/pipeline/run.
import Foundation
import TiltCore
import TiltProtocol

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

let calibrator = Calibrator(
    IMUCalibration(
        accelOffset: Vector3(0.05, -0.02, 0.01), accelScale: Vector3(1.01, 0.99, 1.0),
        gyroBias: Vector3(0.001, -0.002, 0.0005)))

/// What one timed loop does per sample.
enum Stage: String, CaseIterable {
    case estimator = "estimator alone"
    case calibratedEstimator = "calibration + estimator"
    case withGame = "calibration + estimator + game"
    case withNodGame = "calibration + estimator + game, nod vocabulary (classifier)"
    case withJSON = "calibration + estimator + game + heading + attitude JSON"
    case withSampleJSON = "… + sample JSON (a client watches samples)"
}

/// A 200-prompt deck; a round lasts 60 s and the next starts as soon as one ends.
let deck = try! PromptDeck(name: "bench", prompts: (1...200).map { "prompt \($0)" })

/// What the hub does with each event: encodes it in stack memory and copies it once into the
/// line every client shares (here a raw allocation, freed at once; the hub's `SharedLine` also
/// allocates its small object). Returns the line's length.
func publish(_ e: Event, seq: UInt64) -> Int {
    e.withEncoded(seq: seq) { line in
        let shared = UnsafeMutableRawBufferPointer.allocate(byteCount: line.count, alignment: 1)
        defer { shared.deallocate() }
        shared.copyMemory(from: line)
        return shared.count
    }
}

/// One pass over all samples with a fresh estimator and game; the checksum consumes every output.
@MainActor func run(_ stage: Stage) -> (ns: Double, checksum: Double) {
    var estimator = AttitudeEstimator()
    var game = try! TiltGame(seed: 1)
    // The heading the daemon adds to every attitude line (no magnetometer, no fix: `none`).
    var heading = HeadingProvider()
    var checksum = 0.0
    var seq: UInt64 = 0
    let clock = ContinuousClock()
    let start = clock.now
    switch stage {
    case .estimator:
        for raw in samples { checksum += estimator.update(raw).q.w }
    case .calibratedEstimator:
        for raw in samples { checksum += estimator.update(calibrator.apply(raw)).q.w }
    case .withGame, .withNodGame, .withJSON, .withSampleJSON:
        let json = stage != .withGame && stage != .withNodGame
        let gestures: TiltGame.Rules.Gestures = stage == .withNodGame ? .nod : .tilt
        var bytes = 0
        for raw in samples {
            let s = calibrator.apply(raw)
            let a = estimator.update(s)
            if stage == .withSampleJSON {
                seq += 1
                bytes &+= publish(Event.sample(s), seq: seq)
            }
            if json {
                seq += 1
                bytes &+= publish(Event.attitude(a, heading: heading.heading(for: a, frame: game.headFrame)), seq: seq)
            }
            // As GameComponent feeds it: the attitude, the bias-corrected rate and the accelerometer.
            var events = game.update(a, rate: s.gyro - a.gyroBias, accel: s.accel)
            if game.roundID == nil {
                events += (try? game.start(at: a.t, roundSeconds: 60, gestures: gestures, deck: deck)) ?? []
            }
            for e in events {
                if json {
                    seq += 1
                    bytes &+= publish(e.event, seq: seq)
                } else {
                    bytes &+= 1
                }
            }
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
        print(
            "\((stage.rawValue + ":").padding(toLength: 62, withPad: " ", startingAt: 0))\(ns) ns/sample (best of \(repeats))"
        )
    }
}
if !tsv { print("(checksums \(Stage.allCases.map { String(format: "%.6g", checksum[$0]!) }.joined(separator: " ")))") }
