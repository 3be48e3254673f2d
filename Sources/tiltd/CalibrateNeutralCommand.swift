// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import TiltCommandLine
import TiltCore
import TiltPlatform
import TiltService

/// `tiltd calibrate neutral`: look ahead and hold still (the neutral pose), then nod down once
/// (the head frame: which way is forward and up on the wearer). Writes `neutral`, `head_up` and
/// `head_forward` to the calibration file.
struct CalibrateNeutral: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "neutral",
        abstract: "Record the wearer's neutral head pose and, from one nod down, which way is forward.",
        discussion: """
            Wear the device, look straight ahead and hold still; when asked, nod down once and come \
            back. The still pose is the game's neutral pose; the nod teaches it the head's axes, so \
            the board may sit any way round (cap, headphone band, glasses, phone). See docs/game.md. \
            Exit status: 0 when the pose and the head frame were written (or the pose alone with \
            --skip-nod or without a gyroscope); 3 when the pose was written but the head frame was \
            not learnt (the reason is printed; the frame already in the file, or the assumed \
            convention, stays in use); 1 when nothing was written.
            """)

    /// The exit status when the pose was written but the head frame was not learnt.
    static let headFrameNotLearnt: Int32 = 3

    @OptionGroup var common: CalibrationOptions

    @Option(help: "Seconds to hold the neutral pose.")
    var seconds: Double = 3

    @Option(help: "Seconds for the attitude estimator to settle before the pose counts.")
    var settle: Double = 1

    @Option(help: "Live: give up after this many seconds.")
    var timeout: Double = 60

    @Flag(help: "Only the still pose; keep the head frame already in the calibration file.")
    var skipNod = false

    func validate() throws {
        guard (0.5...60).contains(seconds) else { throw ValidationError("--seconds must be within 0.5…60") }
        guard (0...30).contains(settle) else { throw ValidationError("--settle must be within 0…30") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    func run() throws {
        let session = try CalibrationSession(common)
        if session.isLive {
            print("Look straight ahead, head level, and hold still for \(cFormat("%.0f", seconds)) s…")
        }
        final class State {
            var capture: NeutralPoseCapture; var calibrator: Calibrator; var estimator = AttitudeEstimator()
            var tilt = AccelTiltEstimator()
            var frame = HeadFrameCalibration()
            var noGyro = false
            var first: Nanoseconds?; var last = ""; var askedForNod = false
            init(_ c: NeutralPoseCapture, _ cal: Calibrator) { capture = c; calibrator = cal }
        }
        let st = State(
            NeutralPoseCapture(seconds: seconds, settleSeconds: settle), Calibrator(session.config.calibration))
        // The frame is fed from the first sample, so its clock starts with the settle and the hold.
        st.frame.nodTimeoutSeconds = max(15, settle + seconds + 10)
        let live = session.isLive, timeout = self.timeout, seconds = self.seconds, skipNod = self.skipNod
        _ = try session.stream { raw in
            if st.first == nil { st.first = raw.t }
            if live && Double(raw.t - st.first!) * 1e-9 > timeout { return true }
            let s = st.calibrator.apply(raw)
            let a = s.hasGyro ? st.estimator.update(s) : st.tilt.update(s)
            // The nod is read from the gyro: an accelerometer-only IMU records the pose alone.
            if !s.hasGyro { st.noGyro = true }
            // The frame sees every sample: the look-ahead hold is its stillness too, so a nod
            // made soon after the start (before the pose is complete) is not missed.
            let frame: HeadFrameCalibration.Progress = skipNod || st.noGyro ? .done(.assumed) : st.frame.add(s)
            switch st.capture.add(s, attitude: a.q) {
            case .waiting(let why):
                session.status("  waiting for stillness" + (why.map { " (\($0))" } ?? "") + "…", last: &st.last)
                return false
            case .holding(let held):
                session.status(cFormat("  still for %.1f / %.1f s", held, seconds), last: &st.last)
                return false
            case .refused: return true
            case .done:
                switch frame {
                case .done, .refused: return true
                default:
                    if !st.askedForNod {
                        st.askedForNod = true
                        session.endStatus(&st.last)
                        if live { print("Now nod down once, and come back up.") }
                    }
                    return false
                }
            }
        }
        session.endStatus(&st.last)
        let pose: Quaternion
        switch st.capture.finish() {
        case .refused(let e):
            throw ValidationFailure(message: "tiltd calibrate neutral: \(e); nothing written")
        case .waiting, .holding:
            throw ValidationFailure(message: "tiltd calibrate neutral: no result")
        case .done(let r):
            pose = r.q
            print(
                cFormat(
                    "neutral pose: roll %.1f°, pitch %.1f° (yaw %.1f°, arbitrary without a magnetometer)",
                    pose.roll * 180 / .pi, pose.pitch * 180 / .pi, pose.yaw * 180 / .pi))
            print(
                cFormat(
                    "  quaternion [w, x, y, z] = [%.6f, %.6f, %.6f, %.6f]; held %.1f s, spread %.2f°", pose.w,
                    pose.x, pose.y, pose.z, r.seconds, r.spreadDegrees))
        }
        if skipNod || st.noGyro {
            if st.noGyro {
                print(
                    "no gyroscope: the head frame cannot be learnt from a nod; the convention (+y up, +z back) stays assumed"
                )
            }
            try session.save("neutral", note: "neutral pose (no nod)") { $0.neutral = pose }
            return
        }
        switch st.frame.finish() {
        case .done(let f):
            print("head frame: forward \(vec(f.forward, 3)), up \(vec(f.up, 3)), left \(vec(f.left, 3)) (sensor frame)")
            try session.save("neutral, head_up, head_forward", note: "neutral pose and head frame from one nod") {
                $0.neutral = pose; $0.headUp = f.up; $0.headForward = f.forward
            }
        case .refused(let why):
            // The pose is good on its own and is written; the failure is the exit status and a
            // line on stderr, so neither a script nor a person takes the frame as learnt.
            try session.save("neutral", note: "neutral pose (the nod was not usable)") { $0.neutral = pose }
            let kept =
                session.config.calibration.headFrame == nil
                ? "the assumed convention (+y up, +z back) stays in use"
                : "the head frame in the calibration file is kept"
            StandardStream.error.write(
                "tiltd calibrate neutral: head frame not learnt: \(why); \(kept) (run again: look ahead, then nod down once)\n"
                    .utf8)
            throw ExitCode(Self.headFrameNotLearnt)
        default:
            break
        }
    }
}
