import ArgumentParser
import FoundationEssentials
import Glibc
import TiltCommandLine
import TiltCore
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
            the board may sit any way round (cap, headphone band, glasses, phone). See docs/game.md.
            """)

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
        st.frame.nodTimeoutSeconds = max(15, seconds + 10)
        let live = session.isLive, timeout = self.timeout, seconds = self.seconds, skipNod = self.skipNod
        _ = try session.stream { raw in
            if st.first == nil { st.first = raw.t }
            if live && Double(raw.t - st.first!) * 1e-9 > timeout { return true }
            let s = st.calibrator.apply(raw)
            let a = s.hasGyro ? st.estimator.update(s) : st.tilt.update(s)
            // The nod is read from the gyro: an accelerometer-only IMU records the pose alone.
            if !s.hasGyro { st.noGyro = true }
            // The nod comes after the look-ahead hold: the head frame is measured from then on.
            let captured: Bool
            if case .done = st.capture.progress { captured = true } else { captured = false }
            let frame: HeadFrameCalibration.Progress =
                skipNod || st.noGyro ? .done(.assumed) : (captured ? st.frame.add(s) : .waitingForStill)
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
            // The pose is good on its own; the head frame already in the file (if any) is kept.
            print(
                "head frame not learnt: \(why); the head frame in the calibration file is kept (run again and nod down once)"
            )
            try session.save("neutral", note: "neutral pose (the nod was not usable)") { $0.neutral = pose }
        default:
            print(
                "head frame not learnt: no nod seen after the pose; the head frame in the calibration file is kept (run again and nod down once)"
            )
            try session.save("neutral", note: "neutral pose (no nod)") { $0.neutral = pose }
        }
    }
}
