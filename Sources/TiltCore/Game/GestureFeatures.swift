// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// What a candidate nod or shake looks like next to what the head did before it: the numbers
/// `GestureClassifier` judges. Read from a `RateHistory` when the detector reports a cycle.
///
/// Rates are about the gesture's own axis (a nod: the horizontal axis the candidate turned
/// most about, found from its own samples, so the same numbers serve a known and an unknown
/// head frame; a shake: up), the other axis (a nod: up; a shake: the horizontal magnitude),
/// and for a nod the horizontal axis at right angles (a sideways lean, ear to shoulder).
public struct GestureFeatures: Sendable, Equatable {
    /// The names of `values`, in order (the bench's CSV header; the classifier's inputs).
    public static let names = [
        "nod", "cycles", "peak_dps", "amplitude_deg", "swing_s", "own_rms", "other_rms", "roll_rms",
        "bg_own_rms", "bg_other_rms", "bg_accel_sd", "accel_sd", "stride_residual", "bg_own_periodicity",
        "bg_accel_periodicity", "run_swings", "stride_match", "bg_period_s",
    ]
    /// One value per name.
    public var values: [Double]

    /// The names of `inputs`.
    public static let inputNames = [
        "nod", "cycles", "log_peak", "log_amplitude", "swing_s", "log_peak_over_bg", "log_rms_over_bg",
        "log_other_over_own", "log_roll_over_own", "log_bg_own", "log_bg_other", "stride_residual",
        "bg_own_periodicity", "run_swings", "stride_match", "period_s",
    ]
    /// What `GestureClassifier` judges: the values as ratios and logarithms (rates in °/s, +1 so
    /// a still head's background does not divide by zero), counts and residuals capped. The
    /// accelerometer's values are left out: judged without them, leave-one-person-out, the trees
    /// answered as many gestures with fewer false decisions, and a game fed no accelerometer (or a
    /// noiseless one) is not judged on numbers it never had (docs/dev/game-everyday.md).
    public var inputs: [Double] {
        let v = values
        func log(_ x: Double) -> Double { Glibc.log(max(x, 1e-3)) }
        return [
            v[0], min(v[1], 4), log(v[2]), log(v[3]), v[4], log(v[2] / (v[8] + 1)), log(v[5] / (v[8] + 1)),
            log((v[6] + 1) / (v[5] + 1)), log((v[7] + 1) / (v[5] + 1)), log(v[8] + 1), log(v[9] + 1),
            min(v[12], 5), v[13], min(v[15], 8), v[16], v[17],
        ]
    }
    /// The value called `name` (nan when there is no such name).
    public subscript(_ name: String) -> Double {
        Self.names.firstIndex(of: name).map { values[$0] } ?? .nan
    }
}

extension RateHistory {
    /// The longest stretch of a run of swings the features read, ns (a five-swing shake or a
    /// two-cycle nod of the head-gestures logs takes 0.8–1.6 s).
    static let longestSpanNs: Nanoseconds = 2_500_000_000
    /// The least history before a gesture for its features, ns: a game begun as the daemon
    /// starts judges its first answers against a shorter background than the 3 s it is trained on.
    static let shortestBackgroundNs: Nanoseconds = 500_000_000
    /// How long before a gesture its background is read, ns (the same 3 s as `GaitBackground`).
    static let backgroundNs: Nanoseconds = 3_000_000_000
    /// The lags tried for the stride (a step of a run to a slow stride), in 10 ms grid steps.
    static let strideLags = Array(stride(from: 30, through: 130, by: 2))
    /// The longest of `strideLags`.
    static let longestLag = 130

    /// The features of `g` (a cycle the detector just reported), or nil when the history does not
    /// reach `shortestBackgroundNs` before it yet, or reaches a gait's background but not the
    /// stride before it (`strideMatch`).
    public func features(of g: HeadGesture) -> GestureFeatures? {
        // The whole run of swings (a cycle after the first spans only its last two), its last
        // `longestSpanNs` at most: a head nodding on and on makes one run of a minute.
        let runStart = min(g.start, g.runStart > 0 ? g.runStart : g.start)
        let start = max(runStart, min(g.start, g.end - Self.longestSpanNs))
        guard let oldest, g.end > start, oldest <= start - Self.shortestBackgroundNs else { return nil }
        let lead = Self.referenceReachNs
        let all = grid(from: start - Self.backgroundNs - lead, to: g.end)
        guard let first = all.firstIndex(where: { $0.t >= start }), all.count - first >= 3 else { return nil }
        let span = all[first...]
        let nod = g.kind == .nod
        // The nod's own axis: the principal axis of its horizontal rate.
        var sxx = 0.0, sxy = 0.0, syy = 0.0
        for b in span { sxx += b.h1 * b.h1; sxy += b.h1 * b.h2; syy += b.h2 * b.h2 }
        let theta = 0.5 * atan2(2 * sxy, sxx - syy)
        let (c, s) = (cos(theta), sin(theta))
        let degrees = 180 / Double.pi
        func own(_ b: Bin) -> Double { (nod ? b.h1 * c + b.h2 * s : b.up) * degrees }
        func other(_ b: Bin) -> Double { (nod ? b.up : (b.h1 * b.h1 + b.h2 * b.h2).squareRoot()) * degrees }
        func roll(_ b: Bin) -> Double { nod ? (-b.h1 * s + b.h2 * c) * degrees : 0 }
        func rms<C: Collection>(_ bins: C, _ f: (Bin) -> Double) -> Double where C.Element == Bin {
            bins.isEmpty ? 0 : (bins.reduce(0) { $0 + f($1) * f($1) } / Double(bins.count)).squareRoot()
        }
        let background = all.filter { $0.t >= start - Self.backgroundNs && $0.t <= start - 100_000_000 }
        let accels = background.map { $0.accel }.filter { $0.isFinite }
        let spanAccels = span.map { $0.accel }.filter { $0.isFinite }
        let runSeconds = Double(g.end - runStart), spanSeconds = Double(g.end - start)
        let swings = max(2, (Double(g.runSwings) * spanSeconds / max(1, runSeconds)).rounded())
        let period = Self.period(background.map(own))
        let match = Self.strideMatch(all.map(own), from: first, period: period)
        // A gait whose stride the history does not reach back over yet (the first seconds of a
        // daemon): not judged until it does, rather than taken for "nothing alike".
        if let period, match.value == 1, first < period * max(1, (all.count - first + period - 1) / period) {
            return nil
        }
        let values: [Double] = [
            nod ? 1 : 0, Double(g.cycle), g.peakDps, g.amplitudeDeg, Double(g.end - start) * 1e-9 / swings,
            rms(span, own), rms(span, other), rms(span, roll), rms(background, own), rms(background, other),
            Self.sd(accels), Self.sd(spanAccels),
            Self.strideResidual(all.map(own), from: first),
            Self.periodicity(background.map(own)), Self.periodicity(accels), swings,
            match.value, Double(match.period) * Double(Self.binNs) * 1e-9,
        ]
        return GestureFeatures(values: values)
    }

