// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// What the wearer is doing, as the game sees it from the same samples (`TiltGame.activity`).
public enum Activity: String, Sendable, CaseIterable {
    /// The head is still (under `still_dps`).
    case still
    /// The head moves, and no gait is seen.
    case moving
    /// Steps: the accelerometer's magnitude repeats at a step or stride period.
    case walking
    /// Steps with running's impacts.
    case running
    /// The whole body moves the head up or down (standing up, sitting down, bending to pick
    /// something up, stairs): answers made of it do not count.
    case wholeBody = "whole_body"
    /// The device lies still, off the head: the game pauses.
    case notWorn = "not_worn"
}

/// Tells walking and running (step cadence from the accelerometer) and a device not worn (a
/// gyroscope stiller than any head) from the samples the game is fed. Pure and streaming; cost
/// per sample is constant (the gait test runs on a 25 Hz resampling, every 0.48 s).
///
/// **Not worn.** A head is never still to the gyroscope: breathing, the pulse and posture move
/// it. On the everyday recordings (glasses on a temple, 100 Hz) the RMS of the rate about its
/// 2 s mean was at least 0.56 °/s in any 2 s of reading, typing or standing, while glasses lying
/// on a table read 0.09–0.11 °/s (the sensor's noise). So: not worn when that RMS, over 1 s
/// blocks, stays under `notWornDps` (0.3 °/s, a factor ~2 from both) for `notWornSeconds` (2 s,
/// two blocks); worn again at the first sample more than 3 × that from the resting rate. A
/// gyroscope noisier than 0.3 °/s at rest never reads as not worn (the game then simply never
/// pauses). Needs a gyroscope.
///
/// **Gait.** Steps shake the head along the body's vertical at the step (or stride) period:
/// |a| (smoothed over 0.1 s) repeats. Over the last 4 s, its autocorrelation (unbiased) peaks
/// at ≥ `gaitCorrelation` (0.5) at a lag of 0.3–1.3 s (steps or strides at 0.8–3.3 Hz: slow
/// walking to sprinting) with an |a| standard deviation ≥ `gaitAccel` (0.5 m/s²): walking;
/// with ≥ `runningAccel` (3 m/s²), running (running lands with 2–3 g; walking and stairs showed
/// 0.7–2.9 m/s² on the everyday set). Known limit: continuous nodding repeats too and reads as
/// walking in part (the head-gestures logs: 10–40 % of 4 s windows).
///
/// **Whole-body moves.** A head answering turns about the neck; standing up, sitting down,
/// bending to the floor, stairs or a rolling chair carry the whole head along. The acceleration
/// in the world frame (the attitude's, gravity removed) is integrated twice from the last still
/// sample; farther than `bodyRadius` (0.35 m) × the angle turned (0.1–0.25 m) the head was
/// carried, not turned about the neck: `whole_body` for 1 s after, and
/// the game takes no answer begun within 1 s of it. Needs a gyroscope.
struct ActivityTracker: Sendable {
    static let notWornDps = 0.3
    static let notWornSeconds = 2.0
    static let gaitCorrelation = 0.5
    static let gaitAccel = 0.5
    static let runningAccel = 3.0
    static let binNs: Nanoseconds = 40_000_000
    static let bins = 100
    /// The gait test runs every 12 bins (0.48 s): its ~2000 multiply-adds cost ~40 ns a sample
    /// at 60 Hz that way (bench/pipeline).
    static let evaluateEvery = 12

    private(set) var activity: Activity = .still
    private(set) var gait: Activity?
    /// The last time the gait test found steps (nil: never). A gesture, a glance or a stop at a
    /// crossing breaks the 4 s autocorrelation for a moment while the wearer walks on
    /// (`onFoot(at:)`).
    private(set) var lastGaitSeen: Nanoseconds?
    /// Whether the last sample let whole-body moves be seen (accelerometer and gyroscope).
    private(set) var measuresBody = false
    /// The last sample at which the head had moved by over `bodyMoveMeters` since it last held
    /// still (nil: never).
    private(set) var lastBodyMove: Nanoseconds?
    // Velocity and displacement of the head (world frame) since it last held still (leaky).
    private var speed3 = Vector3.zero
    private var displacement3 = Vector3.zero
    private var turned = 0.0
    private var scratch = [Double](repeating: 0, count: bins)
    private var factorDt = -1.0
    private var cachedFactors = (leak: 1.0, smoothing: 0.0)
    private var lastT: Nanoseconds?
    // Not worn: the rate's sums over the current 1 s block, the last block's mean, and how many
    // quiet blocks in a row.
    private var blockStart: Nanoseconds?
    private var blockSum = Vector3.zero
    private var blockSquares = 0.0
    private var blockCount = 0
    private var lastBlockMean: Vector3?
    private var quietBlocks = 0
    private var notWorn = false
    // Gait: |a| smoothed, binned at 25 Hz into a ring.
    private var smoothed: Double?
    private var binStart: Nanoseconds?
    private var binSum = 0.0
    private var binCount = 0
    private var ring = [Double](repeating: 0, count: bins)
    private var filled = 0
    private var head = 0
    private var sinceEvaluation = 0

