// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltPlatform

/// The rate a source really delivers, measured over windows of its own deliveries, so that the
/// rate tiltd reports (`rate_hz` in `hello` and `status`, systemd's STATUS=) is the rate clients
/// get, not the one the driver was set to. A driver may deliver less than its `sampling_frequency`
/// (a one-shot raw read that waits for fresh data, a bus too slow for the rate, an interrupt that
/// fires at another rate than the one configured); a chip's own oscillator is off by a few per cent.
///
/// Pure: the caller passes its monotonic clock's readings.
struct DeliveredRate {
    /// The rate the device was set to, Hz.
    let nominalHz: Double
    /// Within this relative distance of `nominalHz` the nominal rate is reported (a chip's
    /// oscillator tolerance); beyond it, the measured rate.
    static let tolerance = 0.03
    /// How long one measurement lasts; the first one lasts half as long, so a wrong first guess
    /// is put right sooner.
    static let windowNs: Int64 = 2_000_000_000
    /// Deliveries in the first second after a start are not counted: drivers wake their chips
    /// then (a first one-shot read, a FIFO filling), and a judgement that counts it reported
    /// 31.2 Hz of 60 on the kernel rig for a stream that delivered 60.
    static let warmUpNs: Int64 = 1_000_000_000

    /// The rate to report now, Hz: nominal until a window measures otherwise.
    private(set) var reportedHz: Double
    /// The last window's measurement, Hz (nil before the first window ends).
    private(set) var measuredHz: Double?
    private var windowStart: Nanoseconds?
    private var warmUpStart: Nanoseconds?
    private var count = 0

    init(nominalHz: Double) {
        self.nominalHz = nominalHz
        reportedHz = nominalHz
    }

    /// Counts `n` deliveries at `now`; returns the new rate to report when a window ends and the
    /// rate to report has changed, else nil. The first call only starts the window.
    mutating func add(_ n: Int = 1, at now: Nanoseconds) -> Double? {
        guard n > 0 else { return nil }
        guard let start = windowStart else {
            // The first delivery starts the warm-up; the first after it starts the window.
            guard let w = warmUpStart else {
                warmUpStart = now
                return nil
            }
            if now - w >= Self.warmUpNs { windowStart = now }
            return nil
        }
        count += n
        let span = now - start
        guard span >= (measuredHz == nil ? Self.windowNs / 2 : Self.windowNs) else { return nil }
        let measured = Double(count) * 1e9 / Double(span)
        measuredHz = measured
        windowStart = now
        count = 0
        let report =
            abs(measured - nominalHz) <= Self.tolerance * nominalHz ? nominalHz : (measured * 10).rounded() / 10
        let changed = abs(report - reportedHz) > Self.tolerance * reportedHz
        guard changed || (report == nominalHz) != (reportedHz == nominalHz) else { return nil }
        reportedHz = report
        return report
    }

    /// Reports `hz` before any window measured it (polled reads timed slower than the period);
    /// returns true when that changed the rate reported.
    mutating func expect(_ hz: Double) -> Bool {
        let report = abs(hz - nominalHz) <= Self.tolerance * nominalHz ? nominalHz : (hz * 10).rounded() / 10
        defer { reportedHz = report }
        return report != reportedHz
    }

    /// Starts a new window at the next delivery (after a silence, which `no_data` reports).
    mutating func restart() {
        windowStart = nil
        warmUpStart = nil
        count = 0
    }

    /// True when the reported rate is below the nominal one.
    var isShort: Bool { reportedHz < nominalHz }
}
