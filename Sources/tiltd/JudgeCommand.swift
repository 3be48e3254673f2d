// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import TiltCommandLine
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltRecordings
import TiltSensors
import TiltService

/// `tiltd judge`: one round of the game over a recording, as fast as the CPU allows, through
/// the daemon's own front end (mount matrix, calibration), estimator and game.
struct Judge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play one round of the game over a recording and print every game event and a summary.",
        discussion: """
            Uses the config's [imu] mount_matrix, its calibration file (including the head frame from \
            `tiltd calibrate neutral`) and its [game] rules and head_frame (a frame learned from wear \
            when none is calibrated), exactly as the daemon would. Without \
            --config the defaults apply (and /etc/tiltd/tiltd.toml is not read). The round lasts the \
            whole recording unless --round-s says otherwise. Prints `game` lines, then a summary.
            """)

    @Option(help: "Recording (tiltd's CSV or a BROAD CSV, optionally gzipped; `tiltd import` converts others).")
    var `in`: String

    @Option(help: "Configuration file (default: built-in defaults).")
    var config: String?

    @Option(help: "Vocabulary for the round: tilt or nod (default: the config's [game] gestures).")
    var gestures: String?

    @Option(help: "Round length, seconds (default: the whole recording).")
    var roundS: Double?

    @Option(help: "Deck shuffle seed.")
    var seed: UInt64 = 1

    @Flag(help: "Print only the summary.")
    var quiet = false

    func run() throws {
        var options = GameJudge.Options()
        options.learnsHeadFrame = Configuration.Game().learnsHeadFrame
        if let path = config {
            let c: Configuration
            do { c = try Configuration.load(path: path) } catch {
                throw ValidationFailure(message: "tiltd judge: \(error)")
            }
            options.rules = c.game.rules
            options.frontEnd = SampleFrontEnd(mount: c.imu.mountMatrix, calibration: c.calibration)
            options.fusion = c.imu.fusionParameters
            options.learnsHeadFrame = c.game.learnsHeadFrame
        }
        if let g = gestures {
            guard let v = TiltGame.Rules.Gestures(rawValue: g) else {
                throw ValidationFailure(message: "tiltd judge: --gestures must be tilt or nod, got \"\(g)\"")
            }
            options.gestures = v
        }
        if let r = roundS {
            guard TiltGame.Rules.roundSecondsRange.contains(r) else {
                throw ValidationFailure(
                    message: "tiltd judge: --round-s must be within \(CommandCatalogue.roundSecondsText)")
            }
            options.roundSeconds = r
        }
        options.seed = seed
        let samples: [IMUSample]
        do { samples = try DatasetReader.read(path: `in`).samples } catch {
            throw ValidationFailure(message: "tiltd judge: \(error)")
        }
        guard !samples.isEmpty else { throw ValidationFailure(message: "tiltd judge: \(`in`): no samples") }
        let (events, s): ([GameEvent], GameJudge.Summary)
        do { (events, s) = try GameJudge.play(samples, options: options) } catch {
            throw ValidationFailure(message: "tiltd judge: \(error.message)")
        }
        if !quiet {
            var out = [UInt8]()
            for (i, e) in events.enumerated() { out += e.event.encode(seq: UInt64(i + 1)) }
            StandardStream.output.write(out)
        }
        let vocabulary = (options.gestures ?? options.rules.gestures).rawValue
        let frame =
            options.frontEnd.calibrator.calibration.headFrame != nil
            ? "calibrated"
            : s.learner.frame != nil
                ? "learned from wear (by the end; head_frame lines say when)"
                : "assumed (no head frame in the calibration file, none learned)"
        print(
            "# \(`in`): \(s.samples) samples, \(cFormat("%.1f", s.seconds)) s; gestures \(vocabulary); orientation \(frame)"
        )
        print(
            "# prompts \(s.prompts), correct \(s.correct), skip \(s.skip), under 0.25 s \(s.fasterThanReaction), while still \(s.whileStill), "
                + "median prompt → answer " + (s.medianDecisionMs.map { cFormat("%.0f ms", $0) } ?? "—"))
        print(
            "# detector over the whole recording: \(s.nodsDetected) nods, \(s.shakesDetected) shakes"
                + (s.orientationSuspect ? "; the head frame looked wrong at times (orientation_suspect)" : ""))
        let activities = Activity.allCases.compactMap { a in
            s.activitySeconds[a.rawValue].map { "\(a.rawValue) \(cFormat("%.1f", $0)) s" }
        }
        print("# activity: " + activities.joined(separator: ", "))
    }
}