    /// Adds one sample: the rate (rad/s, bias removed; nil without a gyroscope), the
    /// accelerometer (m/s², sensor frame; nil when not given) and whether the head is still.
    mutating func add(t: Nanoseconds, q: Quaternion, rate: Vector3?, accel: Vector3?, still: Bool) {
        defer { lastT = t }
        let dt = lastT.map { min(0.25, max(0, Double(t - $0) * 1e-9)) } ?? 0
        measuresBody = accel != nil && rate != nil
        // Activity needs the whole sample: a caller feeding attitudes and rates alone (a
        // synthetic trace, perfectly still) is never taken for a device put down.
        guard let accel else {
            activity = still ? .still : .moving
            return
        }
        if let w = rate { updateWorn(t: t, w: w) }
        updateGait(t: t, magnitude: accel.norm, dt: dt)
        updateDisplacement(t: t, q: q, accel: accel, rate: rate, dt: dt, still: still)
        let body = lastBodyMove.map { t - $0 < Self.bodyMoveMemoryNs } ?? false
        activity = notWorn ? .notWorn : (gait ?? (body ? .wholeBody : (still ? .still : .moving)))
    }

    private mutating func updateWorn(t: Nanoseconds, w: Vector3) {
        // Worn again at once when a sample leaves the resting rate by over 3 × the limit (the
        // last block's mean stands for what is left of the gyro's bias).
        if notWorn, let m = lastBlockMean, (w - m).norm * 180 / .pi > 3 * Self.notWornDps {
            notWorn = false; quietBlocks = 0
        }
        if blockStart == nil { blockStart = t }
        blockSum += w; blockSquares += w.normSquared; blockCount += 1
        guard t - blockStart! >= 1_000_000_000 else { return }
        // The RMS about the block's mean, °/s.
        let n = Double(blockCount)
        let mean = blockSum / n
        let rmsDps = max(0, blockSquares / n - mean.normSquared).squareRoot() * 180 / .pi
        lastBlockMean = mean
        blockStart = t; blockSum = .zero; blockSquares = 0; blockCount = 0
        quietBlocks = rmsDps < Self.notWornDps ? quietBlocks + 1 : 0
        if Double(quietBlocks) >= Self.notWornSeconds { notWorn = true }
    }

    /// How far the head must move since it last held still to be a whole-body move, m. A head
    /// turning about the neck moves the sensor by centimetres (45° about a pivot 0.1–0.2 m below
    /// it: 0.08–0.15 m of arc); standing up raises the head 0.4–0.6 m, bending to the floor
    /// lowers it 0.5–1 m and moves it forward as much, stairs lift it 0.17 m a step, a chair
    /// rolled or turned carries it along.
    static let bodyMoveMeters = 0.25
    /// Radius between the neck's (≤ 0.2 m from pivot to sensor) and the hips' (≥ 0.5 m), m.
    static let bodyRadius = 0.35
    /// The smallest move taken for the body's, m (below it, attitude errors and sway).
    static let minBodyMoveMeters = 0.1
    /// At rest for the displacement below this rate, °/s: over the 0.5–4 °/s a held head sways,
    /// under the 10–40 °/s a standing or bending body turns it. The cost: a head that never
    /// slows under it (nodding or shaking without pause) drifts, and some of its answers wait
    /// (bench/gestures/run: 210 of the head-gestures logs' 242 decisions kept, all right).
    static let restDps = 10.0
    /// How long after a whole-body move the activity still says so (answers begun in it do not
    /// count), ns.
    static let bodyMoveMemoryNs: Nanoseconds = 1_000_000_000

