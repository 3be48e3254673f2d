// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform
import TiltRecordings

/// `tiltd plot`: a recording drawn for a person tuning thresholds or checking a calibration —
/// calibrated accelerometer and gyroscope, the attitude the daemon's estimator computes from
/// them, and (with `game`) the tilt angle against the game's zones with the decisions the game
/// would make, replayed through the same `TiltGame` the daemon runs.
public struct RecordingPlot {
    /// Applied to the raw samples before plotting and replaying.
    public var calibration: IMUCalibration
    /// The game rules the recording is replayed through (with `game`).
    public var rules: TiltGame.Rules
    /// True to add the tilt-angle panel and the game's decisions.
    public var game: Bool

    /// A game decision found while replaying the recording.
    public struct Decision: Equatable {
        /// The decision's kind (as the daemon's `game` lines name it).
        public var kind: String
        /// Seconds from the recording's first sample.
        public var t: Double
        /// The tilt angle at the decision, degrees.
        public var tiltDeg: Double
        /// The prompt on screen when the decision was made.
        public var prompt: String
    }

    /// A plot using `calibration`, replaying `rules` when `game` is true.
    public init(calibration: IMUCalibration = .none, rules: TiltGame.Rules = .init(), game: Bool) {
        self.calibration = calibration; self.rules = rules; self.game = game
    }

    /// Builds the chart for `samples` (raw, as recorded) titled `title`; also returns the
    /// decisions drawn (empty without `game`).
    public func chart(samples: [IMUSample], title: String) throws -> (SVGChart, [Decision]) {
        guard let first = samples.first else { throw PlotError("the recording has no samples") }
        let calibrator = Calibrator(calibration)
        var estimator = AttitudeEstimator()
        let n = samples.count
        var t = [Double](), ax = [Double](), ay = [Double](), az = [Double](), gx = [Double](), gy = [Double](),
            gz = [Double]()
        var roll = [Double](), pitch = [Double](), yaw = [Double](), tilt = [Double]()
        t.reserveCapacity(n)
        let deg = 180 / Double.pi
        var g = game ? try makeGame() : nil
        var decisions: [Decision] = []
        var spans: [SVGChart.Span] = []
        var shown: (t: Double, prompt: String)?
        let t0 = first.t
        var roundStart: Nanoseconds?
        for raw in samples {
            let s = calibrator.apply(raw)
            let a = estimator.update(s)
            // In Double: recording times from a file may be any Int64, and their difference overflow.
            let ts = (Double(s.t) - Double(t0)) * 1e-9
            t.append(ts)
            ax.append(s.accel.x); ay.append(s.accel.y); az.append(s.accel.z)
            gx.append(s.gyro.x * deg); gy.append(s.gyro.y * deg); gz.append(s.gyro.z * deg)
            roll.append(a.q.roll * deg); pitch.append(a.q.pitch * deg); yaw.append(a.q.yaw * deg)
            guard var game = g else { continue }
            if roundStart == nil || game.phase == .idle {
                // One long round from the first sample (rounds last at most an hour: start another).
                let left = (Double(samples.last!.t) - Double(s.t)) * 1e-9
                if left >= 1 {
                    let range = TiltGame.Rules.roundSecondsRange
                    _ = try game.start(
                        at: s.t, roundSeconds: min(range.upperBound, max(range.lowerBound, left + 1)), deck: Self.deck)
                    roundStart = s.t
                }
            }
            for e in game.update(a) {
                switch e.kind {
                case .prompt: shown = (ts, e.prompt ?? "")
                case .correct, .skip:
                    decisions.append(
                        Decision(kind: e.kind.rawValue, t: ts, tiltDeg: e.tiltDeg ?? .nan, prompt: e.prompt ?? ""))
                    if let sh = shown { spans.append(.init(from: sh.t, to: ts, label: sh.prompt)) }
                    shown = nil
                default: break
                }
            }
            tilt.append(game.lastTilt ?? .nan)
            g = game
        }
        if let sh = shown, let last = t.last { spans.append(.init(from: sh.t, to: last, label: sh.prompt)) }

        var panels = [
            SVGChart.Panel(
                title: "accelerometer, calibrated", unit: "m/s²",
                series: [
                    .init(name: "x", color: "#d62728", t: t, y: ax), .init(name: "y", color: "#2ca02c", t: t, y: ay),
                    .init(name: "z", color: "#1f77b4", t: t, y: az),
                ]),
            SVGChart.Panel(
                title: "gyroscope, calibrated", unit: "°/s",
                series: [
                    .init(name: "x", color: "#d62728", t: t, y: gx), .init(name: "y", color: "#2ca02c", t: t, y: gy),
                    .init(name: "z", color: "#1f77b4", t: t, y: gz),
                ]),
            SVGChart.Panel(
                title: "attitude (Z-Y-X Euler angles)", unit: "°",
                series: [
                    .init(name: "roll", color: "#d62728", t: t, y: roll),
                    .init(name: "pitch", color: "#2ca02c", t: t, y: pitch),
                    .init(name: "yaw", color: "#1f77b4", t: t, y: yaw),
                ], yRange: -180...180),
        ]
        if game {
            var p = SVGChart.Panel(
                title: "game: tilt angle (\(rules.mode.rawValue)), zones and decisions", unit: "°",
                series: [.init(name: "tilt", color: "#333333", t: t, y: tilt)], yRange: 0...180)
            let (correctSide, skipSide) = rules.swapSides ? ("skip", "correct") : ("correct", "skip")
            p.bands = [
                .init(
                    from: 0, to: rules.lowThresholdDeg, color: rules.swapSides ? "#e67e22" : "#2e9d4f",
                    label: "\(correctSide) below \(SVGChart.label(rules.lowThresholdDeg))°"),
                .init(
                    from: rules.highThresholdDeg, to: 180, color: rules.swapSides ? "#2e9d4f" : "#e67e22",
                    label: "\(skipSide) above \(SVGChart.label(rules.highThresholdDeg))°"),
            ]
            p.markers = decisions.map {
                .init(
                    t: $0.t, y: $0.tiltDeg, kind: $0.kind,
                    label:
                        "\($0.kind) at \(cFormat("%.2f", $0.t)) s, tilt \(cFormat("%.1f", $0.tiltDeg))°: \($0.prompt)",
                    color: $0.kind == "correct" ? "#2e9d4f" : "#e67e22")
            }
            p.spans = spans
            panels.append(p)
        }
        return (SVGChart(title: title, panels: panels), decisions)
    }

    /// Prompts for the replayed round: numbered, so each decision can be told apart.
    static let deck: PromptDeck = try! PromptDeck(name: "plot", prompts: (1...2000).map { "prompt \($0)" })

    func makeGame() throws -> TiltGame {
        var game = try TiltGame(configuration: rules, seed: 1)
        if let n = calibration.neutral { _ = game.captureNeutral(Attitude(t: 0, q: n, atRest: true, gyroBias: .zero)) }
        return game
    }
}

/// A recording that cannot be plotted.
public struct PlotError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    /// An error with message `d`.
    public init(_ d: String) { description = d }
}
