// SPDX-License-Identifier: Apache-2.0
import CLibIIO
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import TiltCore
import TiltPlatform

/// IMU samples from the kernel's IIO subsystem through libiio's local backend.
///
/// Finds the device (one combined accel + gyro device such as inv_mpu6050, split accel and gyro
/// devices such as st_lsm6dsx, joined by timestamp, or an accelerometer alone such as adxl345),
/// sets its sampling rate, sets its timestamp clock to CLOCK_MONOTONIC, attaches its trigger when
/// it needs one, and streams buffered scans decoded by each channel's own scan type; devices
/// without a buffer, or whose buffer cannot fill (no trigger, no data within a second), are
/// polled at the rate (`IIOReadMode`). Output is SI (m/s², rad/s) after scale, offset and the
/// mount matrix, stamped with the kernel timestamp (ns). User calibration is not applied here.
///
/// Device trouble never ends `run`: it is reported as a `retrying` status and retried with
/// backoff on a fresh libiio context, and streaming resumes when the device is back.
///
/// Beside the IMU, a magnetometer (`Settings.magnetometer`) is read on a thread of its own
/// (`IIOMagnetometerReader`): its `.magnetometer` samples and `magnetometer` statuses come
/// interleaved with the IMU's outputs, never at the same time as one (`SerialEmitter`).
public final class IIOSource: SampleSource {
    /// What to open and how (from `[imu]`).
    public struct Settings: Sendable, Equatable {
        /// "auto", an IIO device name ("mpu6050") or id ("iio:device0"), or "accelName+gyroName"
        /// for split devices.
        public var device: String
        /// Requested sampling rate, Hz; the nearest offered rate is used when it is not offered.
        public var rateHz: Double
        /// Overrides the device's mount matrix (sensor frame → reported frame) when set.
        public var mountMatrix: Matrix3?
        /// Scans per libiio buffer; nil sizes it from the rate (about 10 ms, at least one).
        public var bufferSamples: Int?
        /// Buffered, polled, or buffered with a fall-back to polling (`[imu] mode`).
        public var mode: IIOReadMode
        /// `[imu] magnetometer`: "auto", an IIO device name or id, or "none" (`IIOMagnetometerReader`).
        public var magnetometer: String

        /// Settings; the defaults find the IMU (and a magnetometer with it) and read it at 60 Hz.
        public init(
            device: String = "auto", rateHz: Double = 60, mountMatrix: Matrix3? = nil,
            bufferSamples: Int? = nil, mode: IIOReadMode = .auto, magnetometer: String = "auto"
        ) {
            self.device = device; self.rateHz = rateHz
            self.mountMatrix = mountMatrix; self.bufferSamples = bufferSamples; self.mode = mode
            self.magnetometer = magnetometer
        }

        /// Scans per buffer actually used. Reads never wait for a full buffer (see
        /// `IIOBufferedReader`), so this only caps a single read; ~10 ms keeps each read short.
        public var samplesPerBuffer: Int {
            max(1, bufferSamples ?? Int(saturating: (rateHz * 0.010).rounded()))
        }
    }

    /// The device, rate and read mode asked for.
    public let configuration: Settings
    private let logger: Logger?

    /// - Parameters:
    ///   - configuration: device, rate, mount override, buffer size.
    ///   - logger: where device trouble is logged (rate-limited); nil for silence.
    public init(configuration: Settings, logger: Logger? = nil) {
        self.configuration = configuration
        self.logger = logger
    }

    /// "iio DEVICE at RATE Hz", for status lines.
    public var summary: String {
        "iio \(configuration.device) at \(IIOText.rateText(configuration.rateHz)) Hz"
    }

