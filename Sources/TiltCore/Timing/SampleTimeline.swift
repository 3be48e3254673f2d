// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// Turns a sensor's timestamps into one continuous, never-decreasing time line for everything
/// downstream (the estimator, the game, the wire).
///
/// Why: a device's timestamps can jump. The kernel's IIO timestamp clock is `CLOCK_REALTIME`
/// unless `current_timestamp_clock` is changed, and on a Pi without an RTC NTP steps that clock
/// after boot — by hours or years. A step back would leave the estimator and the game waiting for
/// time to catch up ("older" samples are ignored), a step forward would end a round at once and
/// restart the estimator. Here such a jump is a *discontinuity*: the output continues from the
/// last output by one sample period (by the pause, if the reader saw none arrive for over half a
/// second), and every later sample keeps the new offset,
/// so the estimator, the game and clients never see the jump.
///
/// What counts as a jump (`period` is the nominal sample period, `limit` = `Parameters.periods`
/// periods): a step back by more than `limit`; a step forward by more than `limit` beyond the
/// time that passed on the host between the two samples' arrivals (`arrival`, the reader's
/// monotonic clock), or — for sources that cannot say when samples arrived — beyond one period.
/// With arrival times a real pause (a sensor stall, a slow reader) is kept as it is: the sensor's
/// and the host's clocks agree on it. Smaller steps back (jitter of devices without a timestamp
/// element) are not jumps; their outputs are held just after the previous one.
///
/// Pure: the caller supplies both times. No clock, no I/O.
public struct SampleTimeline: Sendable {
    /// Tunables.
    public struct Parameters: Sendable, Equatable {
        /// The nominal sample period, ns (from the configured rate).
        public var period: Nanoseconds
        /// How many periods a timestamp may disagree with the elapsed time before it is a jump.
        public var periods: Double = 5
        /// The smallest jump reported, ns, whatever the rate (a few periods at 500 Hz is 10 ms,
        /// within the scheduling noise of a loaded machine).
        public var minimumJump: Nanoseconds = 50_000_000
        /// An arrival gap longer than this (and than the jump limit) across a jump is a real
        /// pause and is kept; shorter ones are the reader's latency, ns.
        public var pause: Nanoseconds = 500_000_000
        /// False when the sensor's timestamps are believed to be on the host's monotonic clock
        /// (an IIO device whose `current_timestamp_clock` is `monotonic`, polled reads): that
        /// clock never steps forward beyond the time that passed, so a gap in the data is a real
        /// gap, even when the reader fetched the samples on either side of it late and together,
        /// which the arrival-time test below would take for a step. A step *back* is still a
        /// jump: a monotonic clock never goes back, so one proves the belief wrong (hardware
        /// timestamps that reset with the chip, a clock switch that did not take) — held at the
        /// last output instead, the time line would crawl 1 ns a sample and everything
        /// downstream would freeze. After such a step, forward steps are jumps too.
        public var detectsJumps = true

        /// Parameters for samples every `period` ns.
        public init(period: Nanoseconds) { self.period = max(1, period) }

        /// Parameters for a sampling rate in Hz.
        public init(rateHz: Double) { self.init(period: Nanoseconds(saturating: 1e9 / max(rateHz, 1e-3))) }

        /// The disagreement that makes a jump, ns.
        public var limit: Nanoseconds { max(minimumJump, Nanoseconds(saturating: Double(period) * periods)) }
    }

    /// A timestamp discontinuity, reported once when it happens.
    public struct Jump: Sendable, Equatable {
        /// How far the sensor's clock stepped, ns: its timestamp difference minus the time that
        /// passed (negative = backwards).
        public var step: Nanoseconds
        /// The sensor timestamps on either side of the jump.
        public var from: Nanoseconds, to: Nanoseconds
        /// The output time given to the first sample after it.
        public var at: Nanoseconds

        /// "back 3600.0 s" / "forward 259200.0 s".
        public var summary: String {
            let s = Double(abs(step)) / 1e9
            let text = s >= 10 ? String(Int(saturating: s.rounded())) : String((s * 1000).rounded() / 1000)
            return "\(step < 0 ? "back" : "forward") \(text) s"
        }
    }

    /// A sample's place on the time line.
    public struct Placement: Sendable, Equatable {
        /// The output time, ns: never below the previous output.
        public var t: Nanoseconds
        /// Set on the first sample after a discontinuity.
        public var jump: Jump?
    }

    /// What counts as a jump.
    public var parameters: Parameters
    /// Added to sensor timestamps to get output times; 0 until the first jump.
    public private(set) var offset: Nanoseconds = 0
    /// Discontinuities seen so far.
    public private(set) var jumps = 0

    private var lastSensor: Nanoseconds?
    private var lastOut: Nanoseconds?
    private var lastArrival: Nanoseconds?
    private var resuming = false
    /// Set by a step back on a clock believed monotonic: from then on it is not trusted to be.
    public private(set) var monotonicDisproved = false

    /// A time line before its first sample.
    public init(parameters: Parameters) { self.parameters = parameters }

    /// The source reconnected (a new session, maybe a new device or another reading mode): the
    /// next sample may legitimately be far ahead (time passed while it was away), so a step
    /// forward is accepted once; a step back is still re-anchored so output never decreases.
    public mutating func resume() { resuming = true }

    /// Places one sample. `arrival` is when the reader got it on a monotonic host clock (ns), or
    /// nil when unknown (a recording).
    public mutating func place(_ sensor: Nanoseconds, arrival: Nanoseconds? = nil) -> Placement {
        defer { lastSensor = sensor; lastArrival = arrival }
        guard let prevSensor = lastSensor, let prevOut = lastOut else {
            lastOut = sensor &+ offset
            resuming = false
            return Placement(t: lastOut!, jump: nil)
        }
        let dt = sensor &- prevSensor
        // Host time between the two arrivals: samples read in one batch share an arrival, so
        // this is ≥ 0 and at most the real interval plus the reader's latency.
        let elapsed: Nanoseconds? = arrival.flatMap { a in lastArrival.map { max(0, a &- $0) } }
        let limit = parameters.limit
        let forwardLimit = (elapsed ?? parameters.period) &+ limit
        let detects = parameters.detectsJumps || monotonicDisproved
        let isJump = dt < -limit || (detects && dt > forwardLimit && !resuming)
        if isJump && !detects { monotonicDisproved = true }
        resuming = false
        guard isJump else {
            // Not a jump; small steps back are held just after the previous output.
            let t = max(sensor &+ offset, prevOut &+ 1)
            lastOut = t
            return Placement(t: t, jump: nil)
        }
        // Continue from the last output by one period, or by the time that passed when the
        // reader saw a real pause (longer than `pause`): shorter arrival gaps are batching and
        // scheduling delays of the reader, not time the sensor was silent.
        let paused = (elapsed ?? 0) > max(limit, parameters.pause)
        let advance = paused ? elapsed! : parameters.period
        let t = prevOut &+ advance
        offset = t &- sensor
        lastOut = t
        jumps += 1
        return Placement(t: t, jump: Jump(step: dt &- advance, from: prevSensor, to: sensor, at: t))
    }
}
