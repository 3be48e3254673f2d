// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import TiltCommandLine
import TiltConfig
import TiltCore
import TiltPlatform
import TiltPlot
import TiltRecordings
import TiltSensors
import TiltService

/// `tiltd plot`: a recording as an SVG chart, for tuning thresholds and checking a calibration.
struct Plot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Draw a recording's accelerometer, gyroscope and attitude (and with --game the game's zones and decisions) as SVG.",
        discussion: """
            Applies the calibration and [game] rules of the config file when it exists (default \
            \(Configuration.defaultPath)), runs the daemon's attitude estimator and, with --game, \
            the tilt game over the samples, and writes one SVG file. Prints the decisions found.
            """)

    @Option(name: .customLong("in"), help: "Recording (tiltd CSV or a BROAD CSV, plain or .gz).")
    var input: String

    @Option(name: .customLong("out"), help: "SVG file to write ('-' for standard output).")
    var output: String

    @Flag(help: "Add the game panel: tilt angle, zones, prompts and decisions.")
    var game = false

    @Option(
        help:
            "Configuration file for the calibration and game rules (default: \(Configuration.defaultPath) if present).")
    var config: String?

    func run() throws {
        var cfg = Configuration()
        let path = config ?? Configuration.defaultPath
        if config != nil || FileManager.default.fileExists(atPath: path) {
            do { cfg = try Configuration.load(path: path) } catch {
                throw ValidationFailure(message: "tiltd plot: \(error)")
            }
        }
        let data: DatasetReader.Dataset
        do { data = try DatasetReader.read(path: input) } catch {
            throw ValidationFailure(message: "tiltd plot: \(error)")
        }
        let plot = RecordingPlot(calibration: cfg.calibration, rules: cfg.game.rules, game: game)
        let (chart, decisions) = try plot.chart(samples: data.samples, title: PathName.lastComponent(of: input))
        let svg = Data(chart.render().utf8)
        if output == "-" {
            StandardStream.output.write(svg)
        } else {
            do { try svg.write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
                throw ValidationFailure(message: "tiltd plot: cannot write \(output): \(error)")
            }
            let summary =
                game
                ? ", \(decisions.filter { $0.kind == "correct" }.count) correct and \(decisions.filter { $0.kind == "skip" }.count) skip decisions"
                : ""
            print("wrote \(output): \(data.samples.count) samples\(summary)")
            for d in decisions { print("\(cFormat("  %8.2f s", d.t))  \(d.kind)  tilt \(cFormat("%.1f", d.tiltDeg))°") }
        }
    }
}