    /// Finds, configures and streams the device until `stop`, reporting trouble as `retrying` statuses and retrying with backoff.
    public func run(stop: StopSignal, emit unserialised: @escaping @Sendable (SourceOutput) -> Void) throws {
        let wake = try IIOWakeup()
        stop.onStop { wake.signal() }
        defer { wake.close() }
        let emit = SerialEmitter(unserialised)
        // The magnetometer on a thread of its own: its reads (a one-shot measurement each on an
        // ak8975) never delay the IMU's, and its trouble never stops them. Its own stop signal,
        // so its checks do not count as the sampler's heartbeat (the watchdog must see the IMU's).
        let magnetometer = IIOMagnetometerReader(
            spec: configuration.magnetometer, imuSpec: configuration.device, imuRateHz: configuration.rateHz,
            logger: logger)
        let magStop = StopSignal()
        stop.onStop { magStop.stop() }
        let magDone = DispatchGroup()
        DispatchQueue(label: "tiltd.iio.magnetometer").async(group: magDone) {
            magnetometer.run(stop: magStop, wake: wake, emit: { emit($0) })
        }
        // Before `wake` closes (defers run last-first): nothing is emitted after `run` returns.
        defer {
            magStop.stop()
            magDone.wait()
        }
        var backoff = Backoff()
        emit(
            .status(
                SourceStatus(
                    source: "imu", state: .starting,
                    message:
                        "looking for IIO device \"\(configuration.device)\" at "
                        + "\(IIOText.rateText(configuration.rateHz)) Hz")))
        while !stop.isStopped {
            var session: IIOSession?
            do {
                let s = try IIOSession(configuration: configuration, logger: logger)
                session = s
                emit(.status(s.status(.streaming)))
                logger?.info(
                    "IMU streaming",
                    metadata: [
                        "device": "\(s.deviceSummary)", "mode": "\(s.message)",
                        "rate_hz": "\(s.rateHz)",
                    ])
                try s.stream(stop: stop, wake: wake, emit: { emit($0) }, logger: logger)
                s.close()
                return
            } catch let restart as IIOSessionRestart {
                session?.close()
                backoff.reset()
                logger?.notice("IMU restarting", metadata: ["reason": "\(restart)"])
            } catch {
                if (session?.delivered ?? 0) > 0 { backoff.reset() }
                session?.close()
                session = nil
                let delay = backoff.next()
                let message = "\(error)"
                // Repeats are limited by the daemon's one log rate-limiter (`RepeatLimiter`, per
                // call site, with a summary line); the backoff already spaces the attempts.
                logger?.warning(
                    "IMU unavailable, retrying", metadata: ["error": "\(message)", "retry_in_s": "\(delay)"])
                emit(
                    .status(
                        SourceStatus(
                            source: "imu", state: .retrying, message: message, retryIn: delay)))
                stop.sleep(seconds: delay)
            }
        }
    }
}

/// A self-pipe that `StopSignal` pokes so a thread waiting in poll() wakes at once.
final class IIOWakeup: Sendable {
    /// The read end, to poll for POLLIN.
    let fd: Int32
    private let writeFD: Int32
    private let closed = Mutex(false)

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw IIOError(SystemError("pipe").description) }
        for e in ends {
            _ = fcntl(e, F_SETFL, fcntl(e, F_GETFL) | O_NONBLOCK)
            _ = fcntl(e, F_SETFD, FD_CLOEXEC)
        }
        fd = ends[0]; writeFD = ends[1]
    }

    func signal() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            var one: UInt8 = 1
            _ = write(writeFD, &one, 1)
        }
    }

    /// Sleeps up to `nanoseconds`, returning early when signalled. poll() counts whole
    /// milliseconds, so the last bit is slept with nanosleep to keep the polling period exact.
    func wait(nanoseconds: Int64) {
        var left = nanoseconds
        if left > 2_000_000 {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let start = MonotonicClock.nanoseconds()
            if poll(&p, 1, Int32((left - 1_000_000) / 1_000_000)) > 0 { return }
            left -= MonotonicClock.nanoseconds() - start
        }
        guard left > 0 else { return }
        var ts = timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
        nanosleep(&ts, nil)
    }

    func close() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            Glibc.close(fd)
            Glibc.close(writeFD)
        }
    }
}
