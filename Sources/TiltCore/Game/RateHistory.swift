// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// The last `seconds` of the head's rate about two horizontal axes and about up, and of the
/// accelerometer's magnitude, in 10 ms bins (each bin the mean of the samples in it, so a
/// 1000 Hz IMU keeps as many bins as a 100 Hz one). `GestureFeatures` reads a candidate nod or
/// shake and what came before it from here. Pure; a fixed ring, constant cost per sample.
public struct RateHistory: Sendable {
    /// One 10 ms bin: its start, the mean rates (rad/s) and |accel| (m/s², nan when unknown).
    struct Bin: Sendable {
        var t: Nanoseconds
        var h1: Double
        var h2: Double
        var up: Double
        var accel: Double
    }
    static let binNs: Nanoseconds = 10_000_000
    /// How far back the ring reaches, s: the features read a gesture of up to 2.5 s, the 3 s
    /// before it, and for the stride's reference up to 2.5 + 1.3 s further back.
    static let seconds = 10.0
    static let capacity = Int(seconds * 1e9) / Int(binNs)  // bounded: constants (10 s of 10 ms bins)

    private var ring: [Bin]
    /// Where the next bin goes, and how many are kept.
    private var head = 0
    private(set) var count = 0
    /// The bin being filled: its start, the sums of its samples, how many, and how many had an
    /// accelerometer reading.
    private struct OpenBin {
        var t: Nanoseconds
        var h1: Double, h2: Double, up: Double, accel: Double
        var n: Double, na: Double

        /// Its means (accel nan without a reading).
        var bin: Bin { Bin(t: t, h1: h1 / n, h2: h2 / n, up: up / n, accel: na > 0 ? accel / na : .nan) }
    }
    private var open: OpenBin?

    /// An empty history.
    public init() {
        ring = Array(repeating: Bin(t: 0, h1: 0, h2: 0, up: 0, accel: .nan), count: Self.capacity)
    }

    /// Forgets everything (a hole in the samples).
    public mutating func reset() { head = 0; count = 0; open = nil }

    /// Adds one sample: rates about two horizontal axes at right angles and about up (rad/s),
    /// and the accelerometer's magnitude (m/s², nil when there is none). Samples older than the
    /// newest bin are ignored; a hole of over 0.25 s starts afresh.
    public mutating func add(t: Nanoseconds, h1: Double, h2: Double, up: Double, accel: Double?) {
        guard h1.isFinite, h2.isFinite, up.isFinite else { return }
        let a = accel.flatMap { $0.isFinite ? $0 : nil }
        if let o = open {
            if t < o.t { return }
            if t - o.t > 250_000_000 { reset() }
        }
        if let o = open, t - o.t < Self.binNs {
            open = OpenBin(
                t: o.t, h1: o.h1 + h1, h2: o.h2 + h2, up: o.up + up, accel: o.accel + (a ?? 0), n: o.n + 1,
                na: o.na + (a == nil ? 0 : 1))
            return
        }
        if let o = open { push(o.bin) }
        open = OpenBin(t: t, h1: h1, h2: h2, up: up, accel: a ?? 0, n: 1, na: a == nil ? 0 : 1)
    }

    private mutating func push(_ b: Bin) {
        ring[head] = b
        head = (head + 1) % Self.capacity
        count = min(count + 1, Self.capacity)
    }

    /// The kept bins, oldest first (the open one included), from `from` to `to` (sample times).
    func bins(from: Nanoseconds, to: Nanoseconds) -> [Bin] {
        var out: [Bin] = []
        out.reserveCapacity(min(count + 1, Int(max(0, to - from) / Self.binNs) + 2))
        for k in 0..<count {
            let b = ring[(head - count + k + Self.capacity) % Self.capacity]
            if b.t >= from && b.t <= to { out.append(b) }
        }
        if let o = open, o.t >= from, o.t <= to { out.append(o.bin) }
        return out
    }

    /// The history from `from` to `to` on a uniform 10 ms grid, interpolated linearly between the
    /// kept bins (an IMU at 30 or 60 Hz fills a bin every 33 or 17 ms: the features' lags and
    /// windows are counted in grid steps, so they must be 10 ms whatever the rate). Starts at the
    /// first kept bin when that is later than `from`.
    func grid(from: Nanoseconds, to: Nanoseconds) -> [Bin] {
        let raw = bins(from: from - 250_000_000, to: to)
        guard let first = raw.first else { return [] }
        var out: [Bin] = []
        var k = 0
        var t = max(from, first.t)
        out.reserveCapacity(Int(max(0, to - t) / Self.binNs) + 1)
        while t <= to {
            while k + 1 < raw.count, raw[k + 1].t <= t { k += 1 }
            let a = raw[k]
            guard k + 1 < raw.count, a.t < t else {
                out.append(Bin(t: t, h1: a.h1, h2: a.h2, up: a.up, accel: a.accel)); t += Self.binNs; continue
            }
            let b = raw[k + 1]
            let u = Double(t - a.t) / Double(b.t - a.t)
            func mix(_ x: Double, _ y: Double) -> Double { x + (y - x) * u }
            let accel =
                a.accel.isFinite && b.accel.isFinite ? mix(a.accel, b.accel) : (a.accel.isFinite ? a.accel : b.accel)
            out.append(Bin(t: t, h1: mix(a.h1, b.h1), h2: mix(a.h2, b.h2), up: mix(a.up, b.up), accel: accel))
            t += Self.binNs
        }
        return out
    }

    /// The oldest time kept.
    var oldest: Nanoseconds? {
        count > 0 ? ring[(head - count + Self.capacity) % Self.capacity].t : open?.t
    }
}
