// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Logging
import TiltCore
import TiltPlatform

/// What the magnetometer really delivers, for its `streaming` status. Issue 26's polled IMU reads
/// (`IIOPolledPace`) met it first: some drivers' raw read is a one-shot measurement that waits for
/// fresh data. st_magn (LIS3MDL, LSM9DS1's magnetometer) switches the chip on and sleeps two output
/// periods for every axis, so x, y and z at its power-on 1 Hz take 6 s and at 80 Hz still about
/// 75 ms: polled "at 40 Hz", it delivered 5–9 fields a second while its status said 40 (the
/// kernel rig, docs/hardware.md). The reader times its first read; when it is slow and the chip
/// offers a higher rate, it sets that; slow reads then follow one another with no wait; and the
/// rate reported is the one delivered (`DeliveredRate`), with the read time that limits it.
struct MagnetometerPace {
    /// A read of x, y and z slower than this share of the polling period counts as slow.
    static let slowReadShare = 0.5
    /// The weight of each new read in the running read time (an exponential average).
    static let readTimeWeight = 0.2

    /// The polling rate, Hz (the device's `rateHz`).
    let polledHz: Double
    /// What is delivered: nominal `polledHz` until measured (or expected from a slow read).
    private(set) var delivered: DeliveredRate
    /// The running time one read of x, y and z takes, ns.
    private(set) var readNs: Int64 = 0
    /// What the first reads changed ("chip rate raised …"), for the status.
    var tuneNote: String?

    init(polledHz: Double) {
        self.polledHz = polledHz
        delivered = DeliveredRate(nominalHz: polledHz)
    }

    /// The polling period, ns.
    var periodNs: Int64 { Int64(saturating: 1e9 / max(polledHz, 0.1)) }

    /// True when a read of `ns` is slow against the polling period.
    func isSlow(_ ns: Int64) -> Bool { Double(ns) > Self.slowReadShare * Double(periodNs) }

    /// Takes the first reads' time as the read time; when it exceeds the period, the rate to
    /// report is what such reads deliver back to back, before any window measures it.
    mutating func start(readNs ns: Int64) {
        readNs = ns
        if ns > periodNs { _ = delivered.expect(1e9 / Double(ns)) }
    }

    /// Counts one reading that took `ns`, at `now`; returns true when the rate to report changed
    /// (a new `streaming` status is due).
    mutating func add(readNs ns: Int64, at now: Nanoseconds) -> Bool {
        readNs =
            readNs == 0
            ? ns : Int64(saturating: Double(readNs) * (1 - Self.readTimeWeight) + Double(ns) * Self.readTimeWeight)
        return delivered.add(1, at: now) != nil
    }

    /// Starts measuring again (after a gap, e.g. the tuning reads).
    mutating func restart() { delivered.restart() }

    /// The rate to report, Hz.
    var reportedHz: Double { delivered.reportedHz }

    /// The status's note on the rate: `base` ("polled at 60 Hz (device set to 80 Hz)"), what the
    /// first reads changed, and, when fewer fields arrive than polled for, how many and why.
    func note(_ base: String) -> String {
        var parts = [base]
        if let tuneNote { parts.append(tuneNote) }
        if delivered.isShort {
            parts.append(
                "reads deliver \(IIOText.rateText(delivered.reportedHz)) Hz of the \(IIOText.rateText(polledHz)) Hz "
                    + "polled: one read of x, y and z takes \(IIOSession.millisecondsText(readNs)) "
                    + "(the driver's one-shot reads wait for fresh data)")
        }
        return parts.joined(separator: "; ")
    }
}

extension IIOMagnetometerReader {
    /// Times one read; when it is slow and the chip offers a higher rate, raises the chip's rate
    /// and times three more (the median). Returns the pace to stream with.
    func tune(_ d: IIOMagnetometer) throws -> MagnetometerPace {
        var pace = MagnetometerPace(polledHz: d.rateHz)
        func timed() throws -> Int64 {
            let start = MonotonicClock.nanoseconds()
            _ = try d.read()
            return MonotonicClock.nanoseconds() - start
        }
        let before = try timed()
        guard pace.isSlow(before), let raised = d.raiseChipRate(logger: logger) else {
            pace.start(readNs: before)
            return pace
        }
        let after = try [timed(), timed(), timed()].sorted()[1]
        pace.tuneNote =
            "chip rate raised to \(IIOText.rateText(raised)) Hz for quick one-shot reads: one read of x, y and z "
            + "took \(IIOSession.millisecondsText(before)), now \(IIOSession.millisecondsText(after))"
        logger?.notice(
            "slow magnetometer reads: chip rate raised",
            metadata: [
                "device": "\(d.summary)", "read_ms_before": "\(Double(before) / 1e6)",
                "read_ms_after": "\(Double(after) / 1e6)",
            ])
        pace.start(readNs: after)
        return pace
    }
}
