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
    let engine: Engine
    let calibration: IMUCalibration
    /// The config's `[imu] mount_matrix`, applied to every source's samples (see `SampleFrontEnd`).
    let mount: Matrix3?
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

    public init(source: any SampleSource, engine: Engine, calibration: IMUCalibration, mount: Matrix3? = nil,
                fusion: AttitudeEstimator.Parameters = .init(), persister: BiasPersister? = nil, logger: Logger) {
        self.source = source; self.engine = engine; self.calibration = calibration; self.mount = mount
        self.fusion = fusion; self.persister = persister; self.logger = logger
    }

    /// Starts the sampling thread. `onEnd` runs when a finite source (a recording) is done.
    public func start(onEnd: @escaping @Sendable () -> Void = {}) {
        let state = FusionState(frontEnd: SampleFrontEnd(mount: mount, calibration: calibration), estimator: AttitudeEstimator(parameters: fusion))
        let (source, engine, persister, inFlight) = (self.source, self.engine, self.persister, self.inFlight)
        let loop = engine.hub.loop
        let skipped = SkipCounter()
        thread.start({ stop in
            do {
                try source.run(stop: stop) { output in
                    switch output {
                    case .sample(let raw):
                        let s = state.frontEnd.apply(raw)
                        let a = state.estimator.update(s)
                        persister?.feed(t: a.t, atRest: a.atRest, bias: a.gyroBias)
                        if inFlight.value.load(ordering: .relaxed) >= Self.maxInFlight {
                            skipped.count += 1
                            return
                        }
                        inFlight.value.add(1, ordering: .relaxed)
                        let n = skipped.take()
                        loop.execute {
                            inFlight.value.subtract(1, ordering: .relaxed)
                            if n > 0 { engine.ingest(skipped: n) }
                            engine.ingest(sample: s, attitude: a)
                        }
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
    let frontEnd: SampleFrontEnd
    var estimator: AttitudeEstimator
    init(frontEnd: SampleFrontEnd, estimator: AttitudeEstimator) {
        self.frontEnd = frontEnd; self.estimator = estimator
    }
}
