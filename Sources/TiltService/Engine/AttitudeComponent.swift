// SPDX-License-Identifier: Apache-2.0
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltSensors

/// The IMU and attitude: counts and times samples, publishes `sample` and `attitude` lines (with
/// the heading: `HeadingProvider`, fed the fixes after the course filter), owns `[imu]` and
/// `[calibration]` (a change restarts the sampler, prepared before the reload commits).
/// Loop-confined (see `Component`).
final class AttitudeComponent: Component {
    let context: EngineContext
    /// The sampler, when one runs (not in unit tests).
    let sampler: (any SamplerControl)?
    private(set) var samplesSeen = 0
    private(set) var samplesSkipped = 0
    private var rateMeter = RateMeter()
    /// The heading chain (magnetometer → course → none) and the declination at the latest fix.
    private(set) var heading = HeadingProvider()
    /// The latest attitude's heading source (for `status`).
    private var lastSource: HeadingSource?
    /// The head frame in use (the game's): the heading is where its forward axis points.
    var headFrame: () -> HeadFrame = { .assumed }

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
        let h = heading.heading(for: attitude, frame: headFrame())
        lastSource = h.source
        context.publish(Event.attitude(attitude, heading: h))
    }

    /// A fix after the course filter: its course (while moving) and the declination where and
    /// when it was taken. Its age is counted on the IMU's time line from the latest sample.
    func ingest(fix: Fix) {
        heading.ingest(fix: fix, at: context.lastAttitude?.t)
        seedReference()
    }

    /// The reference last given to the sampler (µT, rad).
    private(set) var seededReference: (strength: Double, dip: Double)?

    /// Gives the sampler the field the model expects at the fix, when it is the first or differs
    /// from the last one given by over 0.5 % in strength or 0.5° in dip (a journey of tens of
    /// kilometres or more): in between, the estimator's own refinement of it from the clean field
    /// is not overwritten with the same model value fix after fix.
    private func seedReference() {
        guard case .known(let f, _) = heading.declination else { return }
        let strength = f.total / 1000, dip = f.inclination * .pi / 180
        if let last = seededReference, abs(strength - last.strength) <= 0.005 * last.strength,
            abs(dip - last.dip) <= 0.5 * .pi / 180
        {
            return
        }
        seededReference = (strength, dip)
        guard let sampler else { return }
        sampler.seedMagneticReference(strength: strength, dip: dip)
        let r = { (x: Double, scale: Double) in (x * scale).rounded() / scale }
        context.logger.info(
            "magnetic reference from \(heading.model.name) at the fix: \(r(strength, 10)) µT, dip \(r(f.inclination, 10))°"
        )
    }

    /// The sampler skipped `n` samples because the loop was behind.
    func ingest(skipped n: Int) {
        samplesSkipped += n
        context.logger.warning("event loop behind: skipped \(n) samples (\(samplesSkipped) in all)")
    }

    func addStatus(to o: inout JSONObject) {
        o["samples"] = .int(Int64(samplesSeen))
        if let r = rateMeter.rateHz { o["sample_rate_hz"] = .number((r * 10).rounded() / 10) }
        o["heading"] = .object(headingStatus)
    }

    /// `status`'s `heading`: the latest source, the model, and its declination at the latest fix
    /// or why there is none.
    var headingStatus: JSONObject {
        var o = JSONObject()
        o["source"] = .string((lastSource ?? .none).rawValue)
        let model = heading.model
        o["model"] = .string(model.name)
        switch heading.declination {
        case .unknown: break
        case .known(let f, _):
            o["declination_deg"] = .number((f.declination * 100).rounded() / 100)
        case .outsideModel(let year):
            let valid = model.validYears
            o["model_note"] = .string(
                "the fix's date (\(Self.format(year))) is outside \(model.name) "
                    + "(\(Self.format(valid.lowerBound))–\(Self.format(valid.upperBound))): no declination, "
                    + "so no true heading from the magnetometer and no magnetic heading from the course")
        }
        return o
    }

    /// A decimal year to two decimals ("2024.34", "2030.0").
    private static func format(_ year: Double) -> String { "\((year * 100).rounded() / 100)" }

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
    /// Seeds the fusion's magnetic reference (strength µT, dip rad positive down) for the
    /// running sampler and those that follow it.
    func seedMagneticReference(strength: Double, dip: Double)
    /// Where `calibrate.gyro` taps the mounted, uncalibrated samples; nil when it cannot.
    var rawTaps: RawSampleTaps? { get }
}

extension SamplerControl {
    /// No taps (a sampler that offers none: `calibrate.gyro` answers unavailable).
    public var rawTaps: RawSampleTaps? { nil }
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
