// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltPlatform

/// Joins the accel stream and the gyro stream of split devices (st_lsm6dsx and the like) into
/// whole IMU samples by timestamp. Both streams run at about the same rate but are read
/// separately, so one may be ahead: readings wait in small queues until a partner within
/// `tolerance` arrives. A reading whose partner cannot come any more (the other stream is already
/// past it) is dropped and counted. Pure logic: no clock, no I/O.
public struct AccelGyroJoiner: Sendable {
    /// Largest timestamp difference that still joins, ns (half a sample period by default).
    public let tolerance: Nanoseconds
    /// Readings kept waiting per stream at most (older ones are dropped when a stream stalls).
    public let capacity: Int
    /// Readings dropped without a partner so far.
    public private(set) var dropped = 0

    private var accel: [(t: Nanoseconds, v: Vector3)] = []
    private var gyro: [(t: Nanoseconds, v: Vector3)] = []

    /// - Parameter rateHz: the streams' sampling rate; a joined accel and gyro reading lie within half a period.
    public init(rateHz: Double, capacity: Int = 256) {
        tolerance = Nanoseconds(saturating: 0.5e9 / max(rateHz, 1e-3))
        self.capacity = capacity
    }

    /// Adds an accelerometer reading; returns the samples it completes (oldest first).
    public mutating func addAccel(t: Nanoseconds, _ v: Vector3) -> [IMUSample] {
        if accel.count >= capacity { accel.removeFirst(); dropped += 1 }
        accel.append((t, v))
        return match()
    }

    /// Adds a gyroscope reading; returns the samples it completes (oldest first).
    public mutating func addGyro(t: Nanoseconds, _ v: Vector3) -> [IMUSample] {
        if gyro.count >= capacity { gyro.removeFirst(); dropped += 1 }
        gyro.append((t, v))
        return match()
    }

    /// Forgets waiting readings (after a reconnect, old halves must not join new ones).
    public mutating func reset() {
        accel.removeAll(keepingCapacity: true)
        gyro.removeAll(keepingCapacity: true)
    }

    private mutating func match() -> [IMUSample] {
        var out: [IMUSample] = []
        var ai = 0, gi = 0
        while ai < accel.count && gi < gyro.count {
            let a = accel[ai], g = gyro[gi]
            if abs(a.t - g.t) <= tolerance {
                // The accel time names the sample: one stream's clock keeps output times monotonic.
                out.append(IMUSample(t: a.t, accel: a.v, gyro: g.v))
                ai += 1; gi += 1
            } else if a.t < g.t {
                ai += 1; dropped += 1  // every later gyro reading is later still: no partner
            } else {
                gi += 1; dropped += 1
            }
        }
        if ai > 0 { accel.removeFirst(ai) }
        if gi > 0 { gyro.removeFirst(gi) }
        return out
    }
}
