// SPDX-License-Identifier: Apache-2.0
// Conversions of outside numbers that never trap. Swift's `Int64(someDouble)` and `a * b` on
// integers stop the process when the result does not fit: on a value a client sent
// (`attitude_hz` 1e-300 made a period of 1e309 ns), a file held (a GPX year 9999), a driver or
// gpsd reported (`tv_sec` of a broken receiver), that is one line ending the daemon. Every
// conversion of such a value to an integer goes through here; `scripts/check-conversions` finds
// new ones that do not.

extension FixedWidthInteger {
    /// `value` rounded toward zero and clamped to the type's range; NaN is 0.
    ///
    /// For a number from outside (a client, a file, a driver, a peer) or computed from one.
    @inlinable
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Self.max) {
            // Double(Int64.max) rounds up to 2^63, which does not fit: ≥ sends it here too.
            self = .max
        } else if value <= Double(Self.min) {
            self = .min
        } else {
            self.init(value)
        }
    }
}

/// Nanoseconds from whole seconds and a fraction in nanoseconds; nil where the sum does not fit
/// in `Nanoseconds` (outside the years 1678–2262).
@inlinable
public func nanoseconds(seconds: Int64, nanoseconds: Int64) -> Nanoseconds? {
    let (ns, o1) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    let (sum, o2) = ns.addingReportingOverflow(nanoseconds)
    return o1 || o2 ? nil : sum
}

/// Nanoseconds of a duration in seconds, clamped to `0...limit` (NaN is 0): for a timeout or a
/// period from a config key or a peer.
@inlinable
public func nanoseconds(ofSeconds seconds: Double, limit: Nanoseconds = .max) -> Nanoseconds {
    max(0, min(limit, Nanoseconds(saturating: seconds * 1e9)))
}

extension FixedWidthInteger {
    /// `self + other`, clamped to the type's range where `+` would trap: a time plus a duration
    /// from outside (a cooldown of 1e300 s is "never", not the end of the process).
    @inlinable
    public func addingSaturated(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