    private mutating func updateDisplacement(
        t: Nanoseconds, q: Quaternion, accel: Vector3, rate: Vector3?, dt: Double, still: Bool
    ) {
        // The acceleration in the world frame, gravity removed, integrated twice from the last
        // still sample. The integrals leak (2 s) so attitude and calibration errors (2° of
        // tilt error is 0.34 m/s²) cannot add up over a long motion. Walking at a steady pace
        // accelerates little after its first steps, and the leak forgets those.
        // Started over only while the head is at rest (under `restDps`, 10 °/s), not at the
        // game's `still_dps` (20 °/s): a body standing up or bending slowly turns the head at
        // 10–20 °/s, and starting over there lost the motion (the everyday sit-to-stand logs).
        // Needs a gyroscope: without one the attitude is the accelerometer's own direction,
        // low-passed, and what is left of it after removing gravity is that filter's lag behind
        // a tilt, not motion (an ADXL345 tilting the head read as a body bending).
        guard let w = rate else { return }
        if w.norm * 180 / .pi < Self.restDps {
            speed3 = .zero; displacement3 = .zero; turned = 0
            return
        }
        let a = q.rotate(accel) - Vector3(0, 0, 9.80665)
        let leak = factors(dt).leak
        speed3 = speed3 * leak + a * dt
        displacement3 = displacement3 * leak + speed3 * dt
        // The head turning about the neck moves the sensor along an arc of radius ≤ 0.2 m: a
        // move longer than `bodyRadius` × the angle turned (at least 0.1 m, at most
        // `bodyMoveMeters`) was carried by the body, which bends about the hips (≥ 0.5 m below
        // the head). So a bend is seen as it begins, not only once the head has dropped 0.25 m.
        turned = turned * leak + w.norm * dt
        let limit = min(Self.bodyMoveMeters, max(Self.minBodyMoveMeters, Self.bodyRadius * turned))
        if displacement3.norm > limit { lastBodyMove = t }
    }

    /// The per-sample factors for `dt`: the integrals' leak (2 s) and |a|'s smoothing (0.05 s).
    /// Kept for the last dt, since samples mostly come at one rate (exp is the costly part).
    private mutating func factors(_ dt: Double) -> (leak: Double, smoothing: Double) {
        if dt != factorDt {
            factorDt = dt
            cachedFactors = (exp(-dt / 2), 1 - exp(-dt / 0.05))
        }
        return cachedFactors
    }

    private mutating func updateGait(t: Nanoseconds, magnitude: Double, dt: Double) {
        let s = smoothed.map { $0 + (magnitude - $0) * factors(dt).smoothing } ?? magnitude
        smoothed = s
        if binStart == nil { binStart = t }
        binSum += s; binCount += 1
        while t - binStart! >= Self.binNs {
            // A hole in the samples repeats the last value: gaps here are short (< 0.25 s).
            ring[head] = binSum / Double(max(1, binCount))
            head = (head + 1) % Self.bins
            filled = min(Self.bins, filled + 1)
            binStart! += Self.binNs
            binSum = 0; binCount = 0
            sinceEvaluation += 1
        }
        if sinceEvaluation >= Self.evaluateEvery {
            sinceEvaluation = 0
            gait = evaluateGait()
            if gait != nil { lastGaitSeen = t }
        }
    }

    /// Walking or running now, or seen to within `onFootMemoryNs` before `t`: on the everyday
    /// set's walks the gait test says walking 68 % of the time (a nod or shake, a look around
    /// break its 4 s window), and the rules for a head carried by steps must hold meanwhile.
    func onFoot(at t: Nanoseconds) -> Bool {
        activity == .walking || activity == .running || lastGaitSeen.map { t - $0 <= Self.onFootMemoryNs } ?? false
    }
    static let onFootMemoryNs: Nanoseconds = 4_000_000_000

    private mutating func evaluateGait() -> Activity? {
        guard filled == Self.bins else { return nil }
        let n = Self.bins
        let mean = ring.reduce(0, +) / Double(n)
        // The window in time order, mean removed, in a buffer kept between calls (no allocation).
        for i in 0..<n { scratch[i] = ring[(head + i) % n] - mean }
        let x = scratch
        let variance = x.reduce(0) { $0 + $1 * $1 } / Double(n)
        guard variance.squareRoot() >= Self.gaitAccel else { return nil }
        var best = -1.0
        // Lags 0.3–1.3 s at 25 Hz.
        for lag in 8...32 {
            var c = 0.0
            for i in 0..<(n - lag) { c += x[i] * x[i + lag] }
            best = max(best, c / Double(n - lag) / variance)
        }
        guard best >= Self.gaitCorrelation else { return nil }
        return variance.squareRoot() >= Self.runningAccel ? .running : .walking
    }
}
