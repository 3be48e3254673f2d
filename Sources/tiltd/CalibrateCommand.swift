// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import TiltCommandLine
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltSensors
import TiltService

/// `tiltd calibrate gyro|accel|neutral|mag`: measure at the Pi (or from a recording) and save the
/// result to the calibration file named by the main config, which itself is never rewritten.
struct Calibrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the IMU's calibration and save it to the calibration file.",
        discussion: """
            Each step reads the live IMU (or a recording with --replay), prints what it measured and \
            writes only its own keys to the calibration file ([calibration] file in the main config, \
            default calibration.toml next to it), atomically. The main config file is never changed. \
            While the daemon runs (it holds the IMU), `gyro` has the daemon measure and then reload \
            the file; the other steps need the daemon stopped.
            """,
        subcommands: [CalibrateGyro.self, CalibrateAccel.self, CalibrateNeutral.self, CalibrateMag.self]
    )
}

struct CalibrateGyro: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gyro",
        abstract: "Measure the gyro bias: hold the device still; refuses if it moves.",
        discussion: """
            With the daemon running on the config's [socket] path, the daemon measures (it holds \
            the IMU; the calibrate.gyro command), and this command writes the result and asks the \
            daemon to reload it: run it as root (sudo), which may send the command and write \
            /etc/tiltd. Without a daemon there, it opens the IMU itself.
            """)

    @OptionGroup var common: CalibrationOptions

    @Option(help: "Seconds to hold still.")
    var seconds: Double = 5

    @Option(help: "Seconds to skip first (to let go of the device). Default: 1 live, 0 for a recording.")
    var settle: Double?

    func validate() throws {
        guard (1...120).contains(seconds) else { throw ValidationError("--seconds must be within 1…120") }
        if let settle, !(0...60).contains(settle) { throw ValidationError("--settle must be within 0…60") }
    }

    func run() throws {
        let session = try CalibrationSession(common)
        let skip = settle ?? (session.isLive ? 1 : 0)
        if session.isLive, let socket = try Self.runningDaemon(session.config) {
            return try runInDaemon(session, socket: socket, settle: skip)
        }
        if session.isLive {
            print("Put the device down (or hold it very still) for \(Int(saturating: seconds.rounded())) s…")
        }
        final class State {
            var cal: GyroBiasCalibration; var first: Nanoseconds?; var last = ""; var noGyro = false
            init(_ c: GyroBiasCalibration) { cal = c }
        }
        let st = State(GyroBiasCalibration(seconds: seconds))
        _ = try session.stream { s in
            if !s.hasGyro { st.noGyro = true; return true }
            if st.first == nil { st.first = s.t }
            if Double(s.t - st.first!) * 1e-9 < skip { return false }
            switch st.cal.add(s) {
            case .measuring(let done):
                session.status(cFormat("  still for %.1f / %.1f s", done, seconds), last: &st.last)
                return false
            case .done, .refused: return true
            }
        }
        session.endStatus(&st.last)
        if st.noGyro {
            throw ValidationFailure(
                message: "tiltd calibrate gyro: this IMU has no gyroscope "
                    + "(\(SourceStatus.noGyroscopeNote)); nothing to calibrate, nothing written")
        }
        switch st.cal.finish() {
        case .refused(let e):
            throw ValidationFailure(message: "tiltd calibrate gyro: refused: \(e); nothing written")
        case .measuring:
            throw ValidationFailure(message: "tiltd calibrate gyro: no result")
        case .done(let r):
            let deg = r.bias * (180 / .pi)
            print("gyro bias: \(vec(r.bias)) rad/s (\(vec(deg, 3)) °/s)")
            print(
                cFormat("  from %d samples over %.2f s still; noise %.4f rad/s RMS", r.samples, r.seconds, r.noise))
            print("  previous: \(vec(session.config.calibration.gyroBias)) rad/s")
            try session.save("gyro_bias", note: cFormat("%d samples, %.1f s", r.samples, r.seconds)) {
                $0.gyroBias = r.bias
            }
        }
    }
}

// MARK: - accel