    /// The standard deviation of `v` (0 when empty).
    static func sd(_ v: [Double]) -> Double {
        guard v.count > 1 else { return 0 }
        let m = v.reduce(0, +) / Double(v.count)
        return (v.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(v.count)).squareRoot()
    }

    /// How unlike the head's motion one step or stride earlier the candidate is: the smallest,
    /// over the stride lags, of the energy of (rate − rate a lag before) over the energy of the
    /// rate, from `from` to the end. A gait repeats itself (small); a gesture on a still head
    /// leaves nothing a lag before (about 1); one on a gait leaves its own energy over the total.
    static func strideResidual(_ r: [Double], from: Int) -> Double {
        let energy = r[from...].reduce(0) { $0 + $1 * $1 }
        guard energy > 0 else { return 1 }
        var best = Double.infinity
        for lag in strideLags where from - lag >= 0 {
            var e = 0.0
            for k in from..<r.count { let d = r[k] - r[k - lag]; e += d * d }
            best = min(best, e)
        }
        return best.isFinite ? best / energy : 1
    }

    /// How far back the history must reach before a gesture's background for `strideMatch`, ns.
    static let referenceReachNs: Nanoseconds = longestSpanNs + Nanoseconds(longestLag) * binNs

    /// How unlike the same phase of the gait a whole number of strides earlier the candidate is:
    /// the energy of (rate − rate `lag` before) over the energy of both, where `lag` is the
    /// background's period (`period`) times the fewest strides that put the reference entirely
    /// before the candidate (so a gesture's own rhythm cannot match itself, as it can in
    /// `strideResidual`). 0: the gait repeating; 1: nothing alike (a gesture on a still head);
    /// in between, a gesture on a gait. nil period (no rhythm): 1.
    static func strideMatch(_ r: [Double], from: Int, period: Int?) -> (value: Double, period: Int) {
        guard let period, period > 0 else { return (1, 0) }
        let length = r.count - from
        let lag = period * max(1, (length + period - 1) / period)
        guard from - lag >= 0 else { return (1, period) }
        var d = 0.0, e = 0.0
        for k in from..<r.count {
            let x = r[k] - r[k - lag]
            d += x * x
            e += r[k] * r[k] + r[k - lag] * r[k - lag]
        }
        return (e > 0 ? d / e : 1, period)
    }

    /// The stride lag (bins) at which `v` correlates best with itself, when it does (0.3 or more).
    static func period(_ v: [Double]) -> Int? {
        guard v.count > longestLag + 10 else { return nil }
        let m = v.reduce(0, +) / Double(v.count)
        let d = v.map { $0 - m }
        let e = d.reduce(0) { $0 + $1 * $1 }
        guard e > 0 else { return nil }
        var best = (lag: 0, r: 0.3)
        for lag in strideLags {
            var s = 0.0
            for k in lag..<d.count { s += d[k] * d[k - lag] }
            let r = s / e * Double(d.count) / Double(d.count - lag)
            if r > best.r { best = (lag, r) }
        }
        return best.lag > 0 ? best.lag : nil
    }

    /// The largest normalised autocorrelation of `v` over the stride lags (0 when too short):
    /// near 1 for a gait, near 0 for a head at rest.
    static func periodicity(_ v: [Double]) -> Double {
        guard v.count > longestLag + 10 else { return 0 }
        let m = v.reduce(0, +) / Double(v.count)
        let d = v.map { $0 - m }
        let e = d.reduce(0) { $0 + $1 * $1 }
        guard e > 0 else { return 0 }
        var best = 0.0
        for lag in strideLags {
            var s = 0.0
            for k in lag..<d.count { s += d[k] * d[k - lag] }
            best = max(best, s / e * Double(d.count) / Double(d.count - lag))
        }
        return best
    }
}
