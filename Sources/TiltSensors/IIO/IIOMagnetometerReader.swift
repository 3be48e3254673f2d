// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Logging
import Synchronization
import TiltCore
import TiltPlatform

/// The magnetometer's loop beside the IMU's (`IIOSource` runs it on a thread of its own): finds the
/// magnetometer (`IIOMagnetometer`), polls it at its rate and emits `.magnetometer` samples
/// stamped with CLOCK_MONOTONIC at the middle of each read — the clock the IMU's samples are on
/// (polled, or buffered with `current_timestamp_clock` set to monotonic).
///
/// It comes and goes like the IMU, but on its own: a magnetometer that vanishes or fails is
/// reported as a `status` with source "magnetometer" and retried with backoff while the IMU keeps
/// streaming. With "auto" and no magnetometer present it stays silent (an IMU without one behaves
/// as before) and looks again now and then, in case one appears.
final class IIOMagnetometerReader: Sendable {
    /// `[imu] magnetometer`: "auto", a device name or id, or "none".
    let spec: String
    /// The IMU's `[imu] device`, so the magnetometer can be matched to it.
    let imuSpec: String
    let imuRateHz: Double
    let logger: Logger?

    /// How often "auto" looks again when no magnetometer is present, seconds.
    static let quietRetry = 10.0

    init(spec: String, imuSpec: String, imuRateHz: Double, logger: Logger?) {
        self.spec = spec; self.imuSpec = imuSpec; self.imuRateHz = imuRateHz; self.logger = logger
    }

    /// Reads until `stop`. `wake` is the IMU loop's wake-up pipe (stop pokes it; it is never
    /// drained, so both loops see it).
    func run(stop: StopSignal, wake: IIOWakeup, emit: @Sendable (SourceOutput) -> Void) {
        guard spec != "none" else { return }
        var backoff = Backoff()
        var announced = false
        if spec != "auto" {
            emit(.status(status(.starting, "looking for IIO magnetometer \"\(spec)\"")))
            announced = true
        }
        while !stop.isStopped {
            var device: IIOMagnetometer?
            var delivered = 0
            do {
                let d = try IIOMagnetometer(spec: spec, imuSpec: imuSpec, imuRateHz: imuRateHz, logger: logger)
                device = d
                // Timed before the first status, so that it already says what the reads deliver.
                var pace = try tune(d)
                emit(.status(status(.streaming, "\(pace.note(d.rateNote)); \(d.choice.reason)", device: d, pace: pace)))
                announced = true
                logger?.info(
                    "magnetometer streaming", metadata: ["device": "\(d.summary)", "rate_hz": "\(pace.reportedHz)"])
                try stream(d, pace: &pace, stop: stop, wake: wake, emit: emit, delivered: &delivered)
                return
            } catch MagnetometerSelection.Refusal.noneFound where spec == "auto" && !announced {
                // None has been seen: nothing to report (the IMU works as without one).
                stop.sleep(seconds: Self.quietRetry)
            } catch {
                // Named and absent, or one that was there has gone: a status, and the backoff.
                if delivered > 0 { backoff.reset() }
                let delay = backoff.next()
                logger?.warning(
                    "magnetometer unavailable, retrying", metadata: ["error": "\(error)", "retry_in_s": "\(delay)"])
                emit(.status(status(.retrying, "\(error)", device: device, retryIn: delay)))
                announced = true
                stop.sleep(seconds: delay)
            }
        }
    }

    private func stream(
        _ d: IIOMagnetometer, pace: inout MagnetometerPace, stop: StopSignal, wake: IIOWakeup,
        emit: @Sendable (SourceOutput) -> Void, delivered: inout Int
    ) throws {
        let period = pace.periodNs
        var next = MonotonicClock.nanoseconds()
        var lastCheck = next
        while !stop.isStopped {
            let start = MonotonicClock.nanoseconds()
            let field = try d.read()
            let end = MonotonicClock.nanoseconds()
            let t = start + (end - start) / 2
            emit(.magnetometer(MagSample(t: t, field: field)))
            delivered += 1
            if pace.add(readNs: end - start, at: end) {
                emit(.status(status(.streaming, "\(pace.note(d.rateNote)); \(d.choice.reason)", device: d, pace: pace)))
            }
            // A vanished sysfs file fails the read; a device replaced under the same id does not.
            if t - lastCheck >= 1_000_000_000 {
                lastCheck = t
                guard d.isPresent() else { throw IIOError("\(d.summary) vanished") }
            }
            // The IMU loop's schedule: late by less than a period keeps the grid, more restarts it,
            // so slow reads follow one another with no wait.
            next += period
            let now = MonotonicClock.nanoseconds()
            if next <= now { next = now }
            wake.wait(nanoseconds: next - now)
        }
    }

    /// A status; a `streaming` one's `rate_hz` is what the reads deliver (`pace`).
    private func status(
        _ state: SourceStatus.State, _ message: String, device: IIOMagnetometer? = nil,
        pace: MagnetometerPace? = nil, retryIn: Double? = nil
    ) -> SourceStatus {
        SourceStatus(
            source: SourceStatus.magnetometerSource, state: state, message: message,
            device: device?.summary, rateHz: state == .streaming ? pace?.reportedHz ?? device?.rateHz : nil,
            retryIn: retryIn)
    }
}

/// Serialises the outputs of the IMU's and the magnetometer's loops: `SampleSource.run`'s
/// `emit` is called from one thread at a time, as every consumer (the sampler, `tiltd record`)
/// expects.
final class SerialEmitter: Sendable {
    private let lock = Mutex(())
    private let emit: @Sendable (SourceOutput) -> Void

    init(_ emit: @escaping @Sendable (SourceOutput) -> Void) { self.emit = emit }

    func callAsFunction(_ output: SourceOutput) { lock.withLock { _ in emit(output) } }
}

extension SourceStatus {
    /// The `source` of the magnetometer's statuses.
    public static let magnetometerSource = "magnetometer"
}
