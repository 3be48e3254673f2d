import TiltCore
import TiltSensors

/// The IMU and attitude: counts and times samples, publishes `sample` and `attitude` lines,
/// owns `[imu]` and `[calibration]` (a change restarts the sampler, prepared before the
/// reload commits). Loop-confined (see `Component`).
final class AttitudeComponent: Component {
    let context: EngineContext
    /// The sampler, when one runs (not in unit tests).
    let sampler: (any SamplerControl)?
    private(set) var samplesSeen = 0
    private(set) var samplesSkipped = 0
    private var rateMeter = RateMeter()

    init(context: EngineContext, sampler: (any SamplerControl)?) {
        self.context = context; self.sampler = sampler
    }

    /// Measured sample rate over the last second, Hz.
    var rateHz: Double? { rateMeter.rateHz }

    /// A calibrated sample and the attitude computed from it.
    func ingest(sample: IMUSample, attitude: Attitude) {
        samplesSeen += 1
        rateMeter.add(sample.t)
        context.lastAttitude = attitude
        context.publish(Event.sample(sample))
        context.publish(Event.attitude(attitude))
    }

    /// The sampler skipped `n` samples because the loop was behind.
    func ingest(skipped n: Int) {
        samplesSkipped += n
        context.logger.warning("event loop behind: skipped \(n) samples (\(samplesSkipped) in all)")
    }

    func addStatus(to o: inout JSONObject) {
        o["samples"] = .int(Int64(samplesSeen))
        if let r = rateMeter.rateHz { o["sample_rate_hz"] = .number((r * 10).rounded() / 10) }
    }

    // MARK: reload

    /// What applying a new `[imu]`/`[calibration]` needs: a sampler built (not started) off the loop.
    struct Staged: Sendable {
        var pipeline: SensorPipeline?
    }

    /// Off the loop: builds the new sampler when its settings changed.
    static func stage(
        _ new: Configuration, current: Configuration, sampler: (any SamplerControl)?
    ) throws(ConfigError) -> Staged {
        guard let sampler,
            new.imu != current.imu || new.calibration != current.calibration
                || new.biasPersistence != current.biasPersistence
        else { return Staged() }
        return Staged(pipeline: try sampler.prepare(new))
    }

    /// On the loop: hands the new sampler over (the old one stops on the sampler's own queue).
    func apply(_ staged: Staged, notes: inout [String]) {
        guard let p = staged.pipeline, let sampler else { return }
        sampler.replace(with: p)
        notes.append("sampler restarted")
    }
}

/// The running sampler as the engine sees it (see `SamplerService`).
public protocol SamplerControl: Sendable {
    /// Builds, without starting, the sampler `config` describes; throws a `ConfigError` naming
    /// the key when it cannot be made.
    func prepare(_ config: Configuration) throws(ConfigError) -> SensorPipeline
    /// Stops the running sampler and starts `pipeline`, off the caller's thread.
    func replace(with pipeline: SensorPipeline)
}

/// Measures the sample rate from sample times over the last ~second.
struct RateMeter {
    private var times: [Nanoseconds] = []
    private var head = 0

    mutating func add(_ t: Nanoseconds) {
        times.append(t)
        // Keep about one second; compact occasionally instead of shifting every sample.
        while head < times.count, t - times[head] > 1_000_000_000 { head += 1 }
        if head > 4096 { times.removeFirst(head); head = 0 }
    }

    var rateHz: Double? {
        let n = times.count - head
        guard n >= 2 else { return nil }
        let span = Double(times[times.count - 1] - times[head]) * 1e-9
        return span > 0 ? Double(n - 1) / span : nil
    }
}

// MARK: [imu]

extension Configuration {
    /// `[imu]`: which IIO device(s) and how fast.
    public struct IMU: Sendable, Equatable {
        /// "auto", an IIO device name, or "accel_name+gyro_name" for split devices.
        public var device = "auto"
        /// Samples per second asked of the device, Hz.
        public var rateHz: Double = 60
        /// Overrides the mount matrix the driver reports.
        public var mountMatrix: Matrix3?
        /// Samples per kernel buffer; nil picks ~10 ms worth.
        public var bufferSamples: Int?
        /// "auto", "buffered" or "polled": how the device is read (`IIOReadMode`).
        public var mode = "auto"
        /// The values `mode` may take.
        public static let modes = ["auto", "buffered", "polled"]
        /// The span each gyro sample averages, as a fraction of the sample period
        /// (`AttitudeEstimator.Parameters.rateWindow`): 1 for a sensor read at its own output
        /// rate, less for one whose chip runs faster than it is read (docs/fusion.md).
        public var rateWindow: Double = 1
        /// The estimator's parameters this section sets: the daemon's sampler and `tiltd judge`
        /// both build their estimator from it.
        public var fusionParameters: AttitudeEstimator.Parameters {
            var p = AttitudeEstimator.Parameters()
            p.rateWindow = rateWindow
            return p
        }
        /// The defaults.
        public init() {}
    }

    mutating func readIMU(_ t: inout TableReader) throws(ConfigError) {
        imu.device = try t.string("device", default: imu.device)
        if imu.device.isEmpty { throw t.error("device", "must not be empty (use \"auto\")") }
        imu.rateHz = try t.double("rate_hz", default: imu.rateHz, in: 10...1000)
        if let m = try t.doubles("mount_matrix", count: 9, in: -1...1) {
            let mm = Matrix3(rowMajor: m)!
            if abs(abs(mm.determinant) - 1) > 0.05 {
                throw t.error("mount_matrix", "must be a rotation (|det| = 1), det is \(mm.determinant)")
            }
            imu.mountMatrix = mm
        }
        if t.has("buffer_samples") { imu.bufferSamples = try t.int("buffer_samples", default: 1, in: 1...4096) }
        imu.mode = try t.string("mode", default: imu.mode, allowed: IMU.modes)
        imu.rateWindow = try t.double("rate_window", default: imu.rateWindow, in: 0...1)
    }

    var imuTOML: String {
        var out =
            "[imu]\ndevice = \(TOMLText.quote(imu.device))\nrate_hz = \(imu.rateHz)\nmode = \(TOMLText.quote(imu.mode))\n"
        if let m = imu.mountMatrix {
            out += "mount_matrix = \(m.rowMajor)\n"
        } else {
            out += "# mount_matrix: unset, the driver's\n"
        }
        if let b = imu.bufferSamples {
            out += "buffer_samples = \(b)\n"
        } else {
            out += "# buffer_samples: unset, about 10 ms of samples\n"
        }
        out += "rate_window = \(imu.rateWindow)\n"
        return out
    }
}
