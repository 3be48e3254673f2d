// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// When the bridge publishes `<prefix>/fix_age`: every `period` once a fix has arrived, with
/// the seconds since the latest one (docs/mqtt.md). A fix arriving does not publish at once: at
/// 1 Hz that would be a message per fix, always reading 0.
struct FixAgeClock {
    /// Nanoseconds between two publications.
    let period: Int64
    private var lastFix: Int64?
    private var lastPublished: Int64 = -(1 << 62)  // long ago, without overflowing a subtraction

    init(period: Int64 = 5_000_000_000) { self.period = period }

    /// A fix arrived at `now` (monotonic nanoseconds).
    mutating func fixArrived(at now: Int64) { lastFix = now }

    /// The age to publish at `now`, seconds to a tenth, or nil: none yet, or not due.
    mutating func due(at now: Int64) -> Double? {
        guard let f = lastFix, now - lastPublished >= period else { return nil }
        lastPublished = now
        return Double((now - f) / 100_000_000) / 10
    }
}
