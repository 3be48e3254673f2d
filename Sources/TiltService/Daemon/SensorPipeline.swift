import Foundation
import Logging
import TiltCore
import TiltSensors

/// Runs a sample source on its own thread: calibration and fusion happen there, then each
/// result hops once to the hub's loop. The source blocks in libiio (or sleeps for a replay),
/// so it must not run on the event loop.
public final class SensorPipeline: Sendable {
    let source: any SampleSource
    let engine: Engine
    let calibration: IMUCalibration
    let fusion: AttitudeEstimator.Parameters
    let logger: Logger
    /// Saves the gyro bias learnt at rest (`[calibration] persist_gyro_bias`); nil = off.
    let persister: BiasPersister?
    public let stop = StopSignal()
    private let done = StopSignal()

    public init(source: any SampleSource, engine: Engine, calibration: IMUCalibration,
                fusion: AttitudeEstimator.Parameters = .init(), persister: BiasPersister? = nil, logger: Logger) {
        self.source = source; self.engine = engine; self.calibration = calibration
        self.fusion = fusion; self.persister = persister; self.logger = logger
    }

    /// Starts the sampling thread. `onEnd` runs when a finite source (a recording) is done.
    public func start(onEnd: @escaping @Sendable () -> Void = {}) {
        stop.heartbeat()
        let thread = Thread { [self] in
            let state = FusionState(calibrator: Calibrator(calibration), estimator: AttitudeEstimator(parameters: fusion))
            let engine = self.engine
            let loop = engine.hub.loop
            do {
                try source.run(stop: stop) { output in
                    switch output {
                    case .sample(let raw):
                        let s = state.calibrator.apply(raw)
                        let a = state.estimator.update(s)
                        self.persister?.feed(t: a.t, atRest: a.atRest, bias: a.gyroBias)
                        loop.execute { engine.ingest(sample: s, attitude: a) }
                    case .status(let st):
                        if st.state == .retrying || st.state == .starting { state.estimator.reset() }
                        loop.execute { engine.ingest(status: st) }
                    }
                }
            } catch {
                let st = SourceStatus(source: "imu", state: .finished, message: "\(error)")
                loop.execute { engine.ingest(status: st) }
            }
            done.stop()
            onEnd()
        }
        thread.name = "tiltd-sampler"
        thread.start()
    }

    /// True once the source has returned (a recording ended, or after `shutdown`).
    public var isDone: Bool { done.isStopped }

    /// Whether the sampler is making progress: it beat within `window` ns, or it has ended.
    /// The systemd watchdog is fed only while this holds.
    public func isAlive(within window: UInt64) -> Bool {
        if done.isStopped { return true }
        let beat = stop.lastHeartbeat
        let now = StopSignal.monotonicNanoseconds()
        return beat != 0 && now &- beat < window
    }

    /// Asks the source to stop and waits (bounded) for its thread.
    public func shutdown(timeout: Double = 3) {
        stop.stop()
        var waited = 0.0
        while !done.isStopped && waited < timeout { Thread.sleep(forTimeInterval: 0.01); waited += 0.01 }
        persister?.drain()
    }
}

/// Mutable fusion state, touched only by the sampler thread.
final class FusionState: @unchecked Sendable {
    var calibrator: Calibrator
    var estimator: AttitudeEstimator
    init(calibrator: Calibrator, estimator: AttitudeEstimator) {
        self.calibrator = calibrator; self.estimator = estimator
    }
}
