// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc

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

/// The daemon's one reading of CLOCK_REALTIME, for what is about the calendar: log timestamps on
/// a terminal, and checking a GPS fix's time against the host's. Never used to time anything.
public enum SystemClock {
    /// CLOCK_REALTIME now.
    public static func timespecNow() -> timespec {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return ts
    }

    /// CLOCK_REALTIME now, nanoseconds since the Unix epoch.
    public static func nanoseconds() -> Int64 {
        let ts = timespecNow()
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
