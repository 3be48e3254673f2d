// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltSensors

/// Runs a sample source on its own thread: the time line (timestamp jumps smoothed, see
/// `SampleTimeline`), calibration and fusion happen there, then each result hops once to the
/// engine's loop. The source blocks in libiio (or sleeps for a replay), so it must not run on the
/// event loop. Samples without a gyro (an accelerometer-only IMU) go through
/// `AccelTiltEstimator` instead of the 6-axis `AttitudeEstimator`.
public final class SensorPipeline: Sendable {
    let source: any SampleSource
    let engine: EngineHandle
    let calibration: IMUCalibration
    /// The config's `[imu] mount_matrix`, applied to every source's samples (see `SampleFrontEnd`).
    let mount: Matrix3?
    let fusion: AttitudeEstimator.Parameters
    let logger: Logger
    /// Saves the gyro bias learnt at rest (`[calibration] persist_gyro_bias`); nil = off.
    let persister: BiasPersister?
    /// Whether timestamps are checked for jumps (live devices) or kept exactly (recordings).
    let smoothsClockSteps: Bool
    /// Consumers of the mounted, uncalibrated samples (a `calibrate.gyro` capture); nil = none.
    let taps: RawSampleTaps?
    let thread = SourceThread(name: "tiltd-sampler")
    /// Samples handed to the loop and not yet processed. Bounded so a loop that cannot keep up
    /// (an overloaded machine) costs skipped samples, counted and reported, not unbounded
    /// memory and latency.
    private let inFlight = InFlight()
    static let maxInFlight = 2048
    /// Time line, calibration and fusion state: the sampling thread's, and the seed's.
    private let state: FusionBox

    /// - Parameter smoothsClockSteps: re-anchor timestamp jumps (a live device's clock can step);
    ///   false keeps a recording's times exactly.
    public init(
        source: any SampleSource, engine: EngineHandle, calibration: IMUCalibration, mount: Matrix3? = nil,
        fusion: AttitudeEstimator.Parameters = .init(), persister: BiasPersister? = nil,
        smoothsClockSteps: Bool = false, taps: RawSampleTaps? = nil, logger: Logger
    ) {
        self.source = source; self.engine = engine; self.calibration = calibration; self.mount = mount
        self.fusion = fusion; self.persister = persister; self.smoothsClockSteps = smoothsClockSteps
        self.taps = taps; self.logger = logger
        state = FusionBox(
            FusionState(
                frontEnd: SampleFrontEnd(mount: mount, calibration: calibration),
                estimator: AttitudeEstimator(parameters: fusion),
                timeline: smoothsClockSteps ? SampleTimeline(parameters: .init(rateHz: 60)) : nil))
    }

    /// Seeds the estimator's reference field from the World Magnetic Model at a fix (`strength`
    /// µT, `dip` rad, positive down; `AttitudeEstimator.seedMagneticReference`), so magnetic
    /// disturbances are judged right from the first field sample. From any thread: it takes
    /// the sampling thread's lock for the moment it needs.
    public func seedMagneticReference(strength: Double, dip: Double) {
        state.fusion.withLock { $0.estimator.seedMagneticReference(strength: strength, dip: dip) }
    }

    /// Starts the sampling thread. `onEnd` runs when a finite source (a recording) is done.
    public func start(onEnd: @escaping @Sendable () -> Void = {}) {
        let (state, source, engine, persister, inFlight, logger, taps, fusion) = (
            self.state, self.source, self.engine, self.persister, self.inFlight, self.logger, self.taps, self.fusion
        )
        thread.start(
            { stop in
                do {
                    try source.run(stop: stop) { output in
                        switch output {
                        case .sample(var raw):
                            let tapped = taps?.isActive == true
                            let (s, a, jump, mounted) = state.fusion.withLock { st in
                                var jump: SampleTimeline.Jump?
                                if st.timeline != nil {
                                    let placed = st.timeline!.place(raw.t, arrival: MonotonicClock.nanoseconds())
                                    raw.t = placed.t
                                    jump = placed.jump
                                }
                                let s = st.frontEnd.apply(raw)
                                let a = s.hasGyro ? st.estimator.update(s) : st.tilt.update(s)
                                return (s, a, jump, tapped ? st.frontEnd.mounted(raw) : nil)
                            }
                            if let mounted { taps?.feed(mounted) }
                            if let jump { Self.report(jump, logger: logger, engine: engine) }
                            if s.hasGyro { persister?.feed(t: a.t, atRest: a.atRest, bias: a.gyroBias) }
                            if inFlight.value.load(ordering: .relaxed) >= Self.maxInFlight {
                                state.skipped.add(1, ordering: .relaxed)
                                return
                            }
                            inFlight.value.add(1, ordering: .relaxed)
                            let n = state.skipped.exchange(0, ordering: .relaxed)
                            engine.execute { engine in
                                inFlight.value.subtract(1, ordering: .relaxed)
                                if n > 0 { engine.ingest(skipped: n) }
                                engine.ingest(sample: s, attitude: a)
                            }
                        case .magnetometer(let raw):
                            // The heading this sets reaches clients with the next IMU sample's
                            // attitude. The config's mount matrix and the calibration file's
                            // mag_offset / mag_matrix first, as for the accelerometer. Its times
                            // are not re-anchored by the IMU's time line: the estimator measures
                            // only the gaps between field samples (MagneticHeading), and a live
                            // magnetometer is stamped on CLOCK_MONOTONIC, which does not step.
                            let mismatch: Double? = state.fusion.withLock { st in
                                let m = st.frontEnd.apply(raw)
                                _ = st.estimator.updateMag(t: m.t, field: m.field)
                                guard let r = st.estimator.magScaleMismatch, r != st.reportedScaleMismatch
                                else { return nil }
                                st.reportedScaleMismatch = r
                                return r
                            }
                            if let mismatch { Self.reportScaleMismatch(mismatch, logger: logger) }
                        case .status(let st) where st.source == SourceStatus.magnetometerSource:
                            // The magnetometer comes and goes on its own: the IMU's estimator and
                            // time line are not reset by its trouble.
                            engine.execute { $0.ingest(status: st) }
                        case .status(let st):
                            state.fusion.withLock { f in
                                if st.state == .retrying || st.state == .starting || st.restartsFusion {
                                    f.estimator.reset()
                                    f.tilt.reset()
                                }
                                if st.state != .noData { f.timeline?.resume() }
                                if let r = st.rateHz, st.state == .streaming {
                                    var p = SampleTimeline.Parameters(rateHz: r)
                                    p.detectsJumps = !(st.timestampsMonotonic ?? false)
                                    f.timeline?.parameters = p
                                }
                                if st.state == .streaming {
                                    f.estimator.parameters.rateWindow = Self.rateWindow(
                                        configured: fusion.rateWindow, source: st.rateWindow)
                                }
                            }
                            engine.execute { $0.ingest(status: st) }
                        }
                    }
                } catch {
                    let st = SourceStatus(source: "imu", state: .finished, message: "\(error)")
                    engine.execute { $0.ingest(status: st) }
                }
            }, onEnd: onEnd)
    }

