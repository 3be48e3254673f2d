import CLibIIO
import Foundation
import Logging
import Synchronization
import TiltCore

/// IMU samples from the kernel's IIO subsystem through libiio's local backend.
///
/// Finds the device (one combined accel + gyro device such as inv_mpu6050, or split accel and gyro
/// devices such as st_lsm6dsx, paired by timestamp), sets its sampling rate, attaches its trigger
/// when it needs one, and streams buffered scans decoded by each channel's own scan type; devices
/// without a buffer are polled at the rate. Output is SI (m/s², rad/s) after scale, offset and the
/// mount matrix, stamped with the kernel timestamp (ns). User calibration is not applied here.
///
/// Device trouble never ends `run`: it is reported as a `retrying` status and retried with
/// backoff on a fresh libiio context, and streaming resumes when the device is back.
public final class IIOSource: SampleSource {
    /// What to open and how.
    public struct Configuration: Sendable, Equatable {
        /// "auto", an IIO device name ("mpu6050") or id ("iio:device0"), or "accelName+gyroName"
        /// for split devices.
        public var device: String
        /// Requested sampling rate, Hz; the nearest offered rate is used when it is not offered.
        public var rateHz: Double
        /// Overrides the device's mount matrix (sensor frame → reported frame) when set.
        public var mountMatrix: Matrix3?
        /// Scans per libiio buffer; nil sizes it from the rate (about 10 ms, at least one).
        public var bufferSamples: Int?

        public init(device: String = "auto", rateHz: Double = 60, mountMatrix: Matrix3? = nil,
                    bufferSamples: Int? = nil) {
            self.device = device; self.rateHz = rateHz
            self.mountMatrix = mountMatrix; self.bufferSamples = bufferSamples
        }

        /// Scans per buffer actually used. Reads never wait for a full buffer (see
        /// `IIOBufferedReader`), so this only caps a single read; ~10 ms keeps each read short.
        public var samplesPerBuffer: Int {
            max(1, bufferSamples ?? Int((rateHz * 0.010).rounded()))
        }
    }

    public let configuration: Configuration
    private let logger: Logger?

    /// - Parameters:
    ///   - configuration: device, rate, mount override, buffer size.
    ///   - logger: where device trouble is logged (rate-limited); nil for silence.
    public init(configuration: Configuration, logger: Logger? = nil) {
        self.configuration = configuration
        self.logger = logger
    }

    public var summary: String {
        "iio \(configuration.device) at \(IIOText.rateText(configuration.rateHz)) Hz"
    }

    public func run(stop: StopSignal, emit: @escaping @Sendable (SourceOutput) -> Void) throws {
        let wake = try IIOWakeup()
        stop.onStop { wake.signal() }
        defer { wake.close() }
        var backoff = Backoff()
        var throttle = LogThrottle(interval: 30)
        emit(.status(SourceStatus(source: "imu", state: .starting,
                                  message: "looking for IIO device \"\(configuration.device)\"",
                                  rateHz: configuration.rateHz)))
        while !stop.isStopped {
            var session: IIOSession?
            do {
                let s = try IIOSession(configuration: configuration, logger: logger)
                session = s
                emit(.status(SourceStatus(source: "imu", state: .streaming, message: s.mode,
                                          device: s.deviceSummary, rateHz: s.rateHz)))
                logger?.info("IMU streaming", metadata: ["device": "\(s.deviceSummary)", "mode": "\(s.mode)",
                                                         "rate_hz": "\(s.rateHz)"])
                try s.stream(stop: stop, wake: wake, emit: emit, logger: logger)
                s.close()
                return
            } catch {
                if (session?.delivered ?? 0) > 0 { backoff.reset() }
                session?.close()
                session = nil
                let delay = backoff.next()
                let message = "\(error)"
                if throttle.shouldLog(message) {
                    logger?.warning("IMU unavailable, retrying", metadata: [
                        "error": "\(message)", "retry_in_s": "\(delay)",
                        "suppressed": "\(throttle.suppressed(message))"])
                }
                emit(.status(SourceStatus(source: "imu", state: .retrying, message: message,
                                          rateHz: configuration.rateHz, retryIn: delay)))
                stop.sleep(seconds: delay)
            }
        }
    }
}

