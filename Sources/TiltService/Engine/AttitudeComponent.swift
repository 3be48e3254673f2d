import TiltConfig
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