/// `tiltd import`: foreign sensor logs to tiltd's recording format.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert another tool's IMU log to a tiltd recording (CSV, SI units).",
        discussion: """
            Formats: st-mlc — STMicroelectronics MLC/Unico data logs: a header line, then \
            tab-separated A_X A_Y A_Z [mg] G_X G_Y G_Z [dps], no timestamps (--rate gives them). \
            broad — a BROAD dataset CSV (t,ax,ay,az,gx,gy,gz,…, t in seconds), optionally joined \
            row by row with its broad-mag file (mx,my,mz in µT after the gyro): with a field the \
            output is a recording v2 carrying it on every row that has one. \
            The output is written atomically; a malformed row is reported with its line number.
            """)

    @Option(help: "Input format: \((ForeignLogFormat.allCases.map(\.rawValue) + ["broad"]).joined(separator: ", ")).")
    var format: String

    @Option(help: "Sample rate, Hz, for formats without timestamps.")
    var rate: Double?

    @Argument(help: "The log to convert.")
    var input: String

    @Argument(help: "The recording to write.")
    var output: String

    func run() throws {
        if format == "broad" { return try importBROAD() }
        guard let f = ForeignLogFormat(rawValue: format) else {
            throw ValidationFailure(
                message:
                    "tiltd import: unknown format \"\(format)\" (known: \(ForeignLogFormat.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        guard let rate else {
            throw ValidationFailure(message: "tiltd import: --rate HZ is needed: \(format) logs carry no timestamps")
        }
        let text: String
        do { text = try FileIO.readText(input) } catch {
            throw ValidationFailure(
                message: "tiltd import: \(input): \(error.reason)")
        }
        let samples: [IMUSample]
        do { samples = try f.parse(text, rateHz: rate) } catch {
            throw ValidationFailure(message: "tiltd import: \(input): \(error)")
        }
        var out =
            RecordingFormat.banner
            + "\n# imported by tiltd import --format \(format) --rate \(rate) from \(PathName.lastComponent(of: input))\n"
            + RecordingFormat.header + "\n"
        out.reserveCapacity(samples.count * 64)
        for s in samples { out += RecordingFormat.format(s) + "\n" }
        do { try CalibrationFile.writeAtomically(Array(out.utf8), to: output) } catch {
            throw ValidationFailure(message: "tiltd import: \(error)")
        }
        print(
            "imported \(samples.count) samples (\(cFormat("%.1f", Double(samples.count) / rate)) s at \(rate) Hz) to \(output)"
        )
    }

    /// A BROAD CSV (its own timestamps; a field per row when joined with broad-mag) to a recording.
    private func importBROAD() throws {
        let d: DatasetReader.Dataset
        do { d = try DatasetReader.read(path: input) } catch {
            throw ValidationFailure(message: "tiltd import: \(error)")
        }
        guard d.format == .broad else {
            throw ValidationFailure(message: "tiltd import: \(input): not a BROAD CSV (its header starts with t_ns)")
        }
        let fields = d.magnetometer
        let v2 = fields != nil
        var out =
            (v2 ? RecordingFormat.bannerV2 : RecordingFormat.banner)
            + "\n# imported by tiltd import --format broad from \(PathName.lastComponent(of: input))\n"
            + (v2 ? RecordingFormat.headerV2 : RecordingFormat.header) + "\n"
        var written = 0
        for (i, s) in d.samples.enumerated() {
            // A row without a reading (nan) keeps its seven fields.
            let m = fields.map { $0[i] }.flatMap { $0.x.isFinite && $0.y.isFinite && $0.z.isFinite ? $0 : nil }
            if m != nil { written += 1 }
            out += RecordingFormat.format(s, field: m) + "\n"
        }
        do { try CalibrationFile.writeAtomically(Array(out.utf8), to: output) } catch {
            throw ValidationFailure(message: "tiltd import: \(error)")
        }
        print(
            "imported \(d.samples.count) samples\(v2 ? " and \(written) magnetometer samples" : "") from a BROAD CSV to \(output)"
        )
    }
}