/// One attempt at streaming: a libiio context and the configured device(s) with their readers.
final class IIOSession {
    private let context: IIOContext
    let devices: [IIOConfiguredDevice]
    private var buffered: [IIOBufferedReader] = []
    private var polled: [IIOPolledReader] = []
    /// The rate the device(s) run at (the slower one for split devices), Hz.
    let rateHz: Double
    /// "mpu6050 (iio:device0)" or "lsm6ds3_accel (iio:device0) + lsm6ds3_gyro (iio:device1)".
    let deviceSummary: String
    /// How samples are read, for the status message.
    private(set) var mode: String
    /// Samples emitted so far.
    private(set) var delivered = 0

    init(configuration: IIOSource.Configuration, logger: Logger?) throws {
        context = try IIOContext(timeoutMs: 1000)
        let choices = try IIODeviceSetup.choose(configuration.device, in: context)
        devices = try choices.map {
            try IIODeviceSetup.configure($0, rateHz: configuration.rateHz,
                                         mountOverride: configuration.mountMatrix, logger: logger)
        }
        rateHz = devices.map(\.rateHz).min() ?? configuration.rateHz
        deviceSummary = devices.map(\.summary).joined(separator: " + ")
        if devices.allSatisfy(\.isBufferCapable) {
            var triggers: [String] = []
            for d in devices {
                if let t = try IIODeviceSetup.attachTrigger(d.ref, in: context, logger: logger) { triggers.append(t) }
            }
            let n = configuration.samplesPerBuffer
            buffered = try devices.map { try IIOBufferedReader(device: $0, samplesPerBuffer: n) }
            mode = "buffered, \(n) scan\(n == 1 ? "" : "s") per buffer"
                + (triggers.isEmpty ? "" : ", trigger \(triggers.joined(separator: ", "))")
                + (devices.count > 1 ? ", accel and gyro paired by timestamp" : "")
        } else {
            polled = devices.map { IIOPolledReader(device: $0) }
            mode = "polled (no buffer)"
        }
    }

    /// Releases the buffers (libiio disables them in sysfs) before the context goes.
    func close() {
        for b in buffered { b.close() }
        buffered = []
        polled = []
    }

    /// Streams until `stop`; throws when the device fails or vanishes.
    func stream(stop: StopSignal, wake: IIOWakeup, emit: @Sendable (SourceOutput) -> Void, logger: Logger?) throws {
        if buffered.isEmpty {
            try streamPolled(stop: stop, wake: wake, emit: emit)
        } else {
            try streamBuffered(stop: stop, wake: wake, emit: emit, logger: logger)
        }
    }

