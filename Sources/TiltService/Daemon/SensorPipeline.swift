import Foundation
import Synchronization
import Logging
import TiltCore
import TiltSensors

/// Runs a sample source on its own thread: calibration and fusion happen there, then each
/// result hops once to the hub's loop. The source blocks in libiio (or sleeps for a replay),
/// so it must not run on the event loop.
public final class SensorPipeline: Sendable {
    let source: any SampleSource
    let engine: EngineHandle
    let calibration: IMUCalibration
    let fusion: AttitudeEstimator.Parameters
    let logger: Logger
    /// Saves the gyro bias learnt at rest (`[calibration] persist_gyro_bias`); nil = off.
    let persister: BiasPersister?
    let thread = SourceThread(name: "tiltd-sampler")
    /// Samples handed to the loop and not yet processed. Bounded so a loop that cannot keep up
    /// (an overloaded machine) costs skipped samples, counted and reported, not unbounded
    /// memory and latency.
    private let inFlight = InFlight()
    static let maxInFlight = 2048

    public init(source: any SampleSource, engine: EngineHandle, calibration: IMUCalibration,
                fusion: AttitudeEstimator.Parameters = .init(), persister: BiasPersister? = nil, logger: Logger) {
        self.source = source; self.engine = engine; self.calibration = calibration
        self.fusion = fusion; self.persister = persister; self.logger = logger
    }

    /// Starts the sampling thread. `onEnd` runs when a finite source (a recording) is done.
    public func start(onEnd: @escaping @Sendable () -> Void = {}) {
        let state = FusionState(calibrator: Calibrator(calibration), estimator: AttitudeEstimator(parameters: fusion))
        let (source, engine, persister, inFlight) = (self.source, self.engine, self.persister, self.inFlight)
        let skipped = SkipCounter()
        thread.start({ stop in
            do {
                try source.run(stop: stop) { output in
                    switch output {
                    case .sample(let raw):
                        let s = state.calibrator.apply(raw)
                        let a = state.estimator.update(s)
                        persister?.feed(t: a.t, atRest: a.atRest, bias: a.gyroBias)
                        if inFlight.value.load(ordering: .relaxed) >= Self.maxInFlight {
                            skipped.count += 1
                            return
                        }
                        inFlight.value.add(1, ordering: .relaxed)
                        let n = skipped.take()
                        engine.execute { engine in
                            inFlight.value.subtract(1, ordering: .relaxed)
                            if n > 0 { engine.ingest(skipped: n) }
                            engine.ingest(sample: s, attitude: a)
                        }
                    case .status(let st):
                        if st.state == .retrying || st.state == .starting { state.estimator.reset() }
                        engine.execute { $0.ingest(status: st) }
                    }
                }
            } catch {
                let st = SourceStatus(source: "imu", state: .finished, message: "\(error)")
                engine.execute { $0.ingest(status: st) }
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

/// Samples on their way to the loop.
final class InFlight: Sendable {
    let value = Atomic<Int>(0)
}

/// Samples skipped since the last report; touched only by the sampler thread.
final class SkipCounter: @unchecked Sendable {
    var count = 0
    func take() -> Int { defer { count = 0 }; return count }
}

/// Mutable fusion state, touched only by the sampler thread.
final class FusionState: @unchecked Sendable {
    var calibrator: Calibrator
    var estimator: AttitudeEstimator
    init(calibrator: Calibrator, estimator: AttitudeEstimator) {
        self.calibrator = calibrator; self.estimator = estimator
    }
}
