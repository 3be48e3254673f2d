// SPDX-License-Identifier: Apache-2.0
// What tilt from the accelerometer alone costs, next to the 6-axis estimator, in one run:
//
//  1. BROAD (15 real trials with optical ground truth): inclination RMSE (the dataset's metric,
//     README there) of AttitudeEstimator (accel + gyro) and AccelTiltEstimator (gyro columns
//     ignored), on the same rows, at the full 285.7 Hz and at 57.1 Hz (every 5th raw row with its
//     own timestamp, as a 57 Hz sensor would deliver them).
//  2. head-gestures (real nods and shakes on headphones, 30 Hz): the tilt game's decisions in
//     relative mode (back axis +X) when fed by each estimator: how many, how many the accel-only
//     run shares with the 6-axis run (same kind within 0.5 s), and how much later they come.
//
// Usage: swift run -c release AccelOnlyBench [--datasets DIR] [--cutoff HZ] [--gate G]
// (normally through bench/accel-only/run).
import Foundation
import TiltCore

struct Options {
    var datasets = ProcessInfo.processInfo.environment["TILTD_DATASETS"] ?? "../shared/datasets"
    var tilt = AccelTiltEstimator.Parameters()

    init(_ args: [String]) {
        var i = 1
        func value() -> String {
            i += 1
            guard i < args.count else { fail("missing value for \(args[i - 1])") }
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--datasets": datasets = value()
            case "--cutoff": tilt.cutoffHz = Double(value()) ?? { fail("--cutoff expects a number") }()
            case "--gate": tilt.gate = Double(value()) ?? { fail("--gate expects a number") }()
            default: fail("unknown argument \(args[i])")
            }
            i += 1
        }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("AccelOnlyBench: \(message)\n".utf8))
    exit(2)
}

/// A BROAD trial: samples, reference (nil where tracking dropped out), scored flags.
struct Trial {
    var name: String
    var samples: [IMUSample] = []
    var reference: [Quaternion?] = []
    var scored: [Bool] = []

    init(path: String) {
        name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            .replacingOccurrences(of: ".csv", with: "")
        for line in gunzip(path).split(separator: "\n").dropFirst() {
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) ?? .nan }
            guard f.count >= 12 else { continue }
            samples.append(
                IMUSample(
                    t: Int64((f[0] * 1e9).rounded()), accel: Vector3(f[1], f[2], f[3]),
                    gyro: Vector3(f[4], f[5], f[6])))
            let q = Quaternion(w: f[7], x: f[8], y: f[9], z: f[10])
            reference.append([q.w, q.x, q.y, q.z].allSatisfy(\.isFinite) ? q : nil)
            scored.append(f[11] == 1)
        }
    }

    /// Inclination RMSE (degrees) of `estimate` run over every `divisor`-th row.
    func rmse(divisor: Int, _ estimate: (IMUSample) -> Quaternion) -> Double {
        var sum = 0.0, n = 0
        for i in stride(from: 0, to: samples.count, by: divisor) {
            let q = estimate(samples[i])
            guard scored[i], let ref = reference[i] else { continue }
            let e = q * ref.conjugate
            let angle = 2 * acos(min(1, (e.w * e.w + e.z * e.z).squareRoot()))
            sum += angle * angle; n += 1
        }
        return (sum / Double(max(n, 1))).squareRoot() * 180 / .pi
    }
}

func gunzip(_ path: String) -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", "exec gzip -dc -- \"$0\"", path]
    let pipe = Pipe()
    p.standardOutput = pipe
    do { try p.run() } catch { fail("gzip: \(error)") }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { fail("gzip -dc \(path) failed") }
    return String(decoding: data, as: UTF8.self)
}

func files(_ dir: String, suffix: String) -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
    let found = names.filter { $0.hasSuffix(suffix) }.sorted().map { "\(dir)/\($0)" }
    if found.isEmpty { fail("no *\(suffix) in \(dir) (set --datasets or TILTD_DATASETS)") }
    return found
}

func f2(_ x: Double) -> String { String(format: "%.2f", x) }

// MARK: - BROAD