    private func streamBuffered(stop: StopSignal, wake: IIOWakeup, emit: @Sendable (SourceOutput) -> Void,
                                logger: Logger?) throws {
        var pairer = IMUPairer(rateHz: rateHz)
        var fds = buffered.map { pollfd(fd: $0.pollFD, events: Int16(POLLIN), revents: 0) }
        fds.append(pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0))
        var lastData = Nanoseconds(MonotonicClock.nanoseconds())
        var lastCheck = lastData
        var silenceReported = false
        while !stop.isStopped {
            for i in fds.indices { fds[i].revents = 0 }
            // 200 ms: how soon a vanished device is noticed while no data flows.
            if poll(&fds, nfds_t(fds.count), 200) < 0 && errno != EINTR {
                throw IIOError("poll: \(String(cString: strerror(errno)))")
            }
            var got = 0
            for (i, reader) in buffered.enumerated() where fds[i].revents != 0 {
                if fds[i].revents & Int16(POLLERR | POLLNVAL) != 0 {
                    throw IIOError("\(reader.device.summary): data node failed")
                }
                got += try reader.drain { reading in
                    if let a = reading.accel, let g = reading.gyro {
                        emit(.sample(IMUSample(t: reading.t, accel: a, gyro: g)))
                        delivered += 1
                    } else {
                        let done = reading.accel.map { pairer.addAccel(t: reading.t, $0) }
                            ?? reading.gyro.map { pairer.addGyro(t: reading.t, $0) } ?? []
                        for s in done { emit(.sample(s)) }
                        delivered += done.count
                    }
                }
            }
            let now = Nanoseconds(MonotonicClock.nanoseconds())
            if got > 0 { lastData = now; silenceReported = false }
            // Data flowing proves the node is alive; when silent, check often that it still exists
            // (a FIFO or a removed device never reports EOF: libiio holds it open read-write).
            if now - lastCheck >= (got > 0 ? 1_000_000_000 : 200_000_000) {
                lastCheck = now
                for reader in buffered where !reader.isPresent() {
                    throw IIOError("\(reader.device.summary) vanished")
                }
            }
            if !silenceReported && now - lastData > 5_000_000_000 {
                silenceReported = true
                // "Never started" (a trigger that does not fire, a wrong device) and "stopped"
                // (the sensor stalled, its feed ended) have different causes: say which.
                let what = delivered == 0 ? "no IMU data in the 5 s since streaming began"
                    : "no IMU data for 5 s after \(delivered) sample\(delivered == 1 ? "" : "s")"
                logger?.warning("\(what); the device is present, waiting",
                                metadata: ["device": "\(deviceSummary)", "samples": "\(delivered)"])
            }
        }
    }

    private func streamPolled(stop: StopSignal, wake: IIOWakeup, emit: @Sendable (SourceOutput) -> Void) throws {
        let period = Int64(1e9 / max(rateHz, 0.1))
        var next = Nanoseconds(MonotonicClock.nanoseconds())
        var lastCheck = next
        while !stop.isStopped {
            let t = Nanoseconds(MonotonicClock.nanoseconds())
            var accel: Vector3?, gyro: Vector3?
            for reader in polled {
                let r = try reader.read(at: t)
                accel = accel ?? r.accel
                gyro = gyro ?? r.gyro
            }
            if let accel, let gyro {
                emit(.sample(IMUSample(t: t, accel: accel, gyro: gyro)))
                delivered += 1
            }
            if t - lastCheck >= 1_000_000_000 {
                lastCheck = t
                for reader in polled where !reader.isPresent() {
                    throw IIOError("\(reader.device.summary) vanished")
                }
            }
            next += period
            let now = Nanoseconds(MonotonicClock.nanoseconds())
            if next <= now { next = now + period }  // overran (slow sysfs): skip, never burst
            wake.wait(nanoseconds: next - now)
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
        guard pipe(&ends) == 0 else { throw IIOError("pipe: \(String(cString: strerror(errno)))") }
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
            let start = Nanoseconds(MonotonicClock.nanoseconds())
            if poll(&p, 1, Int32((left - 1_000_000) / 1_000_000)) > 0 { return }
            left -= Nanoseconds(MonotonicClock.nanoseconds()) - start
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

/// Lets the same log message through at most once per interval, counting what it held back.
struct LogThrottle {
    let interval: Double
    private var last: [String: (at: ContinuousClock.Instant, held: Int)] = [:]

    init(interval: Double) { self.interval = interval }

    mutating func shouldLog(_ message: String) -> Bool {
        let now = ContinuousClock.now
        if let entry = last[message], entry.at.duration(to: now) < .seconds(interval) {
            last[message] = (entry.at, entry.held + 1)
            return false
        }
        let held = last[message]?.held ?? 0
        last[message] = (now, 0)
        heldBack = held
        return true
    }

    /// How many copies of the message were held back before the one just let through.
    func suppressed(_ message: String) -> Int { heldBack }
    private var heldBack = 0
}
