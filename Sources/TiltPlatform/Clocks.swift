// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds: one type from the clock to the wire (`t_ns`: the IMU's sample clock, or GPS time
/// for the line classes that say so). Signed so that differences and offsets need no casts.
public typealias Nanoseconds = Int64

/// Nanoseconds in a second, for the conversions below (so no file spells out its own `1e9`).
public let nanosecondsPerSecond: Nanoseconds = 1_000_000_000

/// `ns` in seconds.
@inlinable
public func seconds(of ns: Nanoseconds) -> Double { Double(ns) / 1e9 }

/// A `timespec` in nanoseconds (nil where it does not fit, outside the years 1678–2262).
@inlinable
public func nanoseconds(of ts: timespec) -> Nanoseconds? {
    nanoseconds(seconds: Int64(ts.tv_sec), nanoseconds: Int64(ts.tv_nsec))
}

/// The daemon's one reading of CLOCK_MONOTONIC: heartbeats, watchdog windows, log repeat
/// windows, uptime and ages. Never used for sample or fix times (those come from the sensor).
public enum MonotonicClock {
    /// CLOCK_MONOTONIC now, nanoseconds since an arbitrary point (boot).
    public static func nanoseconds() -> Nanoseconds {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        // Since boot: centuries away from overflowing.
        return Nanoseconds(ts.tv_sec) * nanosecondsPerSecond + Nanoseconds(ts.tv_nsec)
    }

    /// CLOCK_MONOTONIC now, in seconds.
    public static func seconds() -> Double { TiltPlatform.seconds(of: nanoseconds()) }
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
    public static func nanoseconds() -> Nanoseconds {
        let ts = timespecNow()
        return Nanoseconds(ts.tv_sec) * nanosecondsPerSecond + Nanoseconds(ts.tv_nsec)
    }
}
