// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Synchronization
import TiltCore
import TiltPlatform

/// What a source says about itself: shown to clients as `status` events and to systemd as STATUS=.
public struct SourceStatus: Sendable, Equatable {
    /// A source's state, as `status` lines name it.
    public enum State: String, Sendable {
        /// Opening or searching for the device.
        case starting
        /// Delivering samples (or fixes).
        case streaming
        /// Open and configured, but nothing arrives (a buffer whose trigger never fires, a stalled
        /// sensor); samples resume `streaming`.
        case noData = "no_data"
        /// Lost (vanished, read errors, not found); will retry after `retryIn` seconds.
        case retrying
        /// A finite source (a recording) reached its end.
        case finished
    }

    /// "imu", "magnetometer" or "gps".
    public var source: String
    /// Where the source is.
    public var state: State
    /// What happened, for people.
    public var message: String
    /// The device or server in use, e.g. "mpu6050 (iio:device0)".
    public var device: String?
    /// The rate actually configured, Hz.
    public var rateHz: Double?
    /// Seconds until the next attempt, when `state == .retrying`.
    public var retryIn: Double?
    /// For an IMU: whether it has a gyroscope (nil = not known yet). Without one, attitude is
    /// tilt from the accelerometer only and gestures that need rotation rates are unavailable.
    public var hasGyroscope: Bool?
    /// For an IMU: true when its sample times are on CLOCK_MONOTONIC, the clock the daemon reads
    /// arrival times on, so they cannot step (`SampleTimeline.Parameters.detectsJumps`); nil when
    /// not known. Not sent to clients (the status message names the clock).
    public var timestampsMonotonic: Bool?
    /// For an IMU read polled: the span each gyro reading averages as a share of the polling
    /// period (`AttitudeEstimator.Parameters.rateWindow`: the chip's output period over the
    /// poll's); nil when buffered or not known. Not sent to clients.
    public var rateWindow: Double?
    /// True when the samples before this status must not shape the attitude (they were in a unit
    /// since corrected, `IIOUnits`): the daemon restarts its estimator. Not sent to clients.
    public var restartsFusion = false

    /// A status; the optional fields only when known.
    public init(
        source: String, state: State, message: String, device: String? = nil,
        rateHz: Double? = nil, retryIn: Double? = nil, hasGyroscope: Bool? = nil
    ) {
        self.source = source; self.state = state; self.message = message
        self.device = device; self.rateHz = rateHz; self.retryIn = retryIn; self.hasGyroscope = hasGyroscope
    }

    /// What status messages say when the IMU has no gyroscope.
    public static let noGyroscopeNote = "no gyroscope: tilt from the accelerometer only"

    /// Why a game vocabulary cannot be played with this IMU, or nil when it can. Vocabularies
    /// that read rotation (`nod`) need a gyroscope; `tilt` needs only gravity.
    public func refusal(forVocabulary vocabulary: String) -> String? {
        guard hasGyroscope == false, vocabulary != "tilt" else { return nil }
        return "the \"\(vocabulary)\" vocabulary needs a gyroscope and \(device ?? "this IMU") has none "
            + "(\(Self.noGyroscopeNote)); use \"tilt\""
    }
}

/// Output of a sample source.
public enum SourceOutput: Sendable {
    case sample(IMUSample)
    /// A magnetometer sample (an IMU with one, or a magnetometer device matched to it).
    case magnetometer(MagSample)
    case status(SourceStatus)
}

/// Set once to ask a running source to return. Sources poll it between reads (every read
/// has a timeout) and sleep on it, so a stop is seen within one timeout.
///
/// Every check also records a heartbeat: a source that keeps checking is alive, one blocked
/// for good (a read that never returns) stops beating. The daemon's systemd watchdog pings
/// only while the sampler beats, so a stuck sampler — not just a dead process — is restarted.
public final class StopSignal: Sendable {
    private let stopped = Mutex(false)
    private let condition = Mutex<[@Sendable () -> Void]>([])
    private let beat = Atomic<Nanoseconds>(0)

    /// A signal not yet set.
    public init() {}

    /// Whether stop was asked; also records a heartbeat (see the type's comment).
    public var isStopped: Bool {
        beat.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
        return stopped.withLock { $0 }
    }

    /// CLOCK_MONOTONIC of the last check, 0 if never checked.
    public var lastHeartbeat: Nanoseconds { beat.load(ordering: .relaxed) }

    /// Records a heartbeat without checking (for sources that wait elsewhere).
    public func heartbeat() { beat.store(MonotonicClock.nanoseconds(), ordering: .relaxed) }

    /// Asks the source to return; runs the `onStop` handlers once.
    public func stop() {
        stopped.withLock { $0 = true }
        let handlers = condition.withLock { h -> [@Sendable () -> Void] in
            let c = h; h = []; return c
        }
        for h in handlers { h() }
    }

    /// Runs `handler` once when stopped (at once if already stopped).
    public func onStop(_ handler: @escaping @Sendable () -> Void) {
        let runNow = stopped.withLock { s -> Bool in
            if !s { condition.withLock { $0.append(handler) } }
            return s
        }
        if runNow { handler() }
    }

    /// Sleeps up to `seconds`, returning early (true) when stopped.
    @discardableResult
    public func sleep(seconds: Double) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .nanoseconds(Int64(saturating: seconds * 1e9)))
        while ContinuousClock.now < deadline {
            if isStopped { return true }
            let left = ContinuousClock.now.duration(to: deadline)
            let step = min(left, .milliseconds(50))
            var ts = timespec(
                tv_sec: Int(step.components.seconds), tv_nsec: Int(step.components.attoseconds / 1_000_000_000))
            nanosleep(&ts, nil)
        }
        return isStopped
    }
}

/// A producer of IMU samples (an IIO device, a recording). `run` blocks the calling thread
/// until the source ends or `stop` is signalled; it never throws for device trouble — it reports
/// it as a status and retries — only for errors that retrying cannot fix.
public protocol SampleSource: Sendable {
    /// A short human description ("iio:device0 mpu6050 at 60 Hz", "replay walk.csv").
    var summary: String { get }
    func run(stop: StopSignal, emit: @escaping @Sendable (SourceOutput) -> Void) throws
}

/// Exponential backoff with a ceiling, for reconnecting to devices and servers.
public struct Backoff: Sendable {
    /// The first delay, seconds.
    public var initial: Double
    /// The longest delay, seconds.
    public var maximum: Double
    /// The next delay, seconds.
    public private(set) var current: Double

    /// Delays from `initial` doubling up to `maximum` seconds.
    public init(initial: Double = 0.5, maximum: Double = 10) {
        self.initial = initial; self.maximum = maximum; self.current = initial
    }

    /// The delay to wait now; the next one is doubled.
    public mutating func next() -> Double {
        let d = current
        current = min(maximum, current * 2)
        return d
    }

    /// Back to the first delay (after a success).
    public mutating func reset() { current = initial }
}

/// Output of a fix source.
public enum FixOutput: Sendable {
    case fix(Fix)
    case status(SourceStatus)
}

/// A producer of GPS fixes (gpsd, a GPX replay). Same contract as `SampleSource`.
public protocol FixSource: Sendable {
    var summary: String { get }
    func run(stop: StopSignal, emit: @escaping @Sendable (FixOutput) -> Void) throws
}