    /// The estimator's `rateWindow` for what the source says of its gyro readings: the source's
    /// (a chip polled slower than it runs: each reading is of its moment) while the config has
    /// the default 1, which fits a sensor read at its own rate; any other `[imu] rate_window` is
    /// the user's and is kept. Back to the configured value when the source says nothing
    /// (buffered again).
    static func rateWindow(configured: Double, source: Double?) -> Double {
        guard configured == 1, let source, source > 0, source <= 1 else { return configured }
        return source
    }

    /// The magnetometer reads the model's dip at a strength far from the model's: its driver's
    /// unit is off. The heading works (the check then uses the measured strength); said once.
    static func reportScaleMismatch(_ ratio: Double, logger: Logger) {
        let times = ratio < 1 ? "1/\(Int(saturating: (1 / ratio).rounded()))" : "\(Int(saturating: ratio.rounded()))×"
        logger.warning(
            "the magnetometer's field is \(times) the World Magnetic Model's at the fix, with the model's dip: its driver's scale is off (Linux 6.1's hmc5843 reports 1/100), not the place's field; the heading is unaffected, but field strengths (tiltd calibrate mag) are in the driver's unit"
        )
    }

    /// A timestamp jump: logged and sent to clients once, as a `status` line.
    static func report(_ jump: SampleTimeline.Jump, logger: Logger, engine: EngineHandle) {
        let message =
            "IMU timestamps jumped \(jump.summary) (the device's clock stepped); "
            + "time re-anchored: attitude and rounds continue"
        logger.warning("\(message)", metadata: ["from_ns": "\(jump.from)", "to_ns": "\(jump.to)"])
        var fields = Event.statusFields(source: "imu", state: "clock_step", message: message)
        fields["step_ns"] = .int(jump.step)
        let event = Event(.status, t: nil, fields: fields)
        engine.execute { $0.context.hub.publish(event) }
    }

    /// True once the source has returned (a recording ended, or after `shutdown`).
    public var isDone: Bool { thread.isDone }

    /// Whether the sampler is making progress; the systemd watchdog is fed only while it is.
    public func isAlive(within window: Nanoseconds) -> Bool { thread.isAlive(within: window) }

    /// Asks the source to stop and waits (bounded) for its thread.
    public func shutdown(timeout: Double = 3) {
        thread.shutdown(timeout: timeout)
        persister?.drain()
    }
}

/// Samples on their way to the loop.
final class InFlight: Sendable {
    let value = Atomic<Int>(0)
}

/// Mutable fusion state of one pipeline (see `FusionBox`).
struct FusionState {
    /// Mount matrix and calibration: the one path every source's samples take.
    let frontEnd: SampleFrontEnd
    var estimator: AttitudeEstimator
    /// For samples with no gyro.
    var tilt = AccelTiltEstimator()
    var timeline: SampleTimeline?
    /// The magnetometer's scale mismatch already reported (`AttitudeEstimator.magScaleMismatch`).
    var reportedScaleMismatch: Double?
    init(frontEnd: SampleFrontEnd, estimator: AttitudeEstimator, timeline: SampleTimeline?) {
        self.frontEnd = frontEnd; self.estimator = estimator; self.timeline = timeline
    }
}

/// The sampler thread's state. The lock is contended only by the rare seed of the magnetic
/// reference (once per place, from the loop), and the atomic is never raced; they let the
/// compiler check that.
final class FusionBox: Sendable {
    let fusion: Mutex<FusionState>
    /// Samples skipped since the last hop to the loop.
    let skipped = Atomic<Int>(0)
    init(_ state: FusionState) { fusion = Mutex(state) }
}
