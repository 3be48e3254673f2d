// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Logging
import ServiceLifecycle
import Synchronization
import TiltConfig
import TiltCore
import TiltPlatform
import TiltSensors

/// The IMU sampler as a service: runs the `SensorPipeline` (its own thread), replaces it when a
/// reload changes `[imu]` or `[calibration]`, and stops it at shutdown. With `exitWhenDone` it
/// returns when a recording ends, which shuts the whole group down.
public final class SamplerService: Service, SamplerControl {
    /// Where samples come from.
    public enum Input: Sendable {
        /// The configured IIO device.
        case device
        /// A recording, at `speed` (nil = as fast as possible); `holdUntilRound`: after the first
        /// sample, wait until a client starts a round (so a fast replay can be played).
        case replay(path: String, speed: Double?, holdUntilRound: Bool = false)
    }

    let input: Input
    let engine: EngineHandle
    let logger: Logger
    let exitWhenDone: Bool
    /// Opened by the first `game.start` when the replay is held (`--hold-until-round`).
    public let replayGate = ReplayGate()
    /// The running pipeline. Replaced only on `control` (serial), read by the watchdog tick.
    private let current = Mutex<SensorPipeline?>(nil)
    /// Starts and stops pipelines one at a time, off the loop (a stop waits for the thread).
    private let control = DispatchQueue(label: "tiltd.sampler")
    private let ended: AsyncStream<Void>
    private let endedContinuation: AsyncStream<Void>.Continuation
    /// Finishes once the first pipeline's thread is running (READY=1 waits for it).
    public let started: AsyncStream<Void>
    private let startedContinuation: AsyncStream<Void>.Continuation
    /// Consumers of raw samples (`calibrate.gyro`), handed to every pipeline, so a capture
    /// carries on across a reload's new pipeline.
    public let rawTaps: RawSampleTaps? = RawSampleTaps()
    /// The latest magnetic reference seed (µT, rad), given to every pipeline that starts.
    private let seed = Mutex<(strength: Double, dip: Double)?>(nil)

    /// A sampler delivering to `engine`; `first` is the pipeline to start with (see `prepare`).
    public init(input: Input, engine: EngineHandle, exitWhenDone: Bool, logger: Logger) {
        self.input = input; self.engine = engine; self.exitWhenDone = exitWhenDone; self.logger = logger
        (ended, endedContinuation) = AsyncStream.makeStream()
        (started, startedContinuation) = AsyncStream.makeStream()
    }

    /// Builds, without starting, the sampler for `config` (a replay, or the device `[imu]` names).
    public func prepare(_ config: Configuration) throws(ConfigError) -> SensorPipeline {
        let source: any SampleSource
        var persister: BiasPersister?
        switch input {
        case .replay(let path, let speed, let hold):
            source = ReplaySource(path: path, speed: speed, gate: hold ? replayGate : nil)
        case .device:
            do { source = try DeviceSourceFactory.make(config.imu, logger: logger) } catch {
                throw config.error("imu.device", "\(error)")
            }
            // Only a live device teaches a bias worth keeping; a replay's belongs to another sensor.
            persister = BiasPersister.make(config: config, logger: logger)
        }
        // A live device's clock can step (docs/protocol.md, "Which clock t_ns is on"); a
        // recording's times are kept exactly.
        var isDevice = false
        if case .device = input { isDevice = true }
        return SensorPipeline(
            source: source, engine: engine, calibration: config.calibration, mount: config.imu.mountMatrix,
            fusion: config.imu.fusionParameters, persister: persister, smoothsClockSteps: isDevice,
            taps: rawTaps, logger: logger)
    }

    /// Stops the running sampler and starts `pipeline`, on the service's own queue.
    public func replace(with pipeline: SensorPipeline) {
        control.async { [self] in
            let old = current.withLock { c -> SensorPipeline? in
                defer { c = pipeline }; return c
            }
            old?.shutdown()
            start(pipeline)
        }
    }

    /// Seeds the running pipeline's magnetic reference and remembers it for the next one (a
    /// reload's new sampler starts from it too).
    public func seedMagneticReference(strength: Double, dip: Double) {
        seed.withLock { $0 = (strength, dip) }
        current.withLock { $0 }?.seedMagneticReference(strength: strength, dip: dip)
    }

    /// Whether the sampler is making progress (feeds the systemd watchdog).
    public func isAlive(within window: Nanoseconds) -> Bool {
        current.withLock { $0?.isAlive(within: window) ?? false }
    }

    /// Starts `pipeline`; its end counts only while it is the current one (a replaced
    /// pipeline also ends).
    private func start(_ pipeline: SensorPipeline) {
        if let s = seed.withLock({ $0 }) { pipeline.seedMagneticReference(strength: s.strength, dip: s.dip) }
        pipeline.start { [self] in
            if current.withLock({ $0 === pipeline }) { endedContinuation.yield() }
        }
    }

    /// Runs `first` until shutdown (or, with `exitWhenDone`, until the recording ends).
    private func run(first: SensorPipeline) async throws {
        control.sync {
            current.withLock { $0 = first }
            start(first)
        }
        startedContinuation.finish()
        if exitWhenDone {
            await withTaskGroup(of: Void.self) { tasks in
                tasks.addTask { [ended] in for await _ in ended { break } }
                tasks.addTask { try? await gracefulShutdown() }
                await tasks.next()
                tasks.cancelAll()
            }
            // Let the loop deliver what the sampler queued before the clients are closed.
            _ = try? await engine.loop.submit {}.get()
        } else {
            try? await gracefulShutdown()
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            control.async { [self] in
                current.withLock { $0 }?.shutdown()
                done.resume()
            }
        }
    }

    /// Set before the group runs: the pipeline `run()` starts.
    let firstPipeline = Mutex<SensorPipeline?>(nil)

    /// Runs the first pipeline until graceful shutdown (or the recording's end with `exitWhenDone`).
    public func run() async throws {
        guard let first = firstPipeline.withLock({ $0 }) else {
            startedContinuation.finish()
            return try await gracefulShutdown()
        }
        try await run(first: first)
    }
}

/// Chooses the live sample source for `[imu]`. Kept apart so the daemon does not depend on
/// how devices are opened.
public enum DeviceSourceFactory {
    /// The IIO source for `imu` (it finds the device itself, and retries while it is missing).
    public static func make(_ imu: Configuration.IMU, logger: Logger) throws -> any SampleSource {
        // The config's mount matrix replaces the kernel's: the device reports in its own frame
        // (identity) and the sampler's front end applies the config's matrix, for replays too.
        IIOSource(
            configuration: .init(
                device: imu.device, rateHz: imu.rateHz, mountMatrix: imu.mountMatrix.map { _ in .identity },
                bufferSamples: imu.bufferSamples, mode: IIOReadMode(rawValue: imu.mode) ?? .auto,
                magnetometer: imu.magnetometer),
            logger: logger)
    }
}
