// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import TiltConfig
import TiltCore
import TiltPlatform

/// When to save the gyro bias the estimator learns at rest (`[calibration] persist_*`).
///
/// Pure decision over sample time: a save is due once the device has been at rest for
/// `afterSeconds` without a break, at most once per `intervalMinutes`, and only when the bias
/// moved by at least `minChange` since the last save (no rewrite of the file for noise).
public struct BiasPersistPolicy: Sendable {
    /// Smallest change worth a write, rad/s (≈ 0.01 °/s, below any gyro's bias stability).
    public static let minChange = 0.0002

    /// The `[calibration] persist_*` settings in force.
    public let settings: Configuration.BiasPersistence
    /// Bias already subtracted before the estimator (the calibration file's); the estimator
    /// learns only what is left, so the value to save is `applied + learnt`.
    public let appliedBias: Vector3
    private var restSince: Nanoseconds?
    private var lastT: Nanoseconds?
    private var lastSaveT: Nanoseconds?
    private var lastSaved: Vector3

    /// A policy for `settings`, starting from the bias the calibration already applies.
    public init(settings: Configuration.BiasPersistence, appliedBias: Vector3) {
        self.settings = settings; self.appliedBias = appliedBias; self.lastSaved = appliedBias
    }

    /// Feeds one attitude's time, rest flag and learnt bias; returns the total bias to save now, if due.
    public mutating func feed(t: Nanoseconds, atRest: Bool, bias learnt: Vector3) -> Vector3? {
        guard settings.enabled else { return nil }
        if let l = lastT, t < l { restSince = nil; lastSaveT = nil }  // a restarted clock
        lastT = t
        guard atRest else { restSince = nil; return nil }
        if restSince == nil { restSince = t }
        guard Double(t - restSince!) * 1e-9 >= settings.afterSeconds else { return nil }
        if let s = lastSaveT, Double(t - s) * 1e-9 < settings.intervalMinutes * 60 { return nil }
        let total = appliedBias + learnt
        guard total.x.isFinite, total.y.isFinite, total.z.isFinite,
            total.norm <= GyroBiasCalibration.largestPlausibleBias
        else { return nil }
        // Decided either way: the next look is an interval away.
        lastSaveT = t
        guard (total - lastSaved).norm >= Self.minChange else { return nil }
        lastSaved = total
        return total
    }
}

/// Saves the learnt gyro bias to the calibration file when `BiasPersistPolicy` says so.
///
/// Wiring: create one per run of the sensor pipeline (only for a live device, not a replay),
/// and call `feed` with every attitude the estimator produces, from the thread that produces
/// them. `feed` is a few comparisons under an uncontended lock; the file write (fsyncs) runs on
/// this object's own serial queue, never on the sampler thread or the event loop.
public final class BiasPersister: Sendable {
    /// The calibration file the bias is saved to.
    public let path: String
    private let policy: Mutex<BiasPersistPolicy>
    private let queue = DispatchQueue(label: "tiltd.bias-persister")
    private let logger: Logger
    private let saved = Mutex<[Vector3]>([])

    /// - Parameters:
    ///   - path: the calibration file (`Configuration.calibrationFile`).
    ///   - appliedBias: the gyro bias the calibrator subtracts before the estimator
    ///     (`config.calibration.gyroBias`); `.zero` if the estimator is fed uncalibrated rates.
    public init(settings: Configuration.BiasPersistence, path: String, appliedBias: Vector3, logger: Logger) {
        self.path = path
        self.policy = Mutex(BiasPersistPolicy(settings: settings, appliedBias: appliedBias))
        self.logger = logger
    }

    /// Convenience: a persister for `config`, or nil when persistence is off or there is no file.
    public static func make(config: Configuration, logger: Logger) -> BiasPersister? {
        guard config.biasPersistence.enabled, let path = config.calibrationFile else { return nil }
        return BiasPersister(
            settings: config.biasPersistence, path: path,
            appliedBias: config.calibration.gyroBias, logger: logger)
    }

    /// Feeds one attitude (sample time, the estimator's rest flag and learnt bias).
    public func feed(t: Nanoseconds, atRest: Bool, bias: Vector3) {
        guard let total = policy.withLock({ $0.feed(t: t, atRest: atRest, bias: bias) }) else { return }
        queue.async { [self] in
            do {
                try CalibrationFile.update(
                    path: path, note: "gyro_bias learnt by the daemon at rest (persist_gyro_bias)"
                ) {
                    $0.gyroBias = total
                }
                saved.withLock { $0.append(total) }
                logger.notice("saved learnt gyro bias", metadata: ["bias": "\(total.array)", "file": "\(path)"])
            } catch {
                logger.warning("cannot save learnt gyro bias: \(error)")
            }
        }
    }

    /// Waits for queued writes (call at shutdown so a due save is not lost).
    public func drain() { queue.sync {} }

    /// Every bias written so far, oldest first.
    public var savedBiases: [Vector3] { saved.withLock { $0 } }
}
