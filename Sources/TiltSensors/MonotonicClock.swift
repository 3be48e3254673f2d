import Foundation

/// The daemon's one reading of CLOCK_MONOTONIC: heartbeats, watchdog windows, log repeat
/// windows, uptime and ages. Never used for sample or fix times (those come from the sensor).
public enum MonotonicClock {
    /// CLOCK_MONOTONIC now, nanoseconds since an arbitrary point (boot).
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
