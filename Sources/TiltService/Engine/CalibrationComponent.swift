// SPDX-License-Identifier: Apache-2.0
import NIOCore
import Synchronization
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltSensors

/// `calibrate.gyro`: the daemon measures the gyro bias from the IMU it is already reading.
///
/// Why in the daemon: the running daemon holds the IMU's IIO buffer, and a second reader
/// (`tiltd calibrate` opening the device itself) is refused, so calibrating used to mean
/// stopping the service. The capture taps the sampler's mounted, uncalibrated samples
/// (`RawSampleTaps`) through the same `GyroBiasCalibration` the command line uses, and the reply
/// carries the result; the daemon writes nothing (under its unit /etc/tiltd is read-only):
/// `tiltd calibrate gyro` writes the calibration file and asks for a `reload`. One capture at a
/// time. Loop-confined (see `Component`).
final class CalibrationComponent: Component {
    let context: EngineContext
    let sampler: (any SamplerControl)?
    /// The capture in progress: its tap's id and the timer that ends it when samples stop.
    private var running: (tap: Int, timer: Scheduled<Void>)?
    /// Slack past settle + seconds before a capture without enough samples gives up.
    static let graceSeconds = 15.0

    init(context: EngineContext, sampler: (any SamplerControl)?) {
        self.context = context; self.sampler = sampler
    }

    let commands = ["calibrate.gyro"]

    func handle(_ command: Command, from client: ClientSession, reply: Reply) {
        guard let taps = sampler?.rawTaps else {
            return reply.fail(.unavailable, "this daemon has no IMU sampler to measure from")
        }
        guard running == nil else {
            return reply.fail(.unavailable, "a gyro calibration is already being measured; try again when it ends")
        }
        if let imu = context.statuses["imu"], imu.state != .streaming {
            return reply.fail(.unavailable, "the IMU is not streaming (\(imu.state.rawValue): \(imu.message))")
        }
        let seconds = command.number("seconds") ?? 5
        let settle = command.number("settle") ?? 1
        let previous = context.config.calibration.gyroBias
        let capture = Mutex(GyroCapture(seconds: seconds, settle: settle))
        let loop = context.loop
        let bound = NIOLoopBound((self, reply), eventLoop: loop)
        let id = taps.add { sample in
            guard let outcome = capture.withLock({ $0.add(sample) }) else { return false }
            loop.execute { bound.value.0.finish(outcome, reply: bound.value.1, previous: previous) }
            return true
        }
        let limit = settle + seconds + Self.graceSeconds
        let timer = loop.scheduleTask(in: .milliseconds(Int64(limit * 1000))) {
            taps.remove(id)
            let seen = capture.withLock { $0.samples }
            bound.value.0.finish(
                .refused(.unavailable, "only \(seen) IMU samples within \(Int(limit)) s; nothing measured"),
                reply: bound.value.1, previous: previous)
        }
        running = (id, timer)
        context.logger.notice(
            "calibrate.gyro: measuring the gyro bias for \(seconds) s after \(settle) s (hold the device still)")
    }

    /// Answers the capture's request once (the timer and the tap may both end it).
    private func finish(_ outcome: GyroCapture.Outcome, reply: Reply, previous: Vector3) {
        guard let r = running else { return }
        running = nil
        r.timer.cancel()
        sampler?.rawTaps?.remove(r.tap)
        switch outcome {
        case .refused(let code, let message):
            context.logger.notice("calibrate.gyro: \(message)")
            reply.fail(code, message)
        case .done(let result):
            context.logger.notice(
                "calibrate.gyro: bias \(result.bias.array) rad/s from \(result.samples) samples over \(result.seconds) s"
            )
            reply.ok([
                "gyro_bias": Self.vector(result.bias), "noise": .number(result.noise),
                "samples": .int(Int64(result.samples)), "seconds": .number(result.seconds),
                "previous": Self.vector(previous),
            ])
        }
    }

    static func vector(_ v: Vector3) -> JSONValue { .array(v.array.map { .number($0) }) }
}

/// One `calibrate.gyro` measurement over the sampler's samples: skips `settle` seconds of sample
/// time, then runs `GyroBiasCalibration` until it is done or refused.
struct GyroCapture: Sendable {
    /// How a capture ended.
    enum Outcome: Sendable {
        case done(GyroBiasCalibration.Result)
        case refused(ProtocolError.Code, String)
    }

    let settle: Double
    private var calibration: GyroBiasCalibration
    private var first: Nanoseconds?
    /// Samples seen (settling included).
    private(set) var samples = 0

    init(seconds: Double, settle: Double) {
        self.settle = settle
        calibration = GyroBiasCalibration(seconds: seconds)
    }

    /// Adds one mounted, uncalibrated sample; the outcome once there is one.
    mutating func add(_ s: IMUSample) -> Outcome? {
        samples += 1
        guard s.hasGyro else {
            return .refused(
                .needsGyro, "this IMU has no gyroscope (\(SourceStatus.noGyroscopeNote)); nothing to calibrate")
        }
        if first == nil { first = s.t }
        if Double(s.t - first!) * 1e-9 < settle { return nil }
        switch calibration.add(s) {
        case .measuring: return nil
        case .done(let r): return .done(r)
        case .refused(let e): return .refused(.calibrationRefused, "refused: \(e)")
        }
    }
}
