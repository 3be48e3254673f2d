// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// Compares a live fix's GPS time with the host's system clock, to catch receivers whose GPS
/// week number rolled over (they report a date 1024 weeks — 19.6 years — in the past) and hosts
/// whose clock is far off (a Pi without a real-time clock before NTP).
///
/// Which of the two clocks is wrong cannot be told here, so the fix passes unchanged, with
/// `Fix.clockOffset` set, and the source's status says so. Only live sources are checked: a
/// replayed track is old by nature.
public enum FixTimeCheck {
    /// Offsets up to this many seconds (a day) are normal clock trouble, not flagged.
    public static let tolerance: Double = 86_400
    /// 1024 weeks in seconds: the GPS week-number rollover period.
    public static let rolloverPeriod: Double = 1024 * 7 * 86_400

    /// Seconds from `systemTime` to the fix time, when beyond `tolerance`; nil otherwise.
    public static func offset(fixTime: Nanoseconds?, systemTime: Nanoseconds) -> Double? {
        guard let fixTime else { return nil }
        let offset = Double(fixTime - systemTime) / 1e9
        return abs(offset) > tolerance ? offset : nil
    }

    /// A sentence for the status: how far off, and whether it looks like a rollover.
    public static func describe(_ offset: Double) -> String {
        let days = abs(offset) / 86_400
        let direction = offset < 0 ? "behind" : "ahead of"
        let periods = (abs(offset) / rolloverPeriod).rounded()
        if offset < 0, periods >= 1, abs(abs(offset) - periods * rolloverPeriod) <= tolerance {
            let weeks = Int(saturating: periods * 1024)
            return
                "fix time is \(weeks) weeks behind the system clock: the receiver's GPS week number rolled over (its firmware needs an update)"
        }
        return
            "fix time is \(cFormat("%.1f", days)) days \(direction) the system clock (check the receiver and the host's clock)"
    }

    /// The system clock (CLOCK_REALTIME) now, ns since the Unix epoch.
    static func systemNow() -> Nanoseconds { SystemClock.nanoseconds() }
}
