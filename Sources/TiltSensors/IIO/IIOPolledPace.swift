// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Logging
import TiltCore
import TiltPlatform

/// Polled reads that cannot keep the pace. Some drivers' one-shot raw read switches the sensor on
/// and waits for fresh data: st_lsm6dsx sleeps three to four output periods for every channel, so
/// one sample of six channels at 52 Hz takes about 0.4 s. Reading such a chip at its highest
/// offered rate shortens that wait; the polling pace stays the session's rate. Whatever the read
/// then costs, `DeliveredRate` reports what is really delivered.
extension IIOSession {
    /// A read of every axis slower than this share of the period counts as slow.
    static let slowReadShare = 0.5

    /// Paces polled reads at the rate asked rather than at the chip's nearest offered rate (a
    /// BMI160 asked for 60 Hz runs at 50, its nearest; read at 50, the wearer gets 50): a chip
    /// slower than the rate asked is first set to the lowest offered rate at or above it, since
    /// polling faster than the chip's data only repeats values; a chip that offers none is read at
    /// its own rate.
    func pacePolledReads(logger: Logger?) {
        let asked = configuration.rateHz
        var slowest = Double.infinity
        gyroChipHz = nil
        for d in devices {
            var now = d.rateHz
            let types = [d.accel, d.gyro].compactMap { $0 }
            if now < asked * 0.99,
                let up = IIODeviceSetup.offeredRates(d.ref, types: types).filter({ $0 >= asked }).min()
            {
                now = IIODeviceSetup.setRate(up, on: d.ref, types: types, logger: logger)
            }
            if d.gyro != nil { gyroChipHz = now }
            slowest = min(slowest, now)
        }
        rateHz = min(asked, slowest)
        deliveredRate = DeliveredRate(nominalHz: rateHz)
    }

    /// Times a few reads; when they are slow and a device offers a higher sampling rate, sets it;
    /// when split devices are still slow, reads them side by side; and times again. Returns true
    /// when it changed something (the status message says what).
    func tunePolledReads(period: Int64, logger: Logger?) throws -> Bool {
        // One read first: a fast one is the common case and costs nothing; a slow one (0.6 s at
        // st_lsm6dsx's power-on 12.5 Hz) should not be repeated before the rate is raised.
        let before = try medianReadNs(of: 1)
        lastReadNs = before
        func isSlow(_ ns: Int64) -> Bool { Double(ns) > Self.slowReadShare * Double(period) }
        guard isSlow(before) else { return false }
        var changes: [String] = []
        var raised: [String] = []
        for d in devices {
            let types = [d.accel, d.gyro].compactMap { $0 }
            guard let top = IIODeviceSetup.offeredRates(d.ref, types: types).max(), top > d.rateHz else { continue }
            let now = IIODeviceSetup.setRate(top, on: d.ref, types: types, logger: logger)
            if now > d.rateHz { raised.append("\(d.ref.name) at \(IIOText.rateText(now)) Hz") }
            if d.gyro != nil { gyroChipHz = now }
        }
        if !raised.isEmpty { changes.append("chip rate raised (\(raised.joined(separator: ", ")))") }
        if polled.count > 1, try isSlow(medianReadNs()) {
            sideBySide = IIOSideBySideReads(polled)
            changes.append("\(devices.map(\.ref.name).joined(separator: " and ")) read side by side")
        }
        guard !changes.isEmpty else { return false }
        let after = try medianReadNs()
        lastReadNs = after
        tuneNote =
            "\(changes.joined(separator: "; ")) for quick one-shot reads: one read of every "
            + "axis took \(Self.millisecondsText(before)), now \(Self.millisecondsText(after))"
        logger?.notice(
            "slow polled reads: chip rate raised",
            metadata: [
                "device": "\(deviceSummary)", "read_ms_before": "\(Double(before) / 1e6)",
                "read_ms_after": "\(Double(after) / 1e6)",
            ])
        return true
    }

    /// The span a polled gyro reading averages, as a share of the polling period: the chip's own
    /// output period over the poll's (`AttitudeEstimator.Parameters.rateWindow`). A chip raised
    /// to 2000 Hz and read at 60 gives 0.03: each reading is the rate of the moment it was read,
    /// not its mean since the last read, so the estimator interpolates between readings rather
    /// than holding the last one over the whole step (which, over the gaps a busy machine leaves
    /// between polls, turned a fast turn into over a degree of error). Nil when buffered (a scan
    /// per chip sample: the default holds) or without a gyroscope.
    var polledRateWindow: Double? {
        guard !polled.isEmpty, hasGyro, let chip = gyroChipHz, chip > 0, rateHz > 0 else { return nil }
        return min(1, rateHz / chip)
    }

    /// The median of `count` timed reads of every axis, ns.
    private func medianReadNs(of count: Int = 3) throws -> Int64 {
        var times: [Int64] = []
        for _ in 0..<count {
            let start = MonotonicClock.nanoseconds()
            _ = try readPolled(at: start)
            times.append(MonotonicClock.nanoseconds() - start)
        }
        return times.sorted()[count / 2]
    }

    /// "410 ms", "2.5 ms".
    static func millisecondsText(_ ns: Int64) -> String {
        let ms = Double(ns) / 1e6
        return ms >= 10 ? "\(Int(saturating: ms.rounded())) ms" : "\((ms * 10).rounded() / 10) ms"
    }

    /// One reading of every polled device: side by side when `sideBySide` is set.
    func readPolled(at t: Nanoseconds) throws -> [IIOReading] {
        if let sideBySide { return try sideBySide.read(at: t) }
        return try polled.map { try $0.read(at: t) }
    }
}
