// SPDX-License-Identifier: Apache-2.0
import Synchronization
import TiltCore

/// Hands the sampler's samples — mounted (`[imu] mount_matrix`) but not calibrated, what
/// `tiltd calibrate` measures — to short-lived consumers such as a `calibrate.gyro` capture.
///
/// Why a tap on the sampler and not the `sample` lines: those are calibrated (the bias being
/// measured is already subtracted) and may be dropped for a slow loop; the tap sees every
/// sample the device delivers, on the sampler thread, so the daemon can measure while it keeps
/// the IIO buffer (a second reader of the device would be refused). Taps outlive a reload's new
/// pipeline: the service owns them and gives them to every pipeline it starts.
public final class RawSampleTaps: Sendable {
    /// Gets each sample on the sampler thread; returns true when it wants no more. Must be quick.
    public typealias Tap = @Sendable (IMUSample) -> Bool

    private let taps = Mutex<(next: Int, byID: [Int: Tap])>((0, [:]))
    /// Taps installed: the sampler's per-sample check is this one atomic load while it is 0.
    private let count = Atomic<Int>(0)

    /// No taps yet.
    public init() {}

    /// Whether any tap wants samples (cheap; from any thread).
    public var isActive: Bool { count.load(ordering: .relaxed) > 0 }

    /// Installs `tap`; returns its id for `remove`.
    @discardableResult
    public func add(_ tap: @escaping Tap) -> Int {
        taps.withLock { t in
            t.next += 1
            t.byID[t.next] = tap
            count.store(t.byID.count, ordering: .relaxed)
            return t.next
        }
    }

    /// Removes the tap `id` (nothing if it is gone already).
    public func remove(_ id: Int) {
        taps.withLock { t in
            t.byID[id] = nil
            count.store(t.byID.count, ordering: .relaxed)
        }
    }

    /// Gives `sample` to every tap, removing those that are done. On the sampler thread.
    public func feed(_ sample: IMUSample) {
        // The taps run outside the lock: one that takes long cannot block `add` or `remove`.
        let current = taps.withLock { $0.byID }
        for (id, tap) in current where tap(sample) { remove(id) }
    }
}
