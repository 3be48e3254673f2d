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
    let thread = SourceThread(name: "tiltd-sampler")

    public init(source: any SampleSource, engine: Engine, calibration: IMUCalibration,
                fusion: AttitudeEstimator.Parameters = .init(), persister: BiasPersister? = nil, logger: Logger) {
        self.source = source; self.engine = engine; self.calibration = calibration
        self.fusion = fusion; self.persister = persister; self.logger = logger
    }

    /// Starts the sampling thread. `onEnd` runs when a finite source (a recording) is done.
    public func start(onEnd: @escaping @Sendable () -> Void = {}) {
        let state = FusionState(calibrator: Calibrator(calibration), estimator: AttitudeEstimator(parameters: fusion))
        let (source, engine, persister) = (self.source, self.engine, self.persister)
        let loop = engine.hub.loop
        thread.start({ stop in
            do {
                try source.run(stop: stop) { output in
                    switch output {
                    case .sample(let raw):
                        let s = state.calibrator.apply(raw)
                        let a = state.estimator.update(s)
                        persister?.feed(t: a.t, atRest: a.atRest, bias: a.gyroBias)
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
        }, onEnd: onEnd)
    }

    /// True once the source has returned (a recording ended, or after `shutdown`).
    public var isDone: Bool { thread.isDone }

    /// Whether the sampler is making progress; the systemd watchdog is fed only while it is.
    public func isAlive(within window: UInt64) -> Bool { thread.isAlive(within: window) }

    /// Asks the source to stop and waits (bounded) for its thread.
    public func shutdown(timeout: Double = 3) {
        thread.shutdown(timeout: timeout)
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