struct CalibrateAccel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accel",
        abstract: "Six-position accelerometer calibration: hold each face up, still, in turn.")

    @OptionGroup var common: CalibrationOptions

    @Option(help: "Seconds each pose must be held still.")
    var hold: Double = 2

    @Option(help: "Live: stop after this many still poses (at least 6; 12 or more lets tiltd try a full 3×3 model).")
    var poses: Int = 6

    @Option(help: "Live: give up after this many seconds.")
    var timeout: Double = 300

    func validate() throws {
        guard (0.5...30).contains(hold) else { throw ValidationError("--hold must be within 0.5…30") }
        guard (6...60).contains(poses) else { throw ValidationError("--poses must be within 6…60") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    static func faceHint(_ f: AccelCalibration.Face) -> String {
        let axis = ["X", "Y", "Z"][f.axis]
        return
            "Place the device with \(f.rawValue) up (its \(axis) axis pointing \(f.sign > 0 ? "at the sky" : "at the floor")) and hold still…"
    }

    func run() throws {
        let session = try CalibrationSession(common)
        final class State {
            var cal: AccelCalibration; var first: Nanoseconds?; var last = ""; var prompted: AccelCalibration.Face?
            var timedOut = false
            init(_ c: AccelCalibration) { cal = c }
        }
        let st = State(AccelCalibration(holdSeconds: hold))
        let live = session.isLive
        let wanted = poses
        func prompt() {
            guard live else { return }
            if let next = st.cal.facesMissing.first {
                if st.prompted != next { print(Self.faceHint(next)); st.prompted = next }
            } else if st.cal.poses.count < wanted {
                print(
                    "All six faces done. Hold it still in any other orientation (\(st.cal.poses.count)/\(wanted) poses)…"
                )
            }
        }
        func progress() -> String {
            let done = AccelCalibration.Face.allCases.map {
                st.cal.facesDone.contains($0) ? "[\($0.rawValue)]" : " \($0.rawValue) "
            }
            return done.joined(separator: " ")
        }
        if live {
            print(
                "Six-position accelerometer calibration: hold the device still with each face up for \(cFormat("%.0f", hold)) s, in any order."
            )
        }
        prompt()
        let timeout = self.timeout
        let holdS = hold
        func handle(_ e: AccelCalibration.Event) {
            switch e {
            case .moving:
                session.status("  moving… \(progress())", last: &st.last)
            case .holding(let face, let s):
                let what = face.map { "\($0.rawValue) up" } ?? "between faces (tilt it so one face is flat)"
                session.status(
                    "  \(what): still \(cFormat("%.1f / %.1f s", s, holdS))  \(progress())", last: &st.last)
            case .refining:
                break
            case .captured(let p, let newFace):
                session.endStatus(&st.last)
                let what: String
                if let f = p.face {
                    what = newFace ? "\(f.rawValue) up" : "\(f.rawValue) up again (kept as extra data)"
                } else {
                    what = "a pose between faces (extra data for the cross-axis fit)"
                }
                print("  captured \(what): |a| = \(cFormat("%.3f", p.meanAccel.norm)) m/s²   faces \(progress())")
                prompt()
            }
        }
        let finished = try session.stream { s in
            if st.first == nil { st.first = s.t }
            if live && Double(s.t - st.first!) * 1e-9 > timeout { st.timedOut = true; return true }
            if let e = st.cal.add(s) { handle(e) }
            return live && st.cal.facesMissing.isEmpty && st.cal.poses.count >= wanted
        }
        if !finished, let e = st.cal.finish() { handle(e) }
        session.endStatus(&st.last)
        if st.timedOut { print("timed out after \(Int(saturating: timeout)) s") }

        let before = session.config.calibration
        let fit: AccelCalibration.Fit
        do { fit = try st.cal.fit(current: before) } catch {
            throw ValidationFailure(message: "tiltd calibrate accel: \(error); nothing written")
        }
        print("accel calibration (\(fit.model.rawValue)) from \(fit.poses) poses, \(fit.windows) still windows:")
        print("  offset \(vec(fit.offset, 4)) m/s²")
        print("  scale  \(vec(fit.scale, 5))")
        if let m = fit.matrix {
            print("  matrix \(m.rowMajor.map { cFormat("%.5f", $0) }.joined(separator: ", "))")
        }
        var line = cFormat(
            "  |g| residual (RMS of |a_cal| − g): %.4f m/s² before → %.4f m/s² after", fit.residualBefore,
            fit.residualAfter)
        if let full = fit.residualFull, fit.model == .perAxis {
            line += cFormat(" (full 3×3 model: %.4f, not enough better)", full)
        } else if fit.residualFull == nil {
            line += " (full 3×3 model needs \(AccelCalibration.posesForFullModel) poses)"
        }
        print(line)

        // A per-axis fit must also clear an accel_matrix, which would override the scale. If the main
        // config sets one, the file cannot remove it: write the diagonal so the fit takes effect.
        let fileHad = try? CalibrationFile.read(path: session.file)
        var matrix = fit.matrix
        if matrix == nil, before.accelMatrix != nil, fileHad?.accelMatrix == nil {
            let s = fit.scale
            matrix = Matrix3(Vector3(s.x, 0, 0), Vector3(0, s.y, 0), Vector3(0, 0, s.z))
        }
        let keys = "accel_offset, accel_scale" + (matrix != nil ? ", accel_matrix" : "")
        try session.save(
            keys,
            note: cFormat("%d poses, residual %.4f → %.4f m/s²", fit.poses, fit.residualBefore, fit.residualAfter)
        ) {
            $0.accelOffset = fit.offset; $0.accelScale = fit.scale; $0.accelMatrix = matrix
        }
    }
}

// MARK: - neutral: CalibrateNeutralCommand.swift