func broad(_ options: Options) {
    let trials = files("\(options.datasets)/broad", suffix: ".csv.gz").map(Trial.init)
    print("BROAD: inclination RMSE, degrees (movement phases, reference present); 6-axis = accel + gyro,")
    print(
        "accel-only = the same rows with the gyro ignored (AccelTiltEstimator, cutoff \(options.tilt.cutoffHz) Hz, gate \(options.tilt.gate))"
    )
    print("")
    print("| trial | 6-axis 285.7 Hz | accel-only 285.7 Hz | 6-axis 57.1 Hz | accel-only 57.1 Hz |")
    print("|---|---|---|---|---|")
    var sums = [0.0, 0.0, 0.0, 0.0]
    for trial in trials {
        var row: [Double] = []
        for divisor in [1, 5] {
            var six = AttitudeEstimator()
            row.append(trial.rmse(divisor: divisor) { six.update($0).q })
            var tilt = AccelTiltEstimator(parameters: options.tilt)
            row.append(trial.rmse(divisor: divisor) { tilt.update(t: $0.t, accel: $0.accel).q })
        }
        for k in 0..<4 { sums[k] += row[k] }
        print("| \(trial.name) | " + row.map(f2).joined(separator: " | ") + " |")
    }
    print("| **mean** | " + sums.map { "**\(f2($0 / Double(trials.count)))**" }.joined(separator: " | ") + " |")
}

// MARK: - head gestures

/// Attitudes of one head-gesture log (30 Hz, mg and dps) through one estimator.
func headAttitudes(_ path: String, accelOnly: Bool, _ options: Options) -> [Attitude] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read \(path)") }
    var six = AttitudeEstimator()
    var tilt = AccelTiltEstimator(parameters: options.tilt)
    var out: [Attitude] = []
    for (k, line) in text.split(separator: "\n").dropFirst().enumerated() {
        let f = line.split(separator: "\t").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard f.count == 6 else { continue }
        let t = Int64(k) * 1_000_000_000 / 30
        let a = Vector3(f[0], f[1], f[2]) * (9.80665e-3)
        let g = Vector3(f[3], f[4], f[5]) * (.pi / 180)
        out.append(accelOnly ? tilt.update(t: t, accel: a) : six.update(IMUSample(t: t, accel: a, gyro: g)))
    }
    return out
}

/// The game's decisions (kind, time) over a whole log, one long round in relative mode.
func decisions(_ attitudes: [Attitude]) -> [(kind: String, t: Int64)] {
    var config = TiltGame.Rules()
    config.mode = .relative
    config.backAxis = Vector3(1, 0, 0)  // X points back when worn (the dataset's README)
    guard var game = try? TiltGame(configuration: config, seed: 1),
        let deck = try? PromptDeck(name: "bench", prompts: (1...2000).map { "p\($0)" }),
        let first = attitudes.first, let start = try? game.start(at: first.t, roundSeconds: 3600, deck: deck)
    else { fail("cannot start a game") }
    var events = start
    for a in attitudes { events += game.update(a) }
    return events.filter { $0.kind == .correct || $0.kind == .skip }.map { ($0.kind.rawValue, $0.t) }
}

func headGestures(_ options: Options) {
    print("")
    print("head-gestures: the tilt game's decisions (relative mode, back axis +X, default thresholds), 30 Hz;")
    print(
        "shared = accel-only decisions of the same kind within 0.5 s of a 6-axis one; delay = mean (accel-only − 6-axis) time of shared ones"
    )
    print("")
    print("| log | 6-axis correct/skip | accel-only correct/skip | shared | delay ms |")
    print("|---|---|---|---|---|")
    var totals = (six: 0, tilt: 0, shared: 0), delays: [Double] = []
    for path in files("\(options.datasets)/head-gestures", suffix: ".txt") {
        let six = decisions(headAttitudes(path, accelOnly: false, options))
        let tilt = decisions(headAttitudes(path, accelOnly: true, options))
        var used = Set<Int>(), shared = 0, delay = 0.0
        for d in six {
            if let j = tilt.indices.first(where: {
                !used.contains($0) && tilt[$0].kind == d.kind && abs(tilt[$0].t - d.t) <= 500_000_000
            }) {
                used.insert(j); shared += 1; delay += Double(tilt[j].t - d.t) / 1e6
            }
        }
        func counts(_ ds: [(kind: String, t: Int64)]) -> String {
            "\(ds.filter { $0.kind == "correct" }.count)/\(ds.filter { $0.kind == "skip" }.count)"
        }
        let name = (path as NSString).lastPathComponent
        print(
            "| \(name) | \(counts(six)) | \(counts(tilt)) | \(shared) | \(shared > 0 ? String(format: "%.0f", delay / Double(shared)) : "-") |"
        )
        totals.six += six.count; totals.tilt += tilt.count; totals.shared += shared
        if shared > 0 { delays.append(delay / Double(shared)) }
    }
    let meanDelay = delays.isEmpty ? 0 : delays.reduce(0, +) / Double(delays.count)
    print(
        "| **all** | **\(totals.six)** | **\(totals.tilt)** | **\(totals.shared)** | **\(String(format: "%.0f", meanDelay))** |"
    )
}

let options = Options(CommandLine.arguments)
broad(options)
headGestures(options)
